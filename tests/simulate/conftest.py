"""The simulate tier's fixtures: the real engines, built once into the cache, and fresh control planes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from components import catalog
from components.render import render
from components.resolution import resolve_file
from components.simulate import (
    apply,
    controlplane,
    crds,
    devices,
    dra_driver,
    engines,
    kwok,
    namespaces,
    nodes,
    seed,
)
from components.stack import Stack
from tests.support import sharedplane
from tests.support.stacks import variant


def _unavailable(reason: str) -> None:
    # CI must run this tier: there a missing toolchain fails; in a user's clone it skips, saying why.
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def small_domains(monkeypatch: pytest.MonkeyPatch) -> None:
    """simulate's assumed topology domains made small (sub-blocks and EKS bottom layers of 4, each coarser level twice
    the last), so that a few fake nodes fill several and keeping a job in one is a choice the scheduler makes."""
    monkeypatch.setattr(catalog, "_ASSUMED_SUBBLOCK", 4)
    monkeypatch.setattr(catalog, "_ASSUMED_EKS_FINEST", 4)
    monkeypatch.setattr(catalog, "_ASSUMED_FANOUT", 2)


@pytest.fixture(scope="session")
def binaries() -> dict[str, Path]:
    """etcd and the Kubernetes control plane, built from the pinned modules (cached after the first run)."""
    if shutil.which("go") is None:
        _unavailable("the simulate tier builds its engines with Go >= 1.26, and no `go` is on PATH")
    try:
        return engines.build(engines.KUBERNETES)
    except engines.BuildError as exc:
        _unavailable(f"could not build the control plane: {exc}")
        raise


@pytest.fixture(scope="session")
def definitions(binaries: dict[str, Path]) -> list[dict[str, Any]]:
    """Every CRD the stacks install, from the upstream modules at the pinned versions."""
    return list(crds.every_definition())


@pytest.fixture(scope="session")
def etcd_seed(binaries: dict[str, Path], definitions: list[dict[str, Any]]) -> Path:
    """etcd's data with every CRD installed (simulate/seed.py), which each control plane starts from."""
    return seed.etcd(binaries, seed.definitions())


@pytest.fixture(scope="session")
def worker_plane(
    binaries: dict[str, Path], etcd_seed: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[sharedplane.SharedPlane]:
    """This worker's control plane, lent to one test at a time (tests/support/sharedplane.py)."""
    shared = sharedplane.SharedPlane(
        lambda: controlplane.start(tmp_path_factory.mktemp("control-plane"), binaries, seed=etcd_seed)
    )
    yield shared
    shared.stop()


@pytest.fixture
def fresh_control_plane(
    binaries: dict[str, Path], etcd_seed: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[], controlplane.ControlPlane]]:
    """Start a fresh control plane from the seed (each call a new one), for a test that stops its plane or changes
    its CRDs, which a shared plane must keep; all are stopped after the test."""
    started: list[controlplane.ControlPlane] = []

    def start() -> controlplane.ControlPlane:
        plane = controlplane.start(tmp_path_factory.mktemp("control-plane"), binaries, seed=etcd_seed)
        started.append(plane)
        return plane

    yield start
    for plane in started:
        plane.stop()


@pytest.fixture
def control_plane(
    worker_plane: sharedplane.SharedPlane, fresh_control_plane: Callable[[], controlplane.ControlPlane]
) -> Iterator[Callable[[], controlplane.ControlPlane]]:
    """A control plane as started from the seed, each call another: the first the worker's shared plane, put back
    after the test; the others fresh."""
    lent = False

    def start() -> controlplane.ControlPlane:
        nonlocal lent
        if lent:
            return fresh_control_plane()
        lent = True
        return worker_plane.lend()

    yield start
    if lent:
        worker_plane.give_back()


@pytest.fixture(scope="session")
def kwok_binary(binaries: dict[str, Path]) -> Path:
    """kwok, built from its pinned module."""
    return engines.build(engines.KWOK)["kwok"]


def cluster_of(
    start: Callable[[], controlplane.ControlPlane],
    kwok_binary: Path,
    definitions: list[dict[str, Any]],
    stack: Stack,
    most_nodes: int = 8,
) -> controlplane.ControlPlane:
    """A fresh control plane with kwok, every CRD, and fake nodes shaped like each of the stack's pools
    (the pool's maxNodes, at most `most_nodes`); with a rack-scale NVLink pool, the DRA driver's ComputeDomain
    controller and its devices, without which those pools' multi-node pods never start; the stand-in devices of the
    DRA drivers clouds run themselves (simulate/devices.py); the namespaces the add-ons' installs would make
    (simulate/namespaces.py)."""
    plane = start()
    kwok.start(plane, kwok_binary)
    client = plane.client()
    apply.install_crds(client, definitions)
    for namespace in namespaces.stand_ins(render(stack)):
        client.apply(namespace)
    for pool in stack.pools.values():
        for node in nodes.pool_nodes(pool, min(pool.max_nodes, most_nodes)):
            client.apply(node)
    devices.publish(client, stack.pools.values())
    if dra_driver.rack_scale(stack.pools.values()):
        dra_driver.serve(plane, stack.pools.values())
    return plane


def indexed_variant(stack_file: Path, tmp_path: Path, drop: tuple[str, ...], *, gang: bool) -> Stack:
    """The stack with every job launched as an Indexed Job (the job keys of other launchers in `drop` removed),
    and with no gang scheduler unless `gang`."""

    def edit(config: dict[str, Any]) -> None:
        if not gang:
            config["gpu-training:scheduler"] = {"type": "none"}
            # Queued provisioning is Kueue's admission check: without a gang scheduler the pools' nodes are there from
            # the start, as cluster_of makes them.
            for pool in config.get("gpu-training:nodePools", []):
                pool.pop("queuedProvisioning", None)
        for job in config.get("gpu-training:jobs", []):
            for key in drop:
                job.pop(key, None)
            job["launcher"] = "indexed"

    return resolve_file(variant(stack_file, tmp_path, edit))
