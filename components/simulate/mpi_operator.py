"""The MPI Operator (MPIJob v2beta1) as a process.

It runs with the args of the upstream standalone overlay's Deployment after the stack's own patch
(components/addons/operators.py), and the kubeconfig. Two things of v0.8.0 have no flag: it always takes part
in leader election (a Lease in --lock-namespace, which the overlay's Namespace provides; alone, it leads at
once), and it always serves its health check on :8080 of every interface. So one MPI Operator runs on a
machine at a time: it holds an exclusive lock in the cache folder for as long as it lives (the lock's file
descriptor is inherited by the operator process, so a run kept with --keep holds it too), and a second
simulation waits for it.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from components.addons.operators import MPI_NAME
from components.render import Rendered
from components.simulate import engines, kustomize
from components.simulate.controlplane import ControlPlane, StartError, wait_log

MODULE = "github.com/kubeflow/mpi-operator"
ENGINE = engines.Engine(MPI_NAME, {"mpi-operator": f"{MODULE}/cmd/mpi-operator"})
VERSION_NOTE: str | None = None
OVERLAY = "manifests/overlays/standalone"
CONTAINER = "mpi-operator"
HEALTH_PORT = 8080
"""Fixed in cmd/mpi-operator/app/server.go."""
READY_LINE = "Started workers"
"""What the controller logs once its informers are synced and its workers run."""
READY_TIMEOUT = 120.0
LOCK_TIMEOUT = 1800.0
"""How long to wait for another simulation's MPI Operator to stop."""


def installed(rendered: Rendered) -> bool:
    """Whether the stack installs the MPI Operator."""
    return any(r.name == MPI_NAME for r in rendered.addons.remotes)


def upstream(rendered: Rendered) -> list[dict[str, Any]]:
    """The standalone overlay's objects at the pinned version, as the stack patches them."""
    root = engines.download(MODULE, engines.pinned(ENGINE, MODULE))
    return kustomize.patched(root / OVERLAY, rendered.addons.patches[MPI_NAME])


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Build and start the MPI Operator against `plane`, configured as the stack configures it; return once
    its caches are synced and its workers run."""
    binary = engines.build(ENGINE, progress)["mpi-operator"]
    objects = upstream(rendered)
    deployment, container = kustomize.container(objects, MPI_NAME, CONTAINER)
    client = plane.client()
    for obj in objects:
        if obj["kind"] == "Namespace":  # where its leader-election Lease lives
            client.apply(obj)
    lock = _lock_port(plane, progress)
    try:
        with socket.socket() as probe:
            try:
                probe.bind(("", HEALTH_PORT))
            except OSError:
                raise StartError(
                    f"the MPI Operator serves its health check on :{HEALTH_PORT} (no flag moves it), which a "
                    "process other than a simulation's MPI Operator holds"
                ) from None
        progress(f"starting the MPI Operator {engines.pinned(ENGINE, MODULE)}")
        process = plane.start(
            MPI_NAME,
            [str(binary), *container.get("args", [])],
            env={
                **kustomize.env_of(deployment, container, f"{MPI_NAME}-simulated"),
                "KUBECONFIG": str(plane.kubeconfig),
            },
            pass_fds=(lock,),
        )
    finally:
        os.close(lock)  # the operator process keeps its own copy: the lock lives exactly as long as it does
    wait_log(plane, process, READY_LINE, "the MPI Operator", READY_TIMEOUT)


def _lock_port(plane: ControlPlane, progress: Callable[[str], None]) -> int:
    """Take the machine's MPI Operator lock, waiting up to LOCK_TIMEOUT for another simulation's operator to
    stop; return its file descriptor, which names this run's folder to whoever waits next."""
    path = engines.cache_dir() / "mpi-operator.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + LOCK_TIMEOUT
    waiting = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            holder = path.read_text(errors="replace").strip() or "another simulation"
            if time.monotonic() > deadline:
                os.close(fd)
                raise StartError(
                    f"the MPI Operator needs :{HEALTH_PORT} (no flag moves it), and the one of {holder} has held it "
                    f"for {LOCK_TIMEOUT / 60:.0f} min; stop that simulation (a --keep run says how)"
                ) from None
            if not waiting:
                progress(f"waiting for the MPI Operator of {holder} to stop (it holds :{HEALTH_PORT})")
                waiting = True
            time.sleep(1.0)
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(plane.folder).encode(), 0)
    return fd
