"""Whether GPU pods can land on the GPU nodes they need: they tolerate those nodes' taints.

A GPU request already holds a pod to nodes that have GPUs, so no node selector is required. What keeps a pod
off its nodes is a taint it does not tolerate, and it then stays Pending. EKS and GKE run Kubernetes's
ExtendedResourceToleration admission plugin, which gives a pod requesting `nvidia.com/gpu` (or any
extended resource) a toleration of the taint keyed by that resource.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.nodecheck import CHECK_LABEL
from components.manifests.pod import GPU_RESOURCE, tolerates
from components.models.nodepool import LEGACY_NODE_CHECK_TAINT_KEY, NODE_CHECK_FAILED_TAINT, NODE_CHECK_TAINT, Taint
from components.rules.attachment import constraints, selects
from components.rules.pods import resources, templates
from components.rules.podtemplate import PodTemplate
from components.rules.review import once
from components.rules.rule import Advice, Rule, Settings
from components.rules.subject import Subject
from components.wellknown import GPU_TAINT_KEY

ADDS_TOLERATIONS = ("eks", "gke")
"""Clusters that run the ExtendedResourceToleration admission plugin (EKS: every platform version's admission
controllers; GKE: GPU node pools are tainted nvidia.com/gpu and GKE adds the toleration)."""
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
_BLOCKING = ("NoSchedule", "NoExecute")


def _taint(value: Any) -> dict[str, str] | None:
    """A pool's taint in the Kubernetes shape (clouds spell the effect NO_SCHEDULE); None when not blocking."""
    if not isinstance(value, Mapping):
        return None
    effect = _EFFECTS.get(str(value.get("effect")), str(value.get("effect")))
    if effect not in _BLOCKING:
        return None
    return {"key": str(value.get("key", "")), "value": str(value.get("value") or ""), "effect": effect}


def _tolerations(t: PodTemplate, settings: Settings) -> list[dict[str, Any]]:
    """The pod's tolerations, with those the cluster's admission adds for its extended resources."""
    own = [x for x in t.spec.get("tolerations", []) if isinstance(x, dict)]
    if settings.cluster not in ADDS_TOLERATIONS:
        return own
    requested = {r for c in t.spec.get("containers", []) for r in resources(c) if "/" in r}
    return own + [{"key": r, "operator": "Exists", "effect": "NoSchedule"} for r in sorted(requested)]


@once
def _gpu_pools(subjects: list[Subject]) -> list[tuple[str, list[dict[str, str]], list[Any]]]:
    """The GPU pools among the subjects: name, blocking taints and the selectors that pick their nodes."""
    found = []
    for s in subjects:
        if s.kind == "NodePool" and s.data.get("gpus") and "selectors" in s.data:
            taints = [x for x in map(_taint, s.data.get("taints") or []) if x]
            selectors = [x for x in s.data.get("selectors") or [] if isinstance(x, Mapping)]
            found.append((s.key.split("/", 1)[-1], taints, selectors))
    return found


def gpu_placement(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """GPU pods tolerate the taints of the GPU nodes they need."""
    pools = _gpu_pools(subjects)
    for t in templates(subject.data, subjects):
        if not t.gpus or t.partial:
            continue
        tolerations = _tolerations(t, settings)
        if pools:
            wanted = constraints(t.spec)
            chosen = [p for p in pools if any(selects(wanted, s) for s in p[2])] or pools
            blocked = [(name, [x for x in taints if not tolerates(tolerations, x)]) for name, taints, _ in chosen]
            if all(missing for _, missing in blocked):
                name, missing = blocked[0]
                taint = missing[0]
                yield (
                    f"{t.role} pods tolerate no {taint['key']}={taint['value']}:{taint['effect']} taint of pool "
                    f"{name}"
                    + (f" (nor the taints of {len(blocked) - 1} other GPU pools)" if len(blocked) > 1 else "")
                    + ", so they stay Pending"
                )
        elif not tolerates(tolerations, {"key": GPU_TAINT_KEY, "value": "true", "effect": "NoSchedule"}):
            yield Advice(
                f"{t.role} pods tolerate no {GPU_TAINT_KEY} taint: GPU nodes tainted so keep them Pending, unless the "
                "cluster adds the toleration itself (EKS and GKE do)"
            )


_HELD = tuple(
    {"key": t.key, "value": t.value, "effect": t.effect}
    for t in (
        NODE_CHECK_TAINT,
        NODE_CHECK_FAILED_TAINT,
        # Nodes that joined under an earlier release's key.
        Taint(key=LEGACY_NODE_CHECK_TAINT_KEY, value="pending"),
        Taint(key=LEGACY_NODE_CHECK_TAINT_KEY, value="failed"),
    )
)


def unverified_nodes(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """GPU pods do not tolerate the node check's taint, which holds a node until its check passes (or after it
    failed): nothing but the check itself may run on an unverified node."""
    for t in templates(subject.data, subjects):
        labels = t.metadata.get("labels") or {}
        if CHECK_LABEL in labels or not any(GPU_RESOURCE in resources(c) for c in t.containers):
            continue
        own = [x for x in t.spec.get("tolerations", []) if isinstance(x, dict)]
        held = [taint for taint in _HELD if tolerates(own, taint)]
        if held:
            taint = held[0]
            yield (
                f"{t.role} pods tolerate the node check's {taint['key']}={taint['value']}:{taint['effect']} taint, "
                "so they can land on a GPU node whose check has not passed"
            )


RULES: tuple[Rule, ...] = (
    Rule(
        "gpu-placement",
        "high",
        "mandatory",
        (gpu_placement.__doc__ or "").strip(),
        "tolerate the GPU pool's taints (a TrainingJob on the pool does); on EKS and GKE the nvidia.com/gpu "
        "toleration is added for you",
        ("*",),
        gpu_placement,
        gpu_only=True,
    ),
    Rule(
        "unverified-nodes",
        "high",
        "mandatory",
        (unverified_nodes.__doc__ or "").strip(),
        f"drop the toleration of {NODE_CHECK_TAINT.key} or {NODE_CHECK_FAILED_TAINT.key} (a TrainingJob never adds "
        "one); a toleration with no key and "
        "`operator: Exists` tolerates it too: list the taints to tolerate instead",
        ("*",),
        unverified_nodes,
        gpu_only=False,  # its own test counts GPUs in init containers too
    ),
)
