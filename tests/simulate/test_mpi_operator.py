"""The MPI Operator's machine-wide lock on its fixed health port (components/simulate/mpi_operator.py)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from components.simulate import mpi_operator
from components.simulate.controlplane import StartError


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPU_TRAINING_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _plane(folder: Path) -> SimpleNamespace:
    return SimpleNamespace(folder=folder)


def test_the_lock_names_the_run_that_holds_it_and_a_second_run_gives_up_with_that_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = mpi_operator._lock_port(_plane(tmp_path / "run-a"), lambda _: None)
    try:
        monkeypatch.setattr(mpi_operator, "LOCK_TIMEOUT", 1.5)
        said: list[str] = []
        with pytest.raises(StartError, match="run-a") as error:
            mpi_operator._lock_port(_plane(tmp_path / "run-b"), said.append)
        assert ":8080" in str(error.value)
        assert said == [f"waiting for the MPI Operator of {tmp_path / 'run-a'} to stop (it holds :8080)"]
    finally:
        os.close(first)


def test_a_second_run_takes_the_lock_once_the_first_operator_process_exits(tmp_path: Path) -> None:
    first = mpi_operator._lock_port(_plane(tmp_path / "run-a"), lambda _: None)
    # As start() does: the operator inherits the descriptor and ours is closed, so the lock is the child's.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"], pass_fds=(first,))
    os.close(first)
    started = time.monotonic()
    second = mpi_operator._lock_port(_plane(tmp_path / "run-b"), lambda _: None)
    try:
        assert child.poll() is not None, "the lock was taken while the first operator still ran"
        assert time.monotonic() - started >= 1.0
        assert (mpi_operator.engines.cache_dir() / "mpi-operator.lock").read_text() == str(tmp_path / "run-b")
    finally:
        os.close(second)
        child.wait()


def test_the_lock_is_exclusive_across_processes(tmp_path: Path) -> None:
    held = mpi_operator._lock_port(_plane(tmp_path / "run-a"), lambda _: None)
    try:
        other = os.open(mpi_operator.engines.cache_dir() / "mpi-operator.lock", os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(other)
    finally:
        os.close(held)
