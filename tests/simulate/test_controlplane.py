"""Listening ports for the engines a simulation starts: never from the kernel's ephemeral range, never shared."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from components.simulate import controlplane


def _ephemeral() -> range:
    low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    return range(low, high + 1)


def test_ports_come_from_below_the_ephemeral_range_and_are_not_handed_out_twice() -> None:
    """An outgoing connection cannot take a port between its choice and its bind, and no two engines are told
    the same port."""
    ports = [controlplane.free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)
    assert not set(ports) & set(_ephemeral())


def test_each_xdist_worker_has_its_own_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers starting simulations at once never pick the same port."""
    blocks = []
    for worker in ("gw0", "gw1", "gw2"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        blocks.append(set(controlplane._listen_block()))
    assert not blocks[0] & blocks[1] and not blocks[1] & blocks[2] and not blocks[0] & blocks[2]


def test_a_port_something_listens_on_is_passed_over() -> None:
    """A port still held (by an engine of an earlier run) is skipped, not handed out."""
    ports = controlplane._Ports()
    first = ports.take()
    assert first is not None
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", first))
        holder.listen()
        ports.turn -= 1  # come round to it again
        assert ports.take() not in (first, None)


def test_a_process_started_again_keeps_the_earlier_ones_log(tmp_path: Path) -> None:
    plane = controlplane.ControlPlane(
        tmp_path, "https://127.0.0.1:1", "token", tmp_path / "ca", tmp_path / "kubeconfig"
    )
    for word in ("first", "second", "third"):
        process = plane.start("kwok", ["echo", word])
        process.popen.wait()
        plane.processes.clear()  # stopped, as a shared plane's reset stops what a test added
    assert (tmp_path / "kwok.log").read_text() == "third\n"
    assert (tmp_path / "kwok.1.log").read_text() == "first\n"
    assert (tmp_path / "kwok.2.log").read_text() == "second\n"
