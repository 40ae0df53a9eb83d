"""The Cluster Autoscaler on EKS: it scales the node group pools between minNodes and maxNodes, and serves the
ProvisioningRequests of those with queued provisioning."""

from __future__ import annotations

from components import nodecheck
from components.addons.install import HelmRelease, RemoteInstall
from components.models import AwsClusterSpec
from components.pool import Pool
from components.stack import Stack
from components.versions import CLUSTER_AUTOSCALER, CLUSTER_AUTOSCALER_IMAGES
from components.versions import provisioning_request_crd as provisioning_request_crd_remote
from components.wellknown import STARTUP_TAINT_PREFIX
from components.wellknown import SYSTEM_NAMESPACE as NAMESPACE

NAME = "cluster-autoscaler"
SERVICE_ACCOUNT = "cluster-autoscaler"


CRD_NAME = "provisioning-request-crd"
"""The remote install of the ProvisioningRequest CRD, which the autoscaler and Kueue's admission check need."""


def needed(stack: Stack) -> bool:
    """Whether a node group pool of the stack can change size, or is provisioned through ProvisioningRequests, so
    something must scale it or serve them."""
    return any(p.cluster_autoscaler_makes_nodes for p in stack.pools.values())


def serves_requests(pool: Pool) -> bool:
    """Whether the Cluster Autoscaler serves the pool's ProvisioningRequests: a node group pool with queued
    provisioning."""
    return pool.provisioner == "nodegroup" and pool.provisioning_class is not None


def requests_served(stack: Stack) -> bool:
    """Whether the stack's Cluster Autoscaler serves ProvisioningRequests (an EKS stack with a queued node group)."""
    return isinstance(stack.config.cluster, AwsClusterSpec) and any(serves_requests(p) for p in stack.pools.values())


def provisioning_request_crd(stack: Stack) -> RemoteInstall | None:
    """The ProvisioningRequest CRD, when the stack's Cluster Autoscaler serves ProvisioningRequests. Kueue sets its
    admission check controller up only when the CRD is served as it starts (cmd/kueue/main.go,
    provisioning.ServerSupportsProvisioningRequest), so Kueue waits for it too."""
    if not requests_served(stack):
        return None
    return RemoteInstall(CRD_NAME, (provisioning_request_crd_remote(stack.config.cluster.kubernetes_version),))


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
    # A new node comes up with the node check's taint, which no pending pod tolerates: the autoscaler must not
    # count it when it asks whether a node would take the pod, and treats the node as starting meanwhile. A key
    # under STARTUP_TAINT_PREFIX says so by itself; any other startup taint needs the flag.
    startup = sorted(
        {
            t.key
            for p in stack.pools.values()
            if p.autoscaled
            for t in p.startup_taints
            if not t.key.startswith(STARTUP_TAINT_PREFIX)
        }
    )
    if startup:
        values["extraArgs"] = {"startup-taint": ",".join(startup)}
    if (minutes := startup_minutes(stack)) is not None:
        values["extraArgs"] = {**values.get("extraArgs", {}), "max-node-startup-time": f"{minutes}m"}
    needs: tuple[str, ...] = ()
    if requests_served(stack):
        # FAQ.md "Enabling ProvisioningRequest Support": the flag, and JSON for the API content type (the CRD's
        # objects have no protobuf form); the chart passes each extraArgs entry as --<key>=<value>.
        values["extraArgs"] = {
            **values.get("extraArgs", {}),
            "enable-provisioning-requests": "true",
            "kube-api-content-type": "application/json",
        }
        needs = (CRD_NAME,)
    return HelmRelease(NAME, CLUSTER_AUTOSCALER, NAMESPACE, values, needs=needs)


def startup_minutes(stack: Stack) -> int | None:
    """How long the autoscaler must count a new node under the node check's startup taint as starting, when
    that is longer than its default and it can be told: the longest start and check of the pools it scales."""
    needed = [
        nodecheck.startup_minutes(check)
        for pool in stack.pools.values()
        if (check := stack.node_checks.get(pool.name)) and nodecheck.startup_allowance(stack.config, pool) == "settable"
    ]
    longest = max(needed, default=0)
    return longest if longest > nodecheck.AUTOSCALER_STARTUP_MINUTES else None
