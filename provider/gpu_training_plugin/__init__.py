"""The gpu-training component plugin: TrainingJob and Platform for every Pulumi language."""

import tomllib
from importlib import metadata
from pathlib import Path

from .fronts import Platform, TrainingJob

COMPONENTS = [TrainingJob, Platform]
"""What the plugin serves."""


def version() -> str:
    """The package's version: the checkout's pyproject.toml, else the installed distribution's."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if pyproject.is_file():
        return tomllib.loads(pyproject.read_text())["project"]["version"]
    try:
        return metadata.version("gpu-training")
    except metadata.PackageNotFoundError:
        return "0.0.0"


__all__ = ["COMPONENTS", "Platform", "TrainingJob", "version"]
