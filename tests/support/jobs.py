"""Job entries for stack variants in tests, as a user writes them under gpu-training:jobs."""

from __future__ import annotations

from typing import Any


def indexed(name: str, nodes: int, **extra: Any) -> dict[str, Any]:
    """An Indexed Job of `nodes` workers running train.py; `extra` keys are the job's own (topology, resources...)."""
    return {
        "name": name,
        "launcher": "indexed",
        "image": "registry.example.com/training:v1",
        "command": ["train.py"],
        "nodes": nodes,
        **extra,
    }
