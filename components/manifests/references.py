"""The platform objects a job uses, so it waits for exactly those (and a platform change elsewhere leaves it be)."""

from __future__ import annotations

from components.manifests.plan import JobPlan


def references(plan: JobPlan) -> list[str]:
    """Keys (Kind/namespace/name) of the objects the job's pods and scheduling refer to."""
    keys = [f"Namespace/{plan.namespace}"]
    keys += [f"PersistentVolumeClaim/{plan.namespace}/{v.claim}" for v in plan.spec.mounts]
    if plan.spec.service_account:
        keys.append(f"ServiceAccount/{plan.namespace}/{plan.spec.service_account}")
    keys += [f"NetworkAttachmentDefinition/{plan.namespace}/{n.name}" for n in plan.pool.networks_in(plan.namespace)]
    if plan.queue and plan.scheduler == "volcano":
        keys.append(f"Queue/{plan.queue}")
    elif plan.queue and plan.scheduler == "kueue":
        keys.append(f"LocalQueue/{plan.namespace}/{plan.queue}")
    if plan.spec.scheduler.priority_class:
        keys.append(f"PriorityClass/{plan.spec.scheduler.priority_class}")
    runtime = plan.spec.training_runtime
    if runtime and runtime in plan.pool.runtimes:
        keys.append(f"ClusterTrainingRuntime/{plan.pool.runtimes[runtime]}")
    return keys
