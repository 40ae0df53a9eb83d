"""Whether pods fit their pool: what each pod template asks of a node, against what the pool's nodes advertise."""

from __future__ import annotations

from typing import Any

from components.allocatable import pod_requests, unadvertised
from components.errors import Issue
from components.manifests.plan import JobPlan
from components.manifests.trainingruntime import cluster_runtime
from components.pool import Pool
from components.rules.pods import templates
from components.rules.podtemplate import PodTemplate
from components.rules.trainjobs import TRAINJOB, trainjob_pods
from components.wellknown import POOL_LABEL


def pods_fit(pool: Pool, objects: list[dict[str, Any]], path: str, job: JobPlan | None = None) -> list[Issue]:
    """Every pod template among `objects` that runs on `pool` requests only what a node of it advertises
    (components/allocatable.py): a pod asking more, or anything else, stays Pending, and no node is ever
    added for it. `job`: the plan the objects are a TrainJob's of, whose pods its runtime makes."""
    issues: list[Issue] = []
    for obj, template in pool_pods(pool, objects, job):
        where = f"{obj['kind']} {obj['metadata']['name']} ({template.role} pods)"
        scaled = ", and nothing would add a node for them" if pool.provisioner else ""
        issues += [
            Issue(path, f"{where} {problem} ({pool.provisioner or 'existing'} nodes): never scheduled{scaled}")
            for problem in unadvertised(pod_requests(template.spec), pool)
        ]
    return issues


def pool_pods(
    pool: Pool, objects: list[dict[str, Any]], job: JobPlan | None = None
) -> list[tuple[dict[str, Any], PodTemplate]]:
    """Each object among `objects` with each of its pod templates that runs on `pool`: those selecting the pool, and
    any that asks for GPUs. `job`: the plan the objects are a TrainJob's of, whose pods its runtime makes."""
    found: list[tuple[dict[str, Any], PodTemplate]] = []
    for obj in objects:
        pods = templates(obj)
        if obj.get("kind") == TRAINJOB and job is not None:
            own = [o for o in objects if o.get("kind") == "TrainingRuntime"]
            runtime = own[0] if own else cluster_runtime(pool, job.spec.training_runtime or "torch", job.scheduler)
            pods = trainjob_pods(obj, runtime)
        for template in pods:
            selector = template.spec.get("nodeSelector") or {}
            on_pool = (template.metadata.get("labels") or {}).get(POOL_LABEL) == pool.name or (
                pool.node_selector and pool.node_selector.items() <= selector.items()
            )
            if on_pool or template.gpus:  # not a CPU pod placed elsewhere (an MPI launcher)
                found.append((obj, template))
    return found
