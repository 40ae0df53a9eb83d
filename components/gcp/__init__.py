"""GKE: the cluster, its node pools and a Kubernetes provider, built with pulumi_gcp (imported only by GKE stacks).

The argument builders (nodepool, kubeconfig) are pure; the component loads pulumi_gcp when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.gcp.cluster import GkeCluster

__all__ = ["GkeCluster"]


def __getattr__(name: str) -> Any:
    if name == "GkeCluster":
        from components.gcp.cluster import GkeCluster

        return GkeCluster
    raise AttributeError(f"module 'components.gcp' has no attribute {name!r}")
