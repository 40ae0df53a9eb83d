"""Policy rules over manifests and cloud resources, shared by the CrossGuard pack and `python -m components check`.

Pure: each rule looks at plain subjects (Kubernetes objects as dicts, cloud facts) and returns findings.
"""

from __future__ import annotations

from components.rules import attachment, cloud, workloads
from components.rules.rule import Finding, Rule, Settings, Subject

RULES: tuple[Rule, ...] = (*workloads.RULES, *attachment.RULES, *cloud.RULES)
"""Every rule, by id order of definition."""


def run(subjects: list[Subject], settings: Settings | None = None) -> list[Finding]:
    """Every finding of every rule over these subjects."""
    settings = settings or Settings()
    return [finding for rule in RULES for finding in rule.run(subjects, settings)]


def by_id(rule_id: str) -> Rule:
    """A rule by its id."""
    return next(r for r in RULES if r.id == rule_id)


__all__ = ["RULES", "Finding", "Rule", "Settings", "Subject", "by_id", "run"]
