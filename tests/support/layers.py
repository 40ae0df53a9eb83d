"""The import layers pyproject.toml declares for import-linter, read as data for the tests that rest on them."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHELL = "components.platform"
"""The Pulumi program: it and the layers above it (and the cloud shells just below) may import Pulumi."""


def layers() -> list[list[str]]:
    """The modules of each layer, top first."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return [[m.strip() for m in layer.replace("|", ":").split(":")] for layer in contract["layers"]]


def pure() -> list[str]:
    """Every module or package of the layers below the cloud shells: the pure core."""
    found = layers()
    shells = next(i for i, layer in enumerate(found) if layer == [SHELL]) + 1
    return [m for layer in found[shells + 1 :] for m in layer]


def modules() -> list[str]:
    """Every module of the components package, by dotted name."""
    names = []
    for path in sorted((REPO / "components").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names
