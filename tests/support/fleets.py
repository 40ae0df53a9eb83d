"""Fleets a test writes: worker stack files and a fleet's stack file in a folder, and what resolving one refuses."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.fleetstack import resolve_fleet_file

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "fleet" / "Pulumi.fleet.yaml"

WORKER: dict[str, Any] = {
    "cluster": {"provider": "existing", "name": "w"},
    "nodePools": [{"name": "h100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": {"pool": "h100"}}],
    "scheduler": {"type": "kueue", "queues": [{"name": "research", "gpus": 32, "namespaces": ["training"]}]},
    "namespaces": [{"name": "training"}],
}
JOB: dict[str, Any] = {"name": "tune", "image": "registry.example.com/train:v1", "command": ["train.py"], "nodes": 2}


def stack_file(path: Path, keys: dict[str, Any]) -> Path:
    """A stack file holding `keys` in the gpu-training namespace."""
    path.write_text(yaml.safe_dump({"config": {f"gpu-training:{k}": v for k, v in keys.items()}}, sort_keys=False))
    return path


def worker(tmp_path: Path, name: str, **changes: Any) -> dict[str, Any]:
    """A worker given by a stack file of its own (an existing cluster with one pool and the queue research)."""
    keys = copy.deepcopy(WORKER)
    keys["cluster"]["name"] = name
    keys.update(copy.deepcopy(changes))
    stack_file(tmp_path / f"Pulumi.{name}.yaml", keys)
    return {"name": name, "stackFile": f"Pulumi.{name}.yaml", "stackReference": f"organization/gpu-training/{name}"}


def fleet_file(tmp_path: Path, workers: list[dict[str, Any]], jobs: list[dict[str, Any]], **extra: Any) -> Path:
    """A fleet's stack file: an existing manager, the workers, the jobs."""
    keys = {"cluster": {"provider": "existing", "name": "manager"}, "fleet": {"workers": workers}, "jobs": jobs}
    return stack_file(tmp_path / "Pulumi.fleet.yaml", {**keys, **extra})


def refused(path: Path) -> list[str]:
    """Every issue a fleet file is refused with, as printed."""
    with pytest.raises(ConfigError) as raised:
        resolve_fleet_file(path)
    return [str(i) for i in raised.value.issues]
