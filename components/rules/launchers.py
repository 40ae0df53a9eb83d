"""Jobs on the Kubeflow v1 operators' path: a PyTorchJob, TFJob or MPIJob still runs, but the ecosystem is
retiring it (components/launchers.py says why and what replaces each)."""

from __future__ import annotations

from collections.abc import Iterator

from components.launchers import LEGACY
from components.rules.rule import Rule, Settings
from components.rules.subject import Subject

V1_GROUP = "kubeflow.org"
_BY_KIND = {legacy.kind: legacy for legacy in LEGACY.values()}


def legacy_launcher(subject: Subject, __: list[Subject], ___: Settings) -> Iterator[str]:
    """A training job is a Trainer v2 TrainJob, not a Kubeflow v1 PyTorchJob, TFJob or MPIJob (the legacy path)."""
    if not str(subject.data.get("apiVersion", "")).startswith(f"{V1_GROUP}/") or subject.kind not in _BY_KIND:
        return
    legacy = _BY_KIND[subject.kind]
    yield (
        f"{legacy.a_kind} runs on {legacy.operator}, the legacy path ({legacy.status}); its TrainJob equivalent is "
        f"launcher: trainjob, {legacy.equivalent}"
    )


RULES: tuple[Rule, ...] = (
    Rule(
        "legacy-launcher",
        "low",
        "advisory",
        (legacy_launcher.__doc__ or "").strip(),
        "name launcher: trainjob with the runtime of the job's family (docs/trainjob.md's migration table maps "
        "every field); a job Trainer v2.3 cannot run (elastic, envFrom) stays on its v1 launcher",
        tuple(_BY_KIND),
        legacy_launcher,
        gpu_only=False,
    ),
)
