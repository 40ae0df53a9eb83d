"""Every object one TrainingJob emits, in the order they must be applied."""

from __future__ import annotations

from typing import Any

from components import nvlink
from components.images import mirror_objects
from components.manifests import deepspeed, gang, indexedjob
from components.manifests.meta import INSTANCE_LABEL
from components.manifests.mpijob import mpijob
from components.manifests.plan import JobPlan
from components.manifests.pytorchjob import pytorchjob
from components.manifests.tfjob import tfjob
from components.manifests.trainingruntime import choose_runtime, job_runtime, uses_mpi
from components.manifests.trainjob import gang_size, trainjob


def objects(plan: JobPlan) -> list[dict[str, Any]]:
    """The job's supporting objects first (ComputeDomain, ConfigMap, Service, PodGroup, TrainingRuntime), the
    workload last; every image through the pool's mirror."""
    out: list[dict[str, Any]] = []
    if plan.compute_domain:
        out.append(nvlink.compute_domain(plan.compute_domain, plan.namespace, {INSTANCE_LABEL: plan.name}))
    config = deepspeed.configmap(plan)
    if config is not None:
        out.append(config)
    launcher = plan.spec.launcher
    if launcher == "pytorch":
        out.append(pytorchjob(plan))
    elif launcher == "mpi":
        out.append(mpijob(plan))
    elif launcher == "tensorflow":
        out.append(tfjob(plan))
    elif launcher == "trainjob":
        choice = choose_runtime(plan)
        if choice.reasons:
            out.append(job_runtime(plan))
        if plan.scheduler == "volcano" and uses_mpi(plan.spec.training_runtime or "torch"):
            out.append(gang.podgroup(plan, plan.name, gang_size(plan)))
        out.append(trainjob(plan, choice))
    else:
        out.append(indexedjob.service(plan))
        if plan.scheduler == "volcano":
            out.append(gang.podgroup(plan, plan.name, plan.nodes))
        out.append(indexedjob.job(plan))
    return mirror_objects(plan.pool.registry_mirror, out)


def workload(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The workload among a job's objects (always the last)."""
    return objects[-1]
