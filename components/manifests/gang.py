"""Gang scheduling: a multi-node job starts whole or not at all (Volcano PodGroups, Kueue queues)."""

from __future__ import annotations

from typing import Any

from components.manifests.meta import job_labels, metadata
from components.manifests.plan import JobPlan

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def scheduling_policy(plan: JobPlan, min_available: int) -> dict[str, Any] | None:
    """The Training/MPI Operator's runPolicy.schedulingPolicy under Volcano, else None."""
    if plan.scheduler != "volcano":
        return None
    policy: dict[str, Any] = {"minAvailable": min_available, "queue": plan.queue}
    if plan.spec.scheduler.priority_class:
        policy["priorityClass"] = plan.spec.scheduler.priority_class
    return policy


def queue_labels(plan: JobPlan) -> dict[str, str]:
    """The Kueue queue label of the job object, when Kueue admits it."""
    return {KUEUE_QUEUE_LABEL: plan.queue} if plan.scheduler == "kueue" and plan.queue else {}


def podgroup(plan: JobPlan, name: str, min_member: int) -> dict[str, Any]:
    """A Volcano PodGroup for pods that no operator groups (the indexed launcher)."""
    spec: dict[str, Any] = {"minMember": min_member, "queue": plan.queue}
    if plan.spec.scheduler.priority_class:
        spec["priorityClassName"] = plan.spec.scheduler.priority_class
    if plan.placement is not None and plan.placement.tier is not None:
        spec["networkTopology"] = plan.placement.volcano_network_topology()
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": metadata(name, plan.namespace, labels=job_labels(plan.name)),
        "spec": spec,
    }
