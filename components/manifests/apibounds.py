"""Counts render derives from a job's that the API bounds tighter than an int32 field (every count of the config
model is one already, components/models/base.py Count): what the objects would state past their bound."""

from __future__ import annotations

from components.errors import Issue
from components.models.base import INT32_MAX
from components.models.job import TrainingJobSpec

MAX_INDEXED_PARALLELISM = 100_000
"""The most pods an Indexed Job runs at once (kubernetes v1.35.4 pkg/apis/batch/validation/validation.go:45, checked
at :232)."""
_SCALED = ("pytorch", "tensorflow", "indexed")
"""Launchers whose object states backoffLimit as the job's retries times its pods (components/manifests/failure.py)."""


def issues(spec: TrainingJobSpec, path: str = "") -> list[Issue]:
    """An Indexed Job past the API's parallelism; a backoffLimit whose scaled value passes an int32."""
    p = f"{path}." if path else ""
    found: list[Issue] = []
    if spec.launcher == "indexed" and spec.world_nodes > MAX_INDEXED_PARALLELISM:
        found.append(
            Issue(
                f"{p}nodes",
                f"{spec.world_nodes} nodes, past the {MAX_INDEXED_PARALLELISM:,} pods an Indexed Job may run at once "
                "(the API server's bound on its parallelism): ask for fewer",
            )
        )
    scaled = spec.backoff_limit * spec.most_nodes
    if spec.launcher in _SCALED and scaled > INT32_MAX:
        found.append(
            Issue(
                f"{p}backoffLimit",
                f"the {spec.launcher} launcher states backoffLimit as retries x pods, {spec.backoff_limit} x "
                f"{spec.most_nodes} = {scaled}, past {INT32_MAX} (an int32): ask for at most "
                f"{INT32_MAX // spec.most_nodes} retries",
            )
        )
    return found
