"""A stack file written from config data, and the one located error render gives for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.errors import ConfigError, Issue
from components.render import render
from components.resolution import resolve_file


def write_stack(folder: Path, raw: dict[str, Any], name: str = "Pulumi.dev.yaml") -> Path:
    """A stack file holding `raw` as its gpu-training config."""
    path = folder / name
    path.write_text(yaml.safe_dump({"config": {f"gpu-training:{k}": v for k, v in raw.items()}}, sort_keys=False))
    return path


def refusal(folder: Path, raw: dict[str, Any]) -> tuple[Issue, str]:
    """The first issue render refuses the stack with, and the stack file's line it names (asserted to be there)."""
    path = write_stack(folder, raw)
    with pytest.raises(ConfigError) as caught:
        render(resolve_file(path))
    issue = caught.value.issues[0]
    assert issue.source == str(path), str(caught.value)
    assert issue.line, f"no line for {issue.path}: {caught.value}"
    return issue, path.read_text().splitlines()[issue.line - 1]
