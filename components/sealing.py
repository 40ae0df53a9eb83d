"""Pulumi secrets in a stack's config: the leaves a stack file marks `{secure: ...}`, sealed before anything reads
them, so a secret's plaintext (which Pulumi's config hands a program) reaches only the job's own Secret."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from components.errors import ConfigError, Issue
from components.models.envsource import SECRET_WAYS, Sealed


def secure_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Where a stack file's config holds `{secure: ...}` leaves, as key paths."""
    found: list[tuple[str | int, ...]] = []
    _collect(value, path, found)
    return found


def _collect(value: Any, path: tuple[str | int, ...], found: list[tuple[str | int, ...]]) -> None:
    if isinstance(value, dict):
        if len(value) == 1 and "secure" in value:
            found.append(path)
            return
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        if isinstance(item, dict | list):  # a scalar holds no secure leaf: no path made for it (most of a config)
            _collect(item, (*path, key), found)


def secure_keys(value: Any) -> frozenset[str]:
    """Where a stack file's config holds `{secure: ...}` leaves, as config paths (`jobs[0].env.HF_TOKEN`)."""
    return frozenset(_show(path) for path in secure_paths(value))


def _show(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))


def _env_leaf(path: tuple[str | int, ...]) -> bool:
    return len(path) == 4 and isinstance(path[1], int) and path[2] == "env"


def misplaced(jobs: Any) -> list[Issue]:
    """A secure value in a job anywhere but an env value, which nothing would keep secret."""
    return [
        Issue(_show(path), f"is a Pulumi secret, which a job takes only as an env value: {SECRET_WAYS}")
        for path in secure_paths(jobs, ("jobs",))
        if not _env_leaf(path)
    ]


def seal_jobs(
    raw: Mapping[str, Any], file_raw: Mapping[str, Any] | None, wrap: Callable[[Any], Any], *, jobs_secret: bool
) -> dict[str, Any]:
    """`raw` (config as Pulumi reads it, secure leaves in plaintext) with each job's secure env value sealed, its
    plaintext wrapped by `wrap` (pulumi.Output.secret); ConfigError for a secure value anywhere else in a job, or
    for secret jobs whose stack file is missing (nothing would say which value is the secret)."""
    if "jobs" not in raw or not isinstance(raw["jobs"], list):
        return dict(raw)
    if file_raw is None:
        if jobs_secret:
            raise ConfigError(
                Issue(
                    "jobs",
                    "holds a Pulumi secret, but the stack file that says which value is missing: run from "
                    "the project folder, where Pulumi.<stack>.yaml is",
                )
            )
        return dict(raw)
    issues = misplaced(file_raw.get("jobs"))
    if issues:
        raise ConfigError(issues)
    jobs = [dict(j) if isinstance(j, dict) else j for j in raw["jobs"]]
    for path in secure_paths(file_raw.get("jobs"), ("jobs",)):
        index, name = path[1], str(path[3])
        job = jobs[index] if isinstance(index, int) and index < len(jobs) else None
        if isinstance(job, dict) and isinstance(job.get("env"), dict) and name in job["env"]:
            job["env"] = {**job["env"], name: Sealed(wrap(job["env"][name]))}
    return {**raw, "jobs": jobs}
