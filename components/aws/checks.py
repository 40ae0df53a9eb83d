"""What only EKS asks of a whole stack: a Cluster Autoscaler released for the cluster's minor."""

from __future__ import annotations

from components.errors import Issue
from components.models import AwsClusterSpec, StackConfig
from components.pool import Pool
from components.versions import CLUSTER_AUTOSCALER_IMAGES


def autoscaler_release(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
    """A node group pool that scales needs a Cluster Autoscaler released for the cluster's minor."""
    cluster = config.cluster
    scaling = [p for p in pools.values() if p.autoscaled]
    if (
        not isinstance(cluster, AwsClusterSpec)
        or not scaling
        or cluster.kubernetes_version in CLUSTER_AUTOSCALER_IMAGES
    ):
        return []
    return [
        Issue(
            "cluster.kubernetesVersion",
            f"pool '{scaling[0].name}' is scaled by the Cluster Autoscaler, which has no release pinned for "
            f"{cluster.kubernetes_version} (pinned: {', '.join(CLUSTER_AUTOSCALER_IMAGES)}); use one of those, "
            "or let Karpenter provision the pool (minNodes: 0)",
        )
    ]
