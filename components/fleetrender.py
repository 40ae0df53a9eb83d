"""Render a fleet offline: each cluster's objects as YAML (the manager's under manager/, each worker's under
workers/<name>/, each laid out as a stack's render is), and a summary saying which workers can take each job."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from components import plaintext
from components.errors import ConfigError
from components.fleetobjects import ClusterObjects, clusters
from components.fleetstack import Fleet
from components.fleetworker import Worker
from components.manifests import multikueue
from components.manifests.envsecret import made_at_deploy
from components.manifests.trainingruntime import choose_runtime
from components.render import MARKER, Rendered, write
from components.stack import Stack
from components.wellknown import KUEUE_NAMESPACE

MANAGER = "manager"
"""The folder of the manager's objects."""
WORKERS = "workers"
"""The folder holding a folder of objects per worker."""


@dataclass(frozen=True, slots=True)
class RenderedFleet:
    """What a fleet renders to: the validated fleet and each cluster's objects and installs."""

    fleet: Fleet
    parts: tuple[ClusterObjects, ...]

    def stack_of(self, part: ClusterObjects) -> Stack:
        """The stack a cluster's objects belong to: the manager's, or the worker's."""
        return self.fleet.manager if part.name == MANAGER else self.fleet.worker(part.name).stack

    def summary(self) -> str:
        """The manager, each worker (where its stack is, its pools and queues), each queue's workers, each job's
        workers, what `pulumi up` makes that no file holds, and the objects per cluster."""
        fleet = self.fleet
        cluster = fleet.config.cluster
        lines = [
            f"fleet: manager {cluster.name} ({cluster.provider}) holds the queues; {len(fleet.workers)} workers run "
            "the jobs (Kueue MultiKueue)"
        ]
        for worker in fleet.workers:
            lines.append(f"  worker {worker.name}: {_origin(worker)}")
            for pool in worker.stack.pools.values():
                lines.append(f"    pool {pool.summary()}")
            queues = sorted(worker.local_queues())
            held = ", ".join(f"{q} ({worker.queues[q].gpus} GPUs) in {ns}" for ns, q in queues)
            lines.append(f"    queues: {held or 'none'}")
        for name, workers in fleet.queues.items():
            lines.append(f"  queue {name}: MultiKueue offers its jobs to {', '.join(w.name for w in workers)}")
        for job in fleet.jobs:
            plan = job.plan
            runtime = choose_runtime(plan)
            own = f"own runtime ({'; '.join(runtime.reasons)})" if runtime.reasons else f"runtime {runtime.ref['name']}"
            lines.append(
                f"  job {plan.namespace}/{plan.name}: {plan.nodes} x {plan.gpus_per_node} GPUs on queue {job.queue}, "
                f"{own}: can run on {', '.join(job.workers)}"
            )
            for worker, why in job.passed.items():
                lines.append(f"    never on {worker} (its queue cannot hold it): {why}")
        secrets = ", ".join(f"{KUEUE_NAMESPACE}/{multikueue.kubeconfig_secret_name(w.name)}" for w in fleet.workers)
        lines.append(
            f"made at deploy time, not in these files: the manager's Secrets {secrets} (key "
            f"{multikueue.KUBECONFIG_KEY}: a kubeconfig with each worker's {multikueue.WORKER_ACCOUNT} token)"
        )
        sealed = [f"{found} on {', '.join(job.workers)}" for job in fleet.jobs if (found := made_at_deploy(job.plan))]
        if sealed:
            lines.append("made at deploy time, each job's Pulumi secrets on its workers: " + "; ".join(sealed))
        for part in self.parts:
            kinds: dict[str, int] = {}
            for obj in part.objects:
                kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
            installs = [r.name for r in part.addons.remotes] + [r.name for r in part.addons.releases]
            add = f"; add-ons: {', '.join(installs)}" if installs else ""
            counted = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            lines.append(f"{part.name}: {counted}{add}")
        return "\n".join(lines)

    def warnings(self) -> list[str]:
        """What the fleet renders but would not do as well as asked (placeholders where a credential goes)."""
        return plaintext.warnings(self.fleet.config)


def _origin(worker: Worker) -> str:
    """Where a worker's platform comes from, and how the fleet reaches it."""
    if worker.inline:
        return "its keys are inline: the fleet deploys its platform, and reaches it as its cluster key says"
    spec = worker.spec
    reach = f"stack reference {spec.stack_reference}" if spec.stack_reference else "its kubeconfig (a Pulumi secret)"
    return (
        f"stack file {spec.stack_file} (its own `pulumi up` deploys its platform; the fleet adds MultiKueue's access "
        f"and its jobs' objects), reached through {reach}"
    )


def render_fleet(fleet: Fleet) -> RenderedFleet:
    """Every cluster's objects and installs."""
    return RenderedFleet(fleet, tuple(clusters(fleet)))


def write_fleet(rendered: RenderedFleet, out: Path) -> list[Path]:
    """Write the manager's objects under `out`/manager and each worker's under `out`/workers/<name>, as render
    writes a stack's, replacing an earlier render there (and removing what it wrote that this one does not)."""
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise ConfigError(f"{out} is not empty and was not written by render; choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by python -m components render; replaced on every run\n")
    for entry in out.iterdir():  # an earlier render of a stack, or of a fleet without some worker
        if entry.name not in (MARKER, MANAGER, WORKERS):
            _remove(entry)
    workers = out / WORKERS
    names = {p.name for p in rendered.parts if p.name != MANAGER}
    if workers.is_dir():
        for entry in workers.iterdir():
            if entry.name not in names:
                _remove(entry)
    files: list[Path] = []
    for part in rendered.parts:
        folder = out / MANAGER if part.name == MANAGER else workers / part.name
        files += write(Rendered(stack=rendered.stack_of(part), objects=part.objects, addons=part.addons), folder)
    return files


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        os.unlink(path)
