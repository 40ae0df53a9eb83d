"""`./run`, the entry point on a fresh machine: a note before the first install's long silence, and a command's
relative paths read from the folder the user is in, not the repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Stands in for python3 and the venv's python: `-m venv DIR` makes DIR/bin/python (this script); anything else
# prints the folder it runs in and its arguments.
STUB = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then exit 0; fi
echo "cwd=$PWD"; echo "args=$*"; echo "pythonpath=$PYTHONPATH"
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A repository holding ./run and its requirements, with no .venv yet, and python3 stubbed on PATH."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("run", "requirements.txt", "requirements-dev.txt"):
        shutil.copy2(REPO / name, repo / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(STUB)
    (bin_dir / "python3").chmod(0o755)
    return repo


def run(clone: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{clone.parent / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(clone / "run"), *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)


def test_the_first_run_says_what_it_installs_before_the_silence(clone: Path) -> None:
    first = run(clone, clone, "render", "--stack", "dev")
    assert first.stderr.splitlines()[0].startswith("./run: first run: installing the pinned requirements into .venv")
    assert "needs network" in first.stderr
    assert run(clone, clone, "render", "--stack", "dev").stderr == "", "installed: nothing to say"


def test_relative_paths_are_the_users_folder(clone: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    done = run(clone, mine, "render", "--config", "Pulumi.x.yaml", "--out", "out/x")
    assert f"cwd={mine}" in done.stdout
    assert "args=-P -m components render --config Pulumi.x.yaml --out out/x" in done.stdout
    assert f"pythonpath={clone}" in done.stdout, "the repository's components, from any folder"


def test_version_from_run_is_pyprojects(clone: Path) -> None:
    """./run hands --version to the command line (tests/test_cli.py checks what it prints)."""
    assert "args=-m components --version" in run(clone, clone, "--version").stdout
