"""The MPI Operator's health port, chosen per run (components/simulate/mpi_operator.py): upstream fixes it at
:8080, so the binary is built with an edit, and two simulations on one machine no longer wait on each other."""

from __future__ import annotations

import dataclasses
import shutil
import socket
import urllib.request
from pathlib import Path

import pytest

from components.render import render
from components.resolution import resolve_file
from components.simulate import engines, mpi_operator
from components.simulate.controlplane import free_port, wait_log, wait_probe

REPO = Path(__file__).resolve().parents[2]


def test_an_edit_changes_its_text_exactly_once(tmp_path: Path) -> None:
    (tmp_path / "server.go").write_text('Addr: fmt.Sprintf(":%d", port),\n')
    engines.Edit("b", "server.go", 'fmt.Sprintf(":%d", port)', "address()", "why").apply(tmp_path)
    assert (tmp_path / "server.go").read_text() == "Addr: address(),\n"


@pytest.mark.parametrize("text", ["nothing to change\n", "twice\ntwice\n"])
def test_an_edit_whose_text_is_not_there_once_stops_the_build_naming_the_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "server.go").write_text(text)
    with pytest.raises(engines.BuildError, match=r"server\.go: the edit for 'why' expects 'twice' exactly once"):
        engines.Edit("b", "server.go", "twice", "once", "why").apply(tmp_path)


def test_an_edit_without_old_text_adds_a_file_of_ours(tmp_path: Path) -> None:
    engines.Edit("b", "extra.go", "", "package app\n", "why").apply(tmp_path)
    assert (tmp_path / "extra.go").read_text() == "package app\n"


@pytest.mark.skipif(shutil.which("go") is None, reason="the build key hashes the Go version")
def test_the_edits_are_part_of_the_build_key() -> None:
    unedited = dataclasses.replace(mpi_operator.ENGINE, edits=())
    assert engines.key(unedited) != engines.key(mpi_operator.ENGINE)


@pytest.mark.simulate
def test_the_edits_apply_to_the_pinned_release(tmp_path: Path) -> None:
    source = engines.download(mpi_operator.MODULE, engines.pinned(mpi_operator.ENGINE, mpi_operator.MODULE))
    tree = tmp_path / "main"
    shutil.copytree(source / "cmd" / "mpi-operator", tree)
    for path in [tree, *tree.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    for edit in mpi_operator.HEALTH_EDITS:
        edit.apply(tree)
    assert "healthAddress()" in (tree / "app" / "server.go").read_text()


@pytest.mark.simulate
def test_two_operators_run_at_once_each_answering_on_its_own_port(control_plane, tmp_path: Path) -> None:
    plane = control_plane()
    rendered = render(resolve_file(REPO / "Pulumi.dev.yaml"))
    ports = [free_port() for _ in range(2)]
    processes = [mpi_operator.launch(plane, rendered, f"mpi-operator-{i}", port) for i, port in enumerate(ports)]
    for i, (process, port) in enumerate(zip(processes, ports, strict=True)):
        wait_log(plane, process, "for health check", "an MPI Operator", 60)
        wait_probe(plane, f"mpi-operator-{i}", port, 10, path="/healthz")
    plane.check_alive()  # neither exited on a port the other holds
    with socket.socket() as probe:  # and neither took upstream's :8080
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", 8080))
        except OSError:
            pytest.skip("something else on this machine holds :8080, so whether the operators took it is unknown")
    with urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}/healthz", timeout=2) as response:
        assert response.status == 200
