"""EKS: the cluster, its VPC, and GPU node pools, over pulumi_aws (imported only by AWS stacks).

The argument builders (network, nodegroup, kubeconfig, iam) are pure; the components load
pulumi_aws when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.aws.cluster import EksCluster
    from components.aws.nodepool import EksGpuNodePool

__all__ = ["EksCluster", "EksGpuNodePool"]


def __getattr__(name: str) -> Any:
    if name == "EksCluster":
        from components.aws.cluster import EksCluster

        return EksCluster
    if name == "EksGpuNodePool":
        from components.aws.nodepool import EksGpuNodePool

        return EksGpuNodePool
    raise AttributeError(f"module 'components.aws' has no attribute {name!r}")
