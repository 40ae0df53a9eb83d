"""The import layers (pyproject.toml [tool.importlinter], run by `./run lint`) cover every module, and their
contracts fail on what they exist to stop: an upward import and a cycle."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.layers import REPO, layers, modules

FACADES = {"components", "components.aws", "components.gcp", "components.existing", "components.observability"}
"""Package __init__ modules that only re-export their components lazily (or hold nothing): in no layer."""


def test_every_module_is_in_a_layer() -> None:
    listed = [m for layer in layers() for m in layer]
    unplaced = [m for m in modules() if m not in FACADES and not any(m == x or m.startswith(f"{x}.") for x in listed)]
    assert not unplaced, f"add these to a layer of pyproject.toml [tool.importlinter]: {unplaced}"


def test_the_facades_import_only_lazily() -> None:
    for name in FACADES:
        path = REPO / Path(*name.split(".")) / "__init__.py"
        top = [line for line in path.read_text().splitlines() if line.startswith(("import ", "from "))]
        assert all(line.startswith(("from __future__", "from typing")) for line in top), (name, top)


def _lint(tmp_path: Path, edit: tuple[str, str]) -> subprocess.CompletedProcess[str]:
    """lint-imports over a copy of the package with one line added to one module."""
    shutil.copytree(REPO / "components", tmp_path / "components", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "tools", tmp_path / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    module, line = edit
    with (tmp_path / "components" / module).open("a") as file:
        file.write(f"\n{line}\n")
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([lint, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("edit", "broken"),
    [
        (("pool.py", "from components import render"), "components.pool is not allowed to import components.render"),
        (
            ("gpudirect.py", "from components import fabric"),
            "components.fabric -> components.gpudirect -> components.fabric",
        ),
        (
            ("models/base.py", "from components import pool"),
            "components.models is not allowed to import components.pool",
        ),
    ],
    ids=["upward", "cycle-within-a-layer", "model-reads-a-pool"],
)
def test_the_contracts_break_on_an_upward_import_or_a_cycle(tmp_path: Path, edit: tuple[str, str], broken: str) -> None:
    result = _lint(tmp_path, edit)
    assert result.returncode != 0
    assert broken in " ".join(result.stdout.split()), result.stdout[-2000:]


def test_the_contracts_hold_on_the_package_as_it_is(tmp_path: Path) -> None:
    result = _lint(tmp_path, ("errors.py", ""))
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Contracts: 2 kept, 0 broken." in result.stdout
