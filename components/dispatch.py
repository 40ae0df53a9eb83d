"""Where a fleet's jobs may go: each job with the workers MultiKueue may dispatch it to, planned on each as that
worker's stack would plan it, or the reasons none can run it.

MultiKueue dispatches by queue: the manager offers a job to every worker whose Kueue has a LocalQueue of the job's
queue in its namespace (the copy of its Workload carries the LocalQueue's name, kubernetes-sigs/kueue v0.19.2
pkg/controller/admissionchecks/multikueue/workload.go:1348-1356), and the first worker to admit it runs it. There the
worker's Kueue checks that the job's pods, built from the worker's own runtime, are the pods the manager admitted
(containers, init containers and, before admission, tolerations: pkg/controller/jobframework/reconciler.go:1365-1455
and pkg/util/equality/podset.go:40-71; a TrainJob's pods come from its runtime, pkg/controller/jobs/trainjob/
trainjob_controller.go:199-240), and finishes the job as out of sync when they are not. So each worker offered a job
must run it as the same objects; a worker whose queue can never hold the job (too few nodes or GPUs) is harmless, as
it never admits it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from components import launchers, mandatory, overhead, reserved
from components.errors import Issue, join_path
from components.fleetworker import Worker
from components.manifests.plan import JobPlan
from components.models import TrainingJobSpec
from components.quotas import reach
from components.validation import plan_job


@dataclass(frozen=True, slots=True)
class Dispatch:
    """One job of the fleet: the workers MultiKueue may send it to, and the objects it is there."""

    index: int
    spec: TrainingJobSpec
    """The job with its launcher and queue decided."""
    plan: JobPlan
    """The job planned on its first worker (the same on each of its workers)."""
    objects: tuple[dict[str, Any], ...]
    """Its objects on each of its workers: supporting ones first, the TrainJob last."""
    workers: tuple[str, ...]
    """The workers that can take it, in the fleet's order."""
    passed: dict[str, str] = field(default_factory=dict)
    """Workers that have its queue but can never hold it, and why."""

    @property
    def queue(self) -> str:
        """The queue it is submitted to (a LocalQueue of its namespace)."""
        return self.plan.queue or ""


def dispatch(jobs: list[TrainingJobSpec], workers: list[Worker]) -> tuple[list[Dispatch], list[Issue]]:
    """Each job with the workers that can take it, or what stops it: no worker has its queue, a worker that has
    it cannot run it as the others do, or none can run it (each worker's reasons: GPUs, fabric, size, runtime)."""
    settled, _, issues = launchers.settle(jobs, trainer=True, default="trainjob", deployed=None)
    default = next((q for w in workers for q in w.queues), None)
    candidates: dict[int, TrainingJobSpec] = {}
    named: set[int] = set()  # the jobs that name their queue
    for index, job in enumerate(settled):
        path = f"jobs[{index}]"
        if job.launcher != "trainjob":
            issues.append(
                Issue(
                    f"{path}.launcher",
                    f"a fleet dispatches TrainJobs (Kueue's MultiKueue TrainJob integration), not the {job.launcher} "
                    "launcher's kind: drop launcher (a TrainJob is the default) or name trainjob",
                )
            )
            continue
        if job.scheduler.queue:
            named.add(index)
        queue = job.scheduler.queue or default
        candidates[index] = job.model_copy(update={"scheduler": job.scheduler.model_copy(update={"queue": queue})})
    # Each job on each worker that has its queue in its namespace: its plan and objects there, or its issues.
    planned: dict[tuple[int, str], tuple[JobPlan, tuple[dict[str, Any], ...]]] = {}
    failed: dict[tuple[int, str], list[Issue]] = {}
    for worker in workers:
        has = worker.local_queues()
        mine = {i: j for i, j in candidates.items() if (j.namespace, j.scheduler.queue) in has}
        for index, job in mine.items():
            plan, objects, found = plan_job(worker.stack.config, worker.stack.pools, job, f"jobs[{index}]")
            if found or plan is None:
                failed[index, worker.name] = found
            else:
                planned[index, worker.name] = (plan, objects)
        for index, found in _whole_stack(
            worker, {i: planned[i, worker.name] for i in mine if (i, worker.name) in planned}
        ).items():
            del planned[index, worker.name]
            failed[index, worker.name] = found
    out: list[Dispatch] = []
    for index, job in candidates.items():
        path = f"jobs[{index}]"
        offered = [w for w in workers if (index, w.name) in planned or (index, w.name) in failed]
        if not offered:
            issues.append(_unqueued(path, job, workers, named=index in named))
            continue
        runnable = [w for w in offered if (index, w.name) in planned]
        passed: dict[str, str] = {}
        for worker in offered:
            found = failed.get((index, worker.name))
            if found is None:
                continue
            why = "; ".join(_relative(i, path) for i in found)
            if runnable and _never_holds(worker, job):
                passed[worker.name] = why
            elif runnable:
                issues.append(
                    Issue(
                        path,
                        f"worker {worker.name} has queue {job.scheduler.queue} in namespace {job.namespace}, so "
                        f"MultiKueue may send the job there, but it cannot run there: {why}",
                    )
                )
        if not runnable:
            reasons = "; ".join(
                f"worker {w.name} ({_describe(w, job)}): "
                + "; ".join(_relative(i, path) for i in failed[index, w.name])
                for w in offered
            )
            issues.append(Issue(path, f"no worker of the fleet can run it: {reasons}"))
            continue
        plan, objects = planned[index, runnable[0].name]
        for worker in runnable[1:]:
            other = planned[index, worker.name][1]
            if list(other) != list(objects):
                where = difference(list(objects), list(other))
                issues.append(
                    Issue(
                        path,
                        f"worker {worker.name} would run it as other objects than worker {runnable[0].name} "
                        f"({where}), and MultiKueue needs the same pods wherever the job may go: make the workers "
                        "of its queue alike, or name their queues apart",
                    )
                )
        out.append(Dispatch(index, plan.spec, plan, objects, tuple(w.name for w in runnable), passed))
    return out, issues


def _whole_stack(
    worker: Worker, planned: dict[int, tuple[JobPlan, tuple[dict[str, Any], ...]]]
) -> dict[int, list[Issue]]:
    """What the worker's whole stack refuses of the jobs planned on it (each pod's room beside its nodes' agents,
    its namespace, what `check` blocks), by job: the worker's stack with them as jobs of its own, its pools kept as
    they are."""
    if not planned:
        return {}
    stack = worker.stack
    base = len(stack.jobs)
    indexes = list(planned)
    config = stack.config.model_copy(update={"jobs": [*stack.config.jobs, *(planned[i][0].spec for i in indexes)]})
    grown = replace(
        stack,
        config=config,
        jobs=(*stack.jobs, *(planned[i][0] for i in indexes)),
        job_objects=(*(stack.objects_of(i) for i in range(base)), *(planned[i][1] for i in indexes)),
        launches=(),
    )
    found: dict[int, list[Issue]] = {}
    for issue in [*reserved.issues(grown), *overhead.issues(grown), *mandatory.issues(grown)]:
        for offset, index in enumerate(indexes):
            own = f"jobs[{base + offset}]"
            if issue.path == own or issue.path.startswith((f"{own}.", f"{own}[")):
                found.setdefault(index, []).append(replace(issue, path=f"jobs[{index}]" + issue.path[len(own) :]))
    return found


def _never_holds(worker: Worker, job: TrainingJobSpec) -> bool:
    """Whether the worker's queue can never hold the job at once (its nodes past every pool of the queue's, or its
    GPUs past what the queue holds and borrows there), so that its Kueue never admits it."""
    queue = worker.queues[job.scheduler.queue or ""]
    queues = list(worker.queues.values())
    for pool in worker.queue_pools(queue.name):
        if job.node_pool and pool.name != job.node_pool:
            continue
        nominal, borrowed = reach(queue, queues, pool)
        gpus = job.world_nodes * (job.gpus_per_node or pool.gpus_per_node)
        if job.world_nodes <= pool.max_nodes and gpus <= nominal + borrowed:
            return False
    return True


def _describe(worker: Worker, job: TrainingJobSpec) -> str:
    """The pools a job could take on a worker, in a few words each: GPUs, model, fabric, size."""
    pools = [p for p in worker.queue_pools(job.scheduler.queue or "") if not job.node_pool or p.name == job.node_pool]
    pools = pools or list(worker.stack.pools.values())
    return ", ".join(p.summary() for p in pools) or "no GPU pool"


def _relative(issue: Issue, path: str) -> str:
    """An issue of a job as a reason: its key inside the job, and its message."""
    inner = issue.path[len(path) :].lstrip(".") if issue.path.startswith(path) else issue.path
    return f"{inner}: {issue.message}" if inner else issue.message


def _unqueued(path: str, job: TrainingJobSpec, workers: list[Worker], *, named: bool) -> Issue:
    """A job whose queue no worker has in its namespace."""
    held = ", ".join(
        f"{w.name}: " + (", ".join(sorted(f"{q} in {ns}" for ns, q in w.local_queues())) or "none") for w in workers
    )
    key = f"{path}.scheduler.queue" if named else f"{path}.namespace"
    return Issue(
        key,
        f"no worker has queue {job.scheduler.queue} in namespace {job.namespace}, and MultiKueue sends a job only to "
        f"workers whose Kueue has a LocalQueue of its queue's name in its namespace (queues by worker: {held})",
    )


def difference(a: Any, b: Any, path: str = "") -> str:
    """Where two objects first differ, as a path and the two values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in [*a, *(k for k in b if k not in a)]:
            if a.get(k) != b.get(k):
                return difference(a.get(k), b.get(k), join_path(path, str(k)))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return difference(x, y, f"{path}[{i}]")
    return f"{path or 'the object'}: {_short(a)} vs {_short(b)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
