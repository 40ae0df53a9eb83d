"""This release's version: one number, in pyproject.toml."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def version() -> str:
    """The package's version: the checkout's pyproject.toml, else the installed distribution's."""
    if PYPROJECT.is_file():
        return tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    try:
        return metadata.version("gpu-training")
    except metadata.PackageNotFoundError:
        return "0.0.0"
