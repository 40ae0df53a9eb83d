"""A fleet stack made into a validated fleet: its manager's stack, each worker's stack (read from its own stack file,
offline, or from its keys inline), and each job with the workers MultiKueue may dispatch it to (components/dispatch.py).
The workers of a queue are interchangeable for it, and a runtime's name means one runtime across the fleet: the
manager holds one copy of each to admit jobs, and MultiKueue offers each job of a queue to every worker that has it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, MutableMapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from components import plaintext
from components.config import parse_stack, read_stack_file
from components.dispatch import Dispatch, difference, dispatch
from components.errors import ConfigError, Issue, join_path
from components.fleetworker import Worker
from components.manifests import platform
from components.models import (
    CONFIG_NAMESPACE,
    GpuOperatorSpec,
    SchedulerSpec,
    StackConfig,
    TrainerSpec,
    TrainingOperatorSpec,
    WorkerSpec,
)
from components.resolution import resolve, resolve_raw
from components.sealing import secure_keys
from components.stack import Stack

FLEET_KEYS = ("cluster", "fleet", "jobs", "addons", "images")
"""The keys a fleet stack takes: its manager (`cluster`, and how its add-ons and images are had), its workers and its
jobs. The rest describe a cluster's GPUs and queues, which are each worker's."""


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
    """Whether a stack file's keys are a fleet's: `fleet` set (null is unset, as for every optional key)."""
    return raw.get("fleet") is not None


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
            if is_fleet(raw):
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
                            f"({difference(first[1], obj)}), and the manager holds one {kind} of a name: name "
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
