"""The stack files a test walks: the repository's stacks and the minimal examples."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STACK_FILES = sorted([*REPO.glob("Pulumi.*.yaml"), *REPO.glob("examples/minimal/Pulumi.*.yaml")])
"""Every Pulumi.<stack>.yaml beside Pulumi.yaml and in examples/minimal/."""
