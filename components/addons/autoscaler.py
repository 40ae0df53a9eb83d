"""The Cluster Autoscaler on EKS: it scales the node group pools between minNodes and maxNodes."""

from __future__ import annotations

from components.addons.install import HelmRelease
from components.models import AwsClusterSpec
from components.validation import Stack
from components.versions import CLUSTER_AUTOSCALER, CLUSTER_AUTOSCALER_IMAGES

NAME = "cluster-autoscaler"
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"


def needed(stack: Stack) -> bool:
    """Whether a node group pool of the stack can change size, so something must scale it."""
    return any(p.autoscaled for p in stack.pools.values())


def release(stack: Stack) -> HelmRelease | None:
    """The autoscaler, finding the cluster's node groups by the tags EKS puts on their Auto Scaling
    groups, at the release of the cluster's Kubernetes minor, on the system nodes."""
    cluster = stack.config.cluster
    if not isinstance(cluster, AwsClusterSpec) or not needed(stack):
        return None
    values = {
        "cloudProvider": "aws",
        "awsRegion": cluster.region,
        "autoDiscovery": {"clusterName": cluster.name},
        "rbac": {"serviceAccount": {"name": SERVICE_ACCOUNT}},
        "image": {"tag": CLUSTER_AUTOSCALER_IMAGES[cluster.kubernetes_version]},
        "nodeSelector": {"gpu-training/role": "system"},
    }
    startup = sorted({t.key for p in stack.pools.values() if p.autoscaled for t in p.startup_taints})
    if startup:
        # A new node comes up with the node check's taint, which no pending pod tolerates: the autoscaler must
        # not count it when it asks whether a node would take the pod, and treats the node as starting meanwhile.
        values["extraArgs"] = {"startup-taint": ",".join(startup)}
    return HelmRelease(NAME, CLUSTER_AUTOSCALER, NAMESPACE, values)
