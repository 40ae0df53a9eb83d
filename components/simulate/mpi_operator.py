"""The MPI Operator (MPIJob v2beta1) as a process.

It runs with the args of the upstream standalone overlay's Deployment after the stack's own patch
(components/addons/operators.py), and the kubeconfig. Two things of v0.8.0 have no flag: it always takes part
in leader election (a Lease in --lock-namespace, which the overlay's Namespace provides; alone, it leads at
once), and it always serves its health check on :8080 of every interface (`healthCheckPort` in
cmd/mpi-operator/app/server.go). The second would let one simulation at a time run it on a machine, so its
binary is built with one edit (`HEALTH_EDITS`): the health check listens where $MPI_OPERATOR_HEALTH_ADDRESS says,
:8080 without it. Each simulation gives it a free port on 127.0.0.1; nothing else of the operator changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components.render import Rendered
from components.simulate import engines, kustomize
from components.simulate.controlplane import ControlPlane, Process, free_port, wait_log, wait_probe
from components.wellknown import MPI_OPERATOR_INSTALL as MPI_NAME

MODULE = "github.com/kubeflow/mpi-operator"
HEALTH_ENV = "MPI_OPERATOR_HEALTH_ADDRESS"
HEALTH_EDITS = (
    engines.Edit(
        "mpi-operator",
        "main.go",
        f'"{MODULE}/cmd/mpi-operator/app"',
        f'"gpu-training/engines/{MPI_NAME}/main/app"',
        "the main package runs the edited copy of app",
    ),
    engines.Edit(
        "mpi-operator",
        "app/server.go",
        'Addr:    fmt.Sprintf(":%d", healthCheckPort),',
        "Addr:    healthAddress(),",
        "the health check listens where the run says",
    ),
    engines.Edit(
        "mpi-operator",
        "app/health_address.go",
        "",
        f"""package app

import (
	"fmt"
	"os"
)

// healthAddress is where the health check listens: ${HEALTH_ENV} (gpu-training's simulate sets it), else
// upstream's fixed port.
func healthAddress() string {{
	if address := os.Getenv("{HEALTH_ENV}"); address != "" {{
		return address
	}}
	return fmt.Sprintf(":%d", healthCheckPort)
}}
""",
        "the health check listens where the run says",
    ),
)
"""Upstream hard-codes the health port (no flag, no variable): these edits let each run choose it."""
ENGINE = engines.Engine(MPI_NAME, {"mpi-operator": f"{MODULE}/cmd/mpi-operator"}, edits=HEALTH_EDITS)
VERSION_NOTE: str | None = None
OVERLAY = "manifests/overlays/standalone"
CONTAINER = "mpi-operator"
READY_LINE = "Started workers"
"""What the controller logs once its informers are synced and its workers run."""
READY_TIMEOUT = 120.0
HEALTH_TIMEOUT = 10.0


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
    port = free_port()
    progress(f"starting the MPI Operator {engines.pinned(ENGINE, MODULE)}")
    process = launch(plane, rendered, MPI_NAME, port, progress)
    wait_log(plane, process, READY_LINE, "the MPI Operator", READY_TIMEOUT)
    # The edited build listens where it was told.
    wait_probe(plane, MPI_NAME, port, HEALTH_TIMEOUT, path="/healthz")


def launch(
    plane: ControlPlane, rendered: Rendered, name: str, port: int, progress: Callable[[str], None] = lambda _: None
) -> Process:
    """Start an MPI Operator process called `name` with the overlay's args and environment as the stack patches
    them, its health check on 127.0.0.1:`port`; the namespace of its leader-election Lease applied first."""
    binary = engines.build(ENGINE, progress)["mpi-operator"]
    objects = upstream(rendered)
    deployment, container = kustomize.container(objects, MPI_NAME, CONTAINER)
    for obj in objects:
        if obj["kind"] == "Namespace":  # where its leader-election Lease lives
            plane.client().apply(obj)
    return plane.start(
        name,
        [str(binary), *container.get("args", [])],
        env={
            **kustomize.env_of(deployment, container, f"{name}-simulated"),
            "KUBECONFIG": str(plane.kubeconfig),
            HEALTH_ENV: f"127.0.0.1:{port}",
        },
    )
