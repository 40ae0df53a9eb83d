"""EKS: the cluster, its VPC, and GPU node pools, over pulumi_aws (imported only by AWS stacks)."""

from components.aws.cluster import EksCluster
from components.aws.nodepool import EksGpuNodePool

__all__ = ["EksCluster", "EksGpuNodePool"]
