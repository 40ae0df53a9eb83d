"""What a fleet makes on each of its clusters: on the manager Kueue set up for MultiKueue, the workers' queues
mirrored, the MultiKueue objects and the jobs; on each worker MultiKueue's ServiceAccount and the jobs' supporting
objects, and, for a worker whose keys are inline, its whole platform.

The Secret on the manager that holds each worker's kubeconfig is never among them: `pulumi up` makes it from the
worker's ServiceAccount token (components/fleet.py), and render says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from components.addons.plan import AddonPlan
from components.addons.plan import plan as addon_plan
from components.addons.scheduler import KUEUE_NAME, manager_config
from components.fleetstack import Fleet
from components.fleetworker import Worker
from components.manifests import multikueue, platform
from components.manifests.namespace import namespace
from components.manifests.queues import local_queue
from components.render import render

NO_ADDONS = AddonPlan(releases=(), remotes=(), objects=())
"""What the fleet installs on a worker whose own stack deploys its platform: nothing."""


@dataclass(frozen=True, slots=True)
class ClusterObjects:
    """What the fleet makes on one of its clusters, in apply order, and what it installs there."""

    name: str
    """`manager`, or the worker's name."""
    objects: tuple[dict[str, Any], ...]
    addons: AddonPlan


def manager_addons(fleet: Fleet) -> AddonPlan:
    """The manager's installs: its stack's (Kueue and Kubeflow Trainer), Kueue configured for MultiKueue."""
    pools = [pool for worker in fleet.workers for pool in worker.stack.pools.values()]
    installs = addon_plan(fleet.manager)
    releases = tuple(
        replace(r, values={**r.values, "managerConfig": {"controllerManagerConfigYaml": manager_config(pools)}})
        if r.name == KUEUE_NAME
        else r
        for r in installs.releases
    )
    return replace(installs, releases=releases)


def manager_objects(fleet: Fleet) -> list[dict[str, Any]]:
    """Every object of the manager: its own stack's (the default flavor), then the fleet's (`multikueue_objects`)."""
    return [*platform.objects(fleet.manager), *multikueue_objects(fleet)]


def multikueue_objects(fleet: Fleet) -> list[dict[str, Any]]:
    """What the fleet makes on the manager: the namespaces of its queues and jobs, the workers' topologies and pools
    as flavors, the MultiKueueClusters, each queue's MultiKueueConfig, AdmissionCheck and ClusterQueue, the
    LocalQueues the workers have, every runtime the workers offer, and the jobs (each after its own runtime)."""
    out: list[dict[str, Any]] = []
    local = sorted({pair for worker in fleet.workers for pair in worker.local_queues()})
    namespaces = dict.fromkeys([*(ns for ns, _ in local), *(d.plan.namespace for d in fleet.jobs)])
    out += [namespace(name) for name in namespaces]
    out += list(_union(fleet.workers, "Topology").values())
    queues = fleet.queues
    flavored: set[str] = set()
    for name, workers in queues.items():
        for worker in workers:
            for pool in worker.queue_pools(name):
                if pool.name not in flavored:  # a pool name means one pool shape across the fleet (fleetstack)
                    flavored.add(pool.name)
                    out.append(multikueue.manager_flavor(pool))
    out += [multikueue.multikueue_cluster(worker.name) for worker in fleet.workers]
    for name, workers in queues.items():
        out.append(multikueue.multikueue_config(name, [w.name for w in workers]))
        out.append(multikueue.admission_check(name))
        shares = [(w.name, w.queues[name], w.queue_pools(name)) for w in workers]
        out.append(multikueue.manager_cluster_queue(name, shares))
    specs = {q: w.queues[q] for w in reversed(fleet.workers) for q in w.queues}
    out += [local_queue(specs[queue], ns) for ns, queue in local]
    out += list(_union(fleet.workers, "ClusterTrainingRuntime").values())
    for job in fleet.jobs:
        # The job's own runtime too: the manager's Kueue builds the job's pods from it to admit it.
        out += [o for o in job.objects[:-1] if o["kind"] in RUNTIME_KINDS]
        out.append(multikueue.dispatched(job.objects[-1]))
    return out


RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
"""The kinds a TrainJob's pods are built from, which the manager holds as its workers do."""


def _union(workers: tuple[Worker, ...], kind: str) -> dict[str, dict[str, Any]]:
    """The workers' platform objects of one kind, by name (alike across workers: fleetstack checks it)."""
    found: dict[str, dict[str, Any]] = {}
    for worker in workers:
        for name, obj in worker.of_kind(kind).items():
            found.setdefault(name, obj)
    return found


def worker_objects(fleet: Fleet, worker: Worker) -> tuple[list[dict[str, Any]], AddonPlan]:
    """Every object the fleet makes on a worker, and what it installs there: the whole platform of an inline
    worker, MultiKueue's ServiceAccount, role and token Secret, and the supporting objects of each job the worker
    may take (its own runtime, its DeepSpeed ConfigMap ...)."""
    out: list[dict[str, Any]] = []
    installs = NO_ADDONS
    if worker.inline:
        rendered = render(worker.stack)
        out += rendered.objects
        installs = rendered.addons
    rotation = fleet.config.fleet.rotation if fleet.config.fleet is not None else None
    out += multikueue.worker_access(rotation)
    for job in fleet.jobs:
        if worker.name in job.workers:
            out += job.objects[:-1]
    return out, installs


def clusters(fleet: Fleet) -> list[ClusterObjects]:
    """The manager's objects and installs, then each worker's."""
    found = [ClusterObjects("manager", tuple(manager_objects(fleet)), manager_addons(fleet))]
    for worker in fleet.workers:
        objects, installs = worker_objects(fleet, worker)
        found.append(ClusterObjects(worker.name, tuple(objects), installs))
    return found
