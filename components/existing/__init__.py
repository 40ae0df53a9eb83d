"""An existing Kubernetes cluster: nothing is created cloud-side.

The pool rules (pools) are pure; the component loads pulumi when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.existing.cluster import ExistingCluster

__all__ = ["ExistingCluster"]


def __getattr__(name: str) -> Any:
    if name == "ExistingCluster":
        from components.existing.cluster import ExistingCluster

        return ExistingCluster
    raise AttributeError(f"module 'components.existing' has no attribute {name!r}")
