"""Policy rules over manifests and cloud resources, shared by the CrossGuard pack and `python -m components check`.

Pure: each rule looks at plain subjects (Kubernetes objects as dicts, cloud facts) and returns findings.
"""

from __future__ import annotations

from components.rules import (
    attachment,
    checkpoints,
    cloud,
    credentials,
    documents,
    environment,
    launchers,
    nvlink,
    placement,
    processes,
    recovery,
    review,
    workloads,
)
from components.rules.rule import Finding, Rule, Settings
from components.rules.subject import Subject

RULES: tuple[Rule, ...] = (
    *placement.RULES,
    *nvlink.RULES,
    *workloads.RULES,
    *attachment.RULES,
    *processes.RULES,
    *environment.RULES,
    *checkpoints.RULES,
    *documents.RULES,
    *cloud.RULES,
    *recovery.RULES,
    *credentials.RULES,
    *launchers.RULES,
)
"""Every rule, by id order of definition."""


def run(subjects: list[Subject], settings: Settings | None = None, errors: list[str] | None = None) -> list[Finding]:
    """Every finding of every rule over these subjects. With `errors`, a rule that fails on an object is noted
    there and the review goes on; without, its exception propagates."""
    settings = settings or Settings()
    with review.review():
        return [finding for rule in RULES for finding in rule.run(subjects, settings, errors)]


def by_id(rule_id: str) -> Rule:
    """A rule by its id."""
    return next(r for r in RULES if r.id == rule_id)


__all__ = ["RULES", "Finding", "Rule", "Settings", "Subject", "by_id", "run"]
