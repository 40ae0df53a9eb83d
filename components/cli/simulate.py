"""`python -m components simulate`: a stack's jobs on the real control plane, schedulers and operators."""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
from typing import NoReturn

from components.config import read_stack_file
from components.fleetrender import MANAGER, render_fleet
from components.fleetstack import Fleet, is_fleet, resolve_fleet_file
from components.render import Rendered, render
from components.resolution import resolve_file
from components.simulate import apply, controlplane, engines, simulation
from components.simulate import fleet as simfleet
from components.simulate.report import Report

OK, NOT_SCHEDULED, USAGE = 0, 1, 2


def _progress() -> Callable[[str], None]:
    started = time.monotonic()

    def say(message: str) -> None:
        print(f"[{time.monotonic() - started:5.0f}s] {message}", file=sys.stderr, flush=True)

    return say


def _terminated(signum: int, _: FrameType | None) -> NoReturn:
    # Python dies on SIGTERM without unwinding; as an exception it stops every process the run started.
    raise SystemExit(128 + signum)


def simulate(
    path: Path,
    name: str,
    *,
    nodes: int | None,
    timeout: float,
    keep: bool,
    output: str,
    take_away: str | None = None,
) -> tuple[str, int]:
    """Simulate the stack file at `path` (a fleet's: its manager and every worker, `take_away` stopped once its jobs
    run); the report and the exit code (0 all whole, 1 not, 2 cannot run)."""
    raw, _ = read_stack_file(path)
    if is_fleet(raw):
        if keep or nodes is not None:
            return "error: --keep and --nodes are for one stack: a fleet's workers have their pools' nodes", USAGE
        fleet = resolve_fleet_file(path)
        manager, workers = stacks_of(fleet)
        if take_away is not None and take_away not in workers:
            return f"error: --take-away {take_away}: the fleet's workers are {', '.join(workers)}", USAGE
        candidates = {f"{d.plan.namespace}/{d.plan.name}": d.workers for d in fleet.jobs}
        return simulate_fleet(
            manager, workers, name, timeout=timeout, take_away=take_away, output=output, candidates=candidates
        )
    if take_away is not None:
        return f"error: --take-away names a worker of a fleet, and {path} is one stack", USAGE
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return _simulate(path, name, nodes=nodes, timeout=timeout, keep=keep, output=output)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _simulate(path: Path, name: str, *, nodes: int | None, timeout: float, keep: bool, output: str) -> tuple[str, int]:
    rendered = render(resolve_file(path))
    progress = _progress()
    folder = engines.cache_dir() / "runs" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        with simulation.running(rendered, folder, nodes, progress, keep=keep) as cluster:
            progress(f"cluster ready; kubeconfig: {cluster.plane.kubeconfig}")
            report = Report(
                stack=name,
                scheduler=rendered.stack.scheduler,
                kubeconfig=str(cluster.plane.kubeconfig),
                nodes={**simulation.pool_sizes(rendered, nodes), "cpu": simulation.CPU_NODES},
                controllers=cluster.controllers,
                makers=cluster.makers,
                notes=cluster.notes,
                kept=keep,
            )
            for workload in rendered.workloads:
                meta = workload.workload["metadata"]
                progress(f"placing {workload.workload['kind']} {meta['namespace']}/{meta['name']}")
                report.placements.append(simulation.place(cluster, workload, timeout))
                simulation.remove(cluster, workload)
            if keep:
                for workload in rendered.workloads:
                    apply.apply_all(cluster.client, list(workload.objects))
                _keep_note(cluster.plane, progress)
    except engines.BuildError as exc:
        return f"error: {exc}", USAGE
    except controlplane.StartError as exc:
        return f"error: the simulated cluster did not start: {exc}\nlogs: {folder}", USAGE
    except apply.ApplyError as exc:
        return f"error: {exc}\nlogs: {folder}", NOT_SCHEDULED
    text = report.as_json() if output == "json" else report.table()
    if report.ok and not keep:
        shutil.rmtree(folder, ignore_errors=True)  # the logs are kept only where something did not schedule
    elif not report.ok:
        text += f"\nlogs of every process: {folder}" if output != "json" else ""
    return text, OK if report.ok else NOT_SCHEDULED


def fleet_stacks(path: Path) -> tuple[Rendered, dict[str, Rendered]]:
    """A fleet stack file as simulate runs it: the manager's stack with the fleet's objects for it (its jobs among
    them), and each worker's own stack with what the fleet adds there (MultiKueue's access, its jobs' objects)."""
    return stacks_of(resolve_fleet_file(path))


def stacks_of(fleet: Fleet) -> tuple[Rendered, dict[str, Rendered]]:
    """A resolved fleet as simulate runs it (`fleet_stacks`)."""
    parts = render_fleet(fleet).parts
    ours = next(p for p in parts if p.name == MANAGER)
    manager = Rendered(stack=fleet.manager, objects=ours.objects, addons=ours.addons)
    workers = {
        p.name: simfleet.with_objects(render(fleet.worker(p.name).stack), list(p.objects))
        for p in parts
        if p.name != MANAGER
    }
    return manager, workers


def simulate_fleet(
    manager: Rendered,
    workers: dict[str, Rendered],
    name: str,
    *,
    timeout: float,
    take_away: str | None,
    output: str,
    candidates: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[str, int]:
    """Simulate a rendered fleet: its manager (its jobs among its objects) and each worker's stack with what the fleet
    makes there; with `take_away`, that worker is then stopped and the jobs it held must run whole on another. The
    report and the exit code (0 every job whole, 1 not, 2 cannot run). `candidates`: the workers render found can
    run each job (`namespace/name`), which the report names for a job no worker left can take."""
    previous = signal.signal(signal.SIGTERM, _terminated)
    progress = _progress()
    folder = engines.cache_dir() / "runs" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        with simfleet.running(manager, workers, folder, progress) as run:
            progress("submitting the jobs to the manager")
            run.submit()
            run.wait(timeout)
            if take_away is not None:
                progress(f"taking worker {take_away} away")
                run.take_away(take_away)
                run.wait(timeout)
            notes, reports = run.notes, list(run.reports.values())
        for report in reports:
            left = [w for w in (candidates or {}).get(report.job, ()) if w != take_away]
            if candidates and not report.whole and not left:
                report.reason = f"no worker left can run it (render: only {', '.join(candidates[report.job])})"
    except (engines.BuildError, simfleet.FleetError) as exc:
        return f"error: {exc}\nlogs: {folder}", USAGE
    except apply.ApplyError as exc:
        return f"error: {exc}\nlogs: {folder}", NOT_SCHEDULED
    finally:
        signal.signal(signal.SIGTERM, previous)
    ok = all(r.whole for r in reports)
    if output == "json":
        doc = {"fleet": name, "ok": ok, "notes": notes, "notSimulated": list(simulation.NOT_SIMULATED)}
        text = json.dumps({**doc, "jobs": [r.as_dict() for r in reports]}, indent=2)
    else:
        lines = [f"fleet {name}: a manager and {len(workers)} workers", *(f"note: {n}" for n in notes), ""]
        lines += [r.line() for r in reports]
        lines += ["", *(f"not simulated: {n}" for n in simulation.NOT_SIMULATED)]
        text = "\n".join(lines)
    if ok:
        shutil.rmtree(folder, ignore_errors=True)
    elif output != "json":
        text += f"\nlogs of every process: {folder}"
    return text, OK if ok else NOT_SCHEDULED


def _keep_note(plane: controlplane.ControlPlane, progress: Callable[[str], None]) -> None:
    pids = plane.folder / "pids"
    pids.write_text("".join(f"{p.popen.pid}\n" for p in plane.processes))
    progress("left running with every job applied, as pulumi up leaves them:")
    progress(f"  kubectl --kubeconfig {plane.kubeconfig} get nodes,pods -A")
    progress(f"  stop it: kill -- $(sed 's/^/-/' {pids})")
