"""A fleet stack made into a validated fleet: its manager's stack, each worker's stack (read from its own stack file,
offline, or from its keys inline), and each job with the workers MultiKueue may dispatch it to.

MultiKueue dispatches by queue: the manager offers a job to every worker whose Kueue has a LocalQueue of the job's
queue in its namespace (the copy of its Workload carries the LocalQueue's name, kubernetes-sigs/kueue v0.19.2
pkg/controller/admissionchecks/multikueue/workload.go:1348-1356), and the first worker to admit it runs it. There the
worker's Kueue checks that the job's pods, built from the worker's own runtime, are the pods the manager admitted
(containers, init containers and, before admission, tolerations: pkg/controller/jobframework/reconciler.go:1365-1455
and pkg/util/equality/podset.go:40-71; a TrainJob's pods come from its runtime, pkg/controller/jobs/trainjob/
trainjob_controller.go:199-240), and finishes the job as out of sync when they are not. So:
- each worker offered a job must run it as the same objects, its runtime included: the workers of a queue are
  interchangeable for it (the same pools' runtimes), and a runtime's name means one runtime across the fleet;
- a worker whose queue can never hold the job (too few nodes or GPUs) is harmless: it never admits it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from components import launchers, mandatory, overhead, plaintext, reserved
from components.config import parse_stack, read_stack_file
from components.errors import ConfigError, Issue, join_path
from components.manifests import platform
from components.manifests.plan import JobPlan
from components.models import (
    CONFIG_NAMESPACE,
    GpuOperatorSpec,
    SchedulerSpec,
    StackConfig,
    TrainerSpec,
    TrainingJobSpec,
    TrainingOperatorSpec,
    WorkerSpec,
)
from components.models.platform import QueueSpec
from components.pool import Pool
from components.quotas import reach
from components.resolution import resolve, resolve_raw
from components.sealing import secure_keys
from components.stack import Stack
from components.validation import plan_job

FLEET_KEYS = ("cluster", "fleet", "jobs", "addons", "images")
"""The keys a fleet stack takes: its manager (`cluster`, and how its add-ons and images are had), its workers and its
jobs. The rest describe a cluster's GPUs and queues, which are each worker's."""


@dataclass(frozen=True, slots=True)
class Worker:
    """A worker cluster of the fleet and its validated stack."""

    name: str
    spec: WorkerSpec
    stack: Stack
    source: str
    """Where its stack is declared: its stack file, or `fleet.workers[N].config` of the fleet's."""
    objects: tuple[dict[str, Any], ...] = field(default=(), repr=False, compare=False)
    """Its platform objects as its stack renders them (namespaces, queues, runtimes ...)."""

    @property
    def inline(self) -> bool:
        """Whether the fleet deploys this worker's platform (its keys are inline) rather than its own stack."""
        return self.spec.config is not None

    @property
    def queues(self) -> dict[str, QueueSpec]:
        """Its Kueue queues, by name."""
        return {q.name: q for q in self.stack.config.scheduler.queues}

    def local_queues(self) -> set[tuple[str, str]]:
        """(namespace, queue) of every LocalQueue its stack makes."""
        return {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in self.objects if o["kind"] == "LocalQueue"}

    def queue_pools(self, queue: str) -> list[Pool]:
        """The pools a queue draws on here."""
        spec = self.queues[queue]
        return [p for p in self.stack.pools.values() if not spec.pools or p.name in spec.pools]

    def of_kind(self, kind: str) -> dict[str, dict[str, Any]]:
        """Its platform objects of one kind, by name."""
        return {o["metadata"]["name"]: o for o in self.objects if o["kind"] == kind}


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


@dataclass(frozen=True, slots=True)
class Fleet:
    """A validated fleet: the stack's config, its manager's stack, its workers and its jobs."""

    config: StackConfig
    manager: Stack
    """The manager's own stack: its cluster, Kueue and Kubeflow Trainer, no GPU pool and no job."""
    workers: tuple[Worker, ...]
    jobs: tuple[Dispatch, ...]

    def worker(self, name: str) -> Worker:
        """The worker of a name."""
        return next(w for w in self.workers if w.name == name)

    @property
    def queues(self) -> dict[str, list[Worker]]:
        """Each queue of the fleet (by name, in first-declared order) and the workers that have it."""
        found: dict[str, list[Worker]] = {}
        for worker in self.workers:
            for name in worker.queues:
                found.setdefault(name, []).append(worker)
        return found


def is_fleet(raw: Mapping[str, Any]) -> bool:
    """Whether a stack file's keys are a fleet's."""
    return "fleet" in raw


def resolve_fleet_file(path: str | Path) -> Fleet:
    """The validated fleet of a fleet stack file; errors name the file (or a worker's) and the line."""
    path = Path(path)
    raw, lines = read_stack_file(path)
    return resolve_fleet_raw(raw, source=str(path), lines=lines, base_dir=path.parent)


def resolve_fleet_raw(
    raw: Mapping[str, Any],
    *,
    source: str | None = None,
    lines: MutableMapping[str, int] | None = None,
    base_dir: Path | None = None,
    secure: Collection[str] = (),
) -> Fleet:
    """The validated fleet of raw config keys; ConfigError listing every issue, located in `source` when given.
    `secure`: config paths given as Pulumi secrets where `raw` holds them decrypted (a Pulumi program's config)."""
    lines = lines if lines is not None else {}
    config = parse_stack(raw, source=source, lines=lines, base_dir=base_dir)
    secure = {*secure_keys(raw), *secure}
    issues = [
        Issue(
            key,
            f"a fleet's stack takes only {', '.join(FLEET_KEYS)}: {key} describes a cluster's GPUs and queues, "
            "which are each worker's (in its stack file, or its `config` here)",
        )
        for key in raw
        if key not in FLEET_KEYS
    ]
    inline_free = config.model_copy(
        update={
            "fleet": config.fleet.model_copy(
                update={"workers": [w.model_copy(update={"config": None}) for w in config.fleet.workers]}
            )
            if config.fleet is not None
            else None
        }
    )
    issues += plaintext.issues(inline_free, secure)
    manager: Stack | None = None
    try:
        manager = resolve(manager_config(config), secure)
    except ConfigError as exc:
        issues += exc.issues
    workers: list[Worker] = []
    for index, spec in enumerate(config.fleet.workers if config.fleet is not None else []):
        worker, found = _worker(index, spec, base_dir or Path.cwd(), secure)
        issues += found
        if worker is not None:
            workers.append(worker)
    issues += _distinct_clusters(config, workers)
    if not issues:
        issues += _interchangeable(workers)
    jobs: list[Dispatch] = []
    if not issues:
        jobs, found = dispatch(config.jobs, workers)
        issues += found
    if issues or manager is None:
        error = ConfigError(issues)
        raise error.located(source, lines) if source else error
    return Fleet(config=config, manager=manager, workers=tuple(workers), jobs=tuple(jobs))


def manager_config(config: StackConfig) -> StackConfig:
    """The manager's own stack: the fleet's cluster with Kueue and Kubeflow Trainer (whose TrainJob and runtime
    kinds Kueue reads there to admit a job), and no GPU pool, GPU Operator, v1 operator or job."""
    return StackConfig(
        cluster=config.cluster,
        gpu_operator=GpuOperatorSpec(enabled=False),
        training_operator=TrainingOperatorSpec(enabled=False, mpi=False),
        trainer=TrainerSpec(enabled=True),
        scheduler=SchedulerSpec(type="kueue"),
        addons=config.addons,
        images=config.images,
    )


def _worker(index: int, spec: WorkerSpec, base_dir: Path, secure: Collection[str]) -> tuple[Worker | None, list[Issue]]:
    """A worker's validated stack, and what stops it being a worker."""
    at = f"fleet.workers[{index}]"
    if spec.stack_file is not None:
        path = base_dir / spec.stack_file
        if not path.is_file():
            return None, [
                Issue(
                    f"{at}.stackFile", f"no such stack file: {spec.stack_file} (paths are relative to this stack file)"
                )
            ]
        try:
            raw, lines = read_stack_file(path)
            if "fleet" in raw:
                return None, [
                    Issue(f"{at}.stackFile", f"{spec.stack_file} is a fleet's stack: a worker is one cluster")
                ]
            stack = resolve_raw(raw, source=str(path), lines=lines, base_dir=path.parent)
        except ConfigError as exc:
            return None, list(exc.issues)
        source, key = str(path), f"{at}.stackFile"
    else:
        raw = dict(spec.config or {})
        prefix = f"{at}.config"
        if "jobs" in raw:
            return None, [
                Issue(f"{prefix}.jobs", "a worker takes no jobs of its own here: the fleet's `jobs` run on its workers")
            ]
        inner = {p.removeprefix(f"{prefix}.") for p in secure if p.startswith(f"{prefix}.")}
        try:
            stack = resolve_raw(raw, secure=inner)
        except ConfigError as exc:
            # The keys its messages name (`pulumi config set --path 'gpu-training:cluster...'`) are under its prefix.
            named = f"'{CONFIG_NAMESPACE}:"
            return None, [
                replace(i, path=join_path(prefix, i.path), message=i.message.replace(named, f"{named}{prefix}."))
                for i in exc.issues
            ]
        source, key = prefix, prefix
    found: list[Issue] = []
    file = f"its stack ({spec.stack_file})" if spec.stack_file else "it"
    if stack.scheduler != "kueue":
        found.append(
            Issue(
                key,
                f"worker {spec.name}: {file} runs scheduler {stack.scheduler}, and MultiKueue dispatches to Kueue "
                "on each worker: set scheduler.type: kueue there",
            )
        )
    if not stack.config.trainer.enabled:
        found.append(
            Issue(
                key,
                f"worker {spec.name}: {file} runs no Kubeflow Trainer, and a fleet's jobs are TrainJobs: "
                "set trainer.enabled: true there",
            )
        )
    if not stack.config.scheduler.queues:
        found.append(
            Issue(
                key,
                f"worker {spec.name}: {file} declares no queue (scheduler.queues), and MultiKueue "
                "dispatches a job to the workers that have its queue",
            )
        )
    if found:
        return None, found
    return Worker(spec.name, spec, stack, source, tuple(platform.objects(stack))), []


def _distinct_clusters(config: StackConfig, workers: list[Worker]) -> list[Issue]:
    """The clusters the fleet deploys (the manager's, each inline worker's) have names of their own: `pulumi up` names
    each cluster's resources after it."""
    issues: list[Issue] = []
    seen = {config.cluster.name: "the manager"}
    for index, worker in enumerate(config.fleet.workers if config.fleet is not None else []):
        found = next((w for w in workers if w.name == worker.name and w.inline), None)
        if found is None:
            continue
        name = found.stack.config.cluster.name
        if name in seen:
            issues.append(
                Issue(
                    f"fleet.workers[{index}].config.cluster.name",
                    f"'{name}' is the cluster name of {seen[name]} too, and the fleet names each cluster's resources "
                    "after it: name them apart",
                )
            )
        seen.setdefault(name, f"worker {worker.name}")
    return issues


def _interchangeable(workers: list[Worker]) -> list[Issue]:
    """A runtime or topology name means one object across the fleet (the manager holds one of each), and the
    workers of a queue draw on pools of the same names for it (MultiKueue offers each of its jobs to every one of
    them, and a job names its pool's runtime)."""
    issues: list[Issue] = []
    for kind, what in (("ClusterTrainingRuntime", "runtime"), ("Topology", "topology")):
        seen: dict[str, tuple[str, dict[str, Any]]] = {}
        for worker in workers:
            for name, obj in worker.of_kind(kind).items():
                first = seen.setdefault(name, (worker.name, obj))
                if first[1] != obj:
                    issues.append(
                        Issue(
                            _key(workers, worker),
                            f"worker {worker.name}'s {what} {name} differs from worker {first[0]}'s "
                            f"({_difference(first[1], obj)}), and the manager holds one {kind} of a name: name "
                            "their pools apart, or make them alike",
                        )
                    )
    queues: dict[str, tuple[Worker, list[str]]] = {}
    for worker in workers:
        for queue in worker.queues:
            pools = sorted(p.name for p in worker.queue_pools(queue))
            first_worker, first = queues.setdefault(queue, (worker, pools))
            if pools != first:
                issues.append(
                    Issue(
                        _key(workers, worker),
                        f"queue {queue} draws on pools {_pools(worker, queue)} on worker {worker.name} and "
                        f"{_pools(first_worker, queue)} on worker {first_worker.name}: MultiKueue offers each job of "
                        "the queue to both, and a job runs on its pool's runtime, which each has only for its own "
                        "pools; name the queues apart, or give them pools of the same name and shape",
                    )
                )
    return issues


def _pools(worker: Worker, queue: str) -> str:
    return ", ".join(p.name for p in worker.queue_pools(queue)) or "none"


def _key(workers: list[Worker], worker: Worker) -> str:
    """The config key of a worker: its stack file, or its inline keys."""
    index = next(i for i, w in enumerate(workers) if w is worker)
    return f"fleet.workers[{index}].{'config' if worker.inline else 'stackFile'}"


def _difference(a: Any, b: Any, path: str = "") -> str:
    """Where two objects first differ, as a path and the two values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in [*a, *(k for k in b if k not in a)]:
            if a.get(k) != b.get(k):
                return _difference(a.get(k), b.get(k), join_path(path, str(k)))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _difference(x, y, f"{path}[{i}]")
    return f"{path or 'the object'}: {_short(a)} vs {_short(b)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
                where = _difference(list(objects), list(other))
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
