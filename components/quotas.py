"""Whether the queue and namespace a job runs under can ever admit it: a quota below the job's GPUs holds it for good.

- Kueue admits a workload whole when its ClusterQueue's flavor (the job's pool) covers every pod's requests: its
  nominal quota there, plus what it may borrow from its cohort, which is what the cohort's other queues lend on that
  flavor (their lendingLimit, else their nominal quota) up to its own borrowingLimit (kubernetes-sigs/kueue v0.19.2
  apis/kueue/v1beta2/clusterqueue_types.go:300-342, ResourceQuota). The ClusterQueues are
  components/manifests/queues.py's: GPUs are the queue's (at most the pool's), cpu and memory the whole pool's, so
  GPUs are what can fall short.
- Volcano enqueues a job's PodGroup only when its minResources, with what the queue holds already, fit under the
  queue's capability, the queue's GPUs (volcano-sh/volcano v1.15.1
  pkg/scheduler/plugins/proportion/proportion.go:423-430, the proportion plugin the stack's scheduler runs).
- A namespace's GPU quota (a ResourceQuota on requests.nvidia.com/gpu) refuses the pods past it at creation, so a
  gang larger than it never starts.
"""

from __future__ import annotations

from components.errors import Issue
from components.manifests.plan import JobPlan
from components.manifests.queues import DEFAULT_COHORT
from components.models import StackConfig
from components.models.platform import QueueSpec
from components.pool import Pool


def _serves(queue: QueueSpec, pool: str) -> bool:
    return not queue.pools or pool in queue.pools


def kueue_reach(queue: QueueSpec, queues: list[QueueSpec], plan: JobPlan) -> tuple[int, int]:
    """The GPUs a ClusterQueue holds on the job's pool, and the most it may borrow there from its cohort."""
    return reach(queue, queues, plan.pool)


def reach(queue: QueueSpec, queues: list[QueueSpec], pool: Pool) -> tuple[int, int]:
    """The GPUs a ClusterQueue holds on a pool, and the most it may borrow there from its cohort."""
    pool_gpus = pool.gpus_per_node * pool.max_nodes
    nominal = min(queue.gpus, pool_gpus)
    cohort = queue.cohort or DEFAULT_COHORT
    lent = 0
    for other in queues:
        if other.name == queue.name or (other.cohort or DEFAULT_COHORT) != cohort or not _serves(other, pool.name):
            continue
        own = min(other.gpus, pool_gpus)
        lent += own if other.lending_limit is None else min(other.lending_limit, own)
    borrow = lent if queue.borrowing_limit is None else min(lent, queue.borrowing_limit)
    return nominal, borrow


def issues(config: StackConfig, plan: JobPlan, path: str) -> list[Issue]:
    """A queue or namespace quota that can never admit the job (its GPUs at once: every node's)."""
    found: list[Issue] = []
    gpus = plan.world_size
    scheduler = config.scheduler
    queue = next((q for q in scheduler.queues if q.name == plan.queue), None)
    key = f"{path}.scheduler.queue" if plan.spec.scheduler.queue else f"{path}.nodes"
    if queue is not None and scheduler.type == "kueue":
        found += _kueue(queue, scheduler.queues, plan, key)
    elif queue is not None and scheduler.type == "volcano":
        gang = plan.min_nodes * plan.gpus_per_node
        if gang > queue.gpus:
            found.append(
                Issue(
                    key,
                    f"job '{plan.name}' needs {gang} GPUs at once ({plan.min_nodes} x {plan.gpus_per_node}), but "
                    f"queue '{queue.name}' is capped at {queue.gpus} (its Volcano capability): raise the queue's "
                    f"gpus to at least {gang}, or ask for fewer nodes",
                )
            )
    quota = next((n.gpu_quota for n in config.namespaces if n.name == plan.namespace), None)
    if quota is not None and gpus > quota:
        found.append(
            Issue(
                f"{path}.namespace",
                f"job '{plan.name}' requests {gpus} GPUs ({plan.nodes} x {plan.gpus_per_node}), but namespace "
                f"'{plan.namespace}' allows {quota} (its gpuQuota): raise the quota to at least {gpus}, or ask for "
                "fewer nodes",
            )
        )
    return found


def _kueue(queue: QueueSpec, queues: list[QueueSpec], plan: JobPlan, key: str) -> list[Issue]:
    pool = plan.pool.name
    if not _serves(queue, pool):
        return [
            Issue(
                key,
                f"job '{plan.name}' runs on pool '{pool}', and queue '{queue.name}' draws on {', '.join(queue.pools)} "
                f"only: add {pool} to the queue's pools, or name a queue that has it",
            )
        ]
    if queue.namespaces and plan.namespace not in queue.namespaces:
        return [
            Issue(
                key,
                f"job '{plan.name}' runs in namespace '{plan.namespace}', where queue '{queue.name}' has no LocalQueue "
                f"(its namespaces: {', '.join(queue.namespaces)}): add {plan.namespace} to them",
            )
        ]
    nominal, borrow = kueue_reach(queue, queues, plan)
    gpus = plan.world_size
    if gpus <= nominal + borrow:
        return []
    return [
        Issue(
            key,
            f"job '{plan.name}' needs {gpus} GPUs at once ({plan.nodes} x {plan.gpus_per_node}), but queue "
            f"'{queue.name}' can hold at most {nominal + borrow} on pool '{pool}' ({nominal} of its own quota, "
            f"{borrow} borrowed from cohort '{queue.cohort or DEFAULT_COHORT}'): raise the queue's gpus"
            + (" or borrowingLimit" if queue.borrowing_limit is not None else "")
            + f" to cover {gpus}, or ask for fewer nodes",
        )
    ]
