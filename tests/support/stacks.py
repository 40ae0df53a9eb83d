"""The stack files a test walks: the repository's stacks and the minimal examples; and variants of them a test
writes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
STACK_FILES = sorted([*REPO.glob("Pulumi.*.yaml"), *REPO.glob("examples/minimal/Pulumi.*.yaml")])
"""Every Pulumi.<stack>.yaml beside Pulumi.yaml and in examples/minimal/."""


def is_fleet_file(path: Path) -> bool:
    """Whether a stack file is a fleet's (its config sets gpu-training:fleet), which is read as a fleet, not a stack."""
    config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
    return "gpu-training:fleet" in config or "fleet" in config


EXAMPLE_STACKS = sorted(p for p in REPO.glob("examples/*/Pulumi.*.yaml") if not is_fleet_file(p))
"""Every example stack file, a fleet's workers' included, but not the fleets'."""
FLEET_FILES = sorted(p for p in REPO.glob("examples/*/Pulumi.*.yaml") if is_fleet_file(p))
"""Every example fleet's stack file."""


def variant(stack_file: Path, folder: Path, edit: Callable[[dict[str, Any]], object], name: str = "") -> Path:
    """A copy of `stack_file` in `folder`, named `name` (else as the stack file is: the stack's name comes from it),
    with `edit` applied to its config in place."""
    doc = yaml.safe_load(stack_file.read_text())
    edit(doc["config"])
    path = folder / (name or stack_file.name)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
