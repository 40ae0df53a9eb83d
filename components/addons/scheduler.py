"""The gang scheduler: Volcano or Kueue, and the PriorityClasses jobs name."""

from __future__ import annotations

from typing import Any

from components.addons.install import HelmRelease
from components.manifests.meta import metadata
from components.validation import Stack
from components.versions import KUEUE, VOLCANO

VOLCANO_NAME = "volcano"
KUEUE_NAME = "kueue"


def volcano(stack: Stack) -> HelmRelease | None:
    """Volcano, when it is the scheduler."""
    if stack.scheduler != "volcano":
        return None
    return HelmRelease(VOLCANO_NAME, VOLCANO, "volcano-system", {"basic": {"image_pull_policy": "IfNotPresent"}})


def kueue(stack: Stack) -> HelmRelease | None:
    """Kueue, when it is the scheduler (its default integrations cover Job, PyTorchJob, TFJob, MPIJob)."""
    if stack.scheduler != "kueue":
        return None
    return HelmRelease(KUEUE_NAME, KUEUE, "kueue-system", {})


def priority_classes(stack: Stack) -> list[dict[str, Any]]:
    """The PriorityClasses the stack declares."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": metadata(p.name),
            "value": p.value,
            "preemptionPolicy": "PreemptLowerPriority" if p.preempting else "Never",
            "globalDefault": False,
            "description": p.description or f"gpu-training priority {p.value}",
        }
        for p in stack.config.scheduler.priority_classes
    ]
