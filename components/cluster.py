"""The cluster of a stack, built by the subpackage of its provider: aws, gcp or existing.

Each cloud SDK is imported only by its own subpackage, and only when a stack uses it.
"""

from __future__ import annotations

from typing import Protocol

import pulumi
import pulumi_kubernetes as k8s

from components import repair
from components.observability import gke
from components.observability import pack as packs
from components.stack import Stack


class Cluster(Protocol):
    """What the rest of the platform needs from a cluster, whichever provider built it."""

    provider: k8s.Provider
    """The Kubernetes provider every in-cluster object uses."""
    kubeconfig: pulumi.Output[str]
    """The kubeconfig (secret)."""
    node_pools: dict[str, pulumi.Resource]
    """The GPU node pools created, by pool name (none on an existing cluster)."""
    storage_objects: list[pulumi.Resource]
    """In-cluster objects the cloud side made for its file systems and buckets (StorageClasses, PersistentVolumes)."""


def build(stack: Stack, opts: pulumi.ResourceOptions | None = None) -> Cluster:
    """The stack's cluster and GPU node pools, named after the cluster."""
    spec = stack.config.cluster
    pools = [(pool, stack.pools[pool.name]) for pool in stack.config.node_pools]
    if spec.provider == "aws":
        from components.aws import EksCluster

        return EksCluster(
            spec.name,
            spec,
            pools,
            opts,
            volumes=list(stack.config.storage.volumes),
            repair=repair.eks(stack.config),
            service_accounts=list(stack.config.service_accounts),
        )
    if spec.provider == "gcp":
        from components.gcp import GkeCluster

        monitoring = gke.monitoring_config(packs.resolve(stack.config), spec.kubernetes_version)
        return GkeCluster(
            spec.name,
            spec,
            pools,
            opts,
            volumes=list(stack.config.storage.volumes),
            monitoring=monitoring,
            service_accounts=list(stack.config.service_accounts),
        )
    from components.existing import ExistingCluster

    return ExistingCluster(spec.name, spec, pools, opts)
