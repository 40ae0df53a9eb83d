"""A validated stack: the type every layer above validation reads, and the config queries it is made from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components import launchers
from components.fabriccheck import FabricCheck
from components.manifests import trainingjob
from components.manifests.plan import JobPlan, SchedulerKind
from components.models import StackConfig, TrainingJobSpec
from components.nodecheck import NodeCheck
from components.pool import Pool


@dataclass(frozen=True, slots=True)
class Stack:
    """A validated stack: its config, its resolved pools and its planned jobs."""

    config: StackConfig
    pools: dict[str, Pool]
    jobs: tuple[JobPlan, ...]
    namespaces: tuple[str, ...]
    checks: dict[str, FabricCheck] = field(default_factory=dict)
    """Each gated pool's fabric check, by pool name."""
    unchecked: dict[str, str] = field(default_factory=dict)
    """Why each other pool has no fabric check, by pool name."""
    node_checks: dict[str, NodeCheck] = field(default_factory=dict)
    """Each checked pool's node check (its nodes' check at join), by pool name."""
    launches: tuple[launchers.Choice, ...] = field(default=(), compare=False)
    """How each job's launcher was chosen, in the order of `jobs` (empty when the stack was made otherwise)."""
    job_objects: tuple[tuple[dict[str, Any], ...], ...] = field(default=(), compare=False, repr=False)
    """Each job's objects (`trainingjob.objects`), in the order of `jobs`, as validation built them to check that
    its pods fit: render writes these rather than build them again. Empty when the stack was made otherwise."""

    def objects_of(self, index: int) -> tuple[dict[str, Any], ...]:
        """The objects of `jobs[index]`: those validation built, else built now."""
        if len(self.job_objects) == len(self.jobs):
            return self.job_objects[index]
        return tuple(trainingjob.objects(self.jobs[index]))

    @property
    def scheduler(self) -> SchedulerKind:
        """volcano | kueue | none."""
        return self.config.scheduler.type

    @property
    def rdma(self) -> bool:
        """Whether a pool runs InfiniBand or RoCE (RDMA through the host's HCAs)."""
        return any(p.fabric in ("infiniband", "roce") for p in self.pools.values())


def namespaces(config: StackConfig) -> tuple[str, ...]:
    """Every namespace the stack declares or uses, in first-use order."""
    names = [n.name for n in config.namespaces]
    names += [n.namespace for n in config.all_networks]
    names += [v.namespace for v in config.storage.volumes]
    names += [j.namespace for j in config.jobs]
    names += [a.namespace for a in config.service_accounts]
    for queue in config.scheduler.queues:
        names += queue.namespaces
    return tuple(dict.fromkeys(names))


def pool_name(config: StackConfig, job: TrainingJobSpec) -> str | None:
    """The pool a job runs on: the one it names, else the stack's only pool."""
    if job.node_pool:
        return job.node_pool
    return config.node_pools[0].name if len(config.node_pools) == 1 else None


def default_queue(config: StackConfig) -> str | None:
    """The queue of jobs that name none: the first declared."""
    return config.scheduler.queues[0].name if config.scheduler.queues else None
