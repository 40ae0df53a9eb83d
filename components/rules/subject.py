"""What a rule looks at: a Kubernetes object, or a cloud node pool or file system."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Subject:
    """What a rule looks at: a Kubernetes object, or a cloud node pool or file system, with its name."""

    key: str
    """Kind/namespace/name, or the cloud resource's name."""
    kind: str
    """The object kind, or `NodePool` / `FileSystem` for cloud facts."""
    data: dict[str, Any]
    """The object as a dict, or the facts of a cloud resource."""
    urn: str | None = None
    """The Pulumi URN, when the subject comes from a preview."""
    source: str | None = None
    """The file it was read from, offline."""
    duplicate_keys: tuple[str, ...] = ()
    """Keys its YAML document states twice in one mapping (YAML keeps the last), as `path: key (lines)`."""
