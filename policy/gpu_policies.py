"""The CrossGuard policies: one stack policy per rule of components.rules, over a preview's resources.

Importing this module starts nothing; `__main__.py` builds the pack the engine runs.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the rules live in the repository's components/

from components.rules import RULES, Finding, Rule
from components.rules.config import (
    ALLOW_HOST_NETWORK,
    ALLOWED_REGISTRIES,
    MIN_SHM,
    PRIVILEGED_EXEMPT,
    PRODUCTION,
    REQUIRE_PINNED,
    settings,
)
from components.rules.rule import PRIVILEGED_NAMESPACES, Settings
from components.rules.subjects import from_resources

ADVICE = "gpu-training-advice"
"""The advisory policy that reports what mandatory rules find that is advice, not a defect (a policy has one
enforcement level, so advice cannot block the update)."""
CLUSTERS = {"aws:eks/cluster:Cluster": "eks", "gcp:container/cluster:Cluster": "gke"}

_LEVELS = {
    "mandatory": EnforcementLevel.MANDATORY,
    "advisory": EnforcementLevel.ADVISORY,
    "disabled": EnforcementLevel.DISABLED,
}
_SEVERITY = {"low": Severity.LOW, "medium": Severity.MEDIUM, "high": Severity.HIGH, "critical": Severity.CRITICAL}
_SCHEMAS: dict[str, dict[str, Any]] = {
    ALLOWED_REGISTRIES[0]: {
        ALLOWED_REGISTRIES[1]: {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Registries images may come from (empty: any).",
        },
        REQUIRE_PINNED[1]: {
            "type": "boolean",
            "default": False,
            "description": "An image without a version tag or digest is a violation (else advice).",
        },
    },
    MIN_SHM[0]: {
        MIN_SHM[1]: {
            "type": "string",
            "default": "1Gi",
            "description": "The smallest /dev/shm a multi-node job may mount.",
        }
    },
    ALLOW_HOST_NETWORK[0]: {
        ALLOW_HOST_NETWORK[1]: {"type": "boolean", "default": False, "description": "Allow hostNetwork and hostIPC."}
    },
    PRIVILEGED_EXEMPT[0]: {
        PRIVILEGED_EXEMPT[1]: {
            "type": "array",
            "items": {"type": "string"},
            "default": list(PRIVILEGED_NAMESPACES),
            "description": "Namespaces whose pods may run privileged containers (node agents); the list replaces "
            "the default, so keep its names when adding one.",
        }
    },
    PRODUCTION[0]: {PRODUCTION[1]: {"type": "boolean", "default": False, "description": "This is a production stack."}},
}


def plain(value: Any) -> Any:
    """A preview's property value as plain data; values unknown until the update becomes None."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in value:
            try:
                out[key] = plain(value[key])
            except UnknownValueError:
                out[key] = None
        return out
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items: list[Any] = []
        for index in range(len(value)):
            try:
                items.append(plain(value[index]))
            except UnknownValueError:
                items.append(None)
        return items
    return value


def resources(args: StackValidationArgs) -> list[SimpleNamespace]:
    """The stack's resources with plain properties."""
    return [
        SimpleNamespace(
            resource_type=r.resource_type,
            props=plain(r.props),
            urn=r.urn,
            name=r.name,
            opts=r.opts,
            dependencies=r.dependencies,
        )
        for r in args.resources
    ]


def gang_scheduler(found: list[SimpleNamespace]) -> str:
    """The gang scheduler the stack installs, seen from its Helm releases and queue objects."""
    charts = {str(r.props.get("chart", "")).rsplit("/", 1)[-1] for r in found if r.resource_type.endswith(":Release")}
    types = {r.resource_type for r in found}
    if "volcano" in charts or any("scheduling.volcano.sh" in t for t in types):
        return "volcano"
    if "kueue" in charts or any("kueue.x-k8s.io" in t for t in types):
        return "kueue"
    return "none"


def cluster(found: list[SimpleNamespace]) -> str | None:
    """The cluster the stack makes (EKS, GKE), or None when it makes none (an existing cluster's, or unknown)."""
    return next((CLUSTERS[r.resource_type] for r in found if r.resource_type in CLUSTERS), None)


def _findings(rule: Rule, args: StackValidationArgs, config: dict[str, Any]) -> tuple[list[Finding], list[str]]:
    found = resources(args)
    rule_settings: Settings = settings(config, gang_scheduler=gang_scheduler(found), cluster=cluster(found))
    errors: list[str] = []
    return rule.run(from_resources(found), rule_settings, errors), errors


def policy(rule: Rule) -> StackValidationPolicy:
    """The stack policy of one rule: its findings at the rule's level (its advice goes to ADVICE)."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        findings, errors = _findings(rule, args, {rule.id: dict(args.get_config() or {})})
        for finding in findings:
            if rule.enforcement in (finding.enforcement, "advisory"):
                report(f"{finding.subject}: {finding.message}. Fix: {finding.fix}", finding.urn)
        for error in errors:
            report(f"{error}: the review could not read it", None)

    schema = _SCHEMAS.get(rule.id)
    return StackValidationPolicy(
        name=rule.id,
        description=f"{rule.reason} Fix: {rule.fix}",
        validate=validate,
        enforcement_level=_LEVELS[rule.enforcement],
        config_schema=PolicyConfigSchema(properties=schema) if schema else None,
        severity=_SEVERITY[rule.severity],
    )


def advice() -> StackValidationPolicy:
    """The advisory policy reporting the advice of every mandatory rule."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for rule in RULES:
            if rule.enforcement != "mandatory":
                continue
            findings, _ = _findings(rule, args, {})
            for finding in findings:
                if finding.enforcement == "advisory":
                    report(f"{finding.rule}: {finding.subject}: {finding.message}. Fix: {finding.fix}", finding.urn)

    return StackValidationPolicy(
        name=ADVICE,
        description="Advice from the mandatory rules (unpinned images, tolerations the cluster may add, a 1-GPU pod's "
        "/dev/shm, ...): worth a look, never blocking.",
        validate=validate,
        enforcement_level=EnforcementLevel.ADVISORY,
        severity=Severity.LOW,
    )


POLICIES = [*(policy(rule) for rule in RULES), advice()]
"""Every rule as a policy, named by its id, and the advice of the mandatory ones."""
