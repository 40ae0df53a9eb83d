"""The plain Kubernetes objects a stack declares: namespaces, networks, storage and queues."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from components.images import mirror_objects
from components.manifests import nodecheck
from components.manifests.namespace import gpu_quota, namespace
from components.manifests.network import network_attachment_definition
from components.manifests.queues import (
    admission_check,
    cluster_queue,
    default_flavor,
    kueue_topology,
    local_queue,
    provisioning_request_config,
    resource_flavor,
    volcano_queue,
)
from components.manifests.serviceaccount import service_accounts
from components.manifests.storage import bucket_volume, persistent_volume_claim, storage_class
from components.manifests.trainingruntime import cluster_runtime, pool_runtimes
from components.wellknown import NODE_CHECK_NAMESPACE

if TYPE_CHECKING:
    from components.stack import Stack


def namespaces(stack: Stack) -> list[dict[str, Any]]:
    """A Namespace for every namespace the stack uses, and the GPU quotas declared."""
    out = [namespace(name) for name in stack.namespaces]
    out += [gpu_quota(n.name, n.gpu_quota) for n in stack.config.namespaces if n.gpu_quota is not None]
    return out


def networks(stack: Stack) -> list[dict[str, Any]]:
    """The NetworkAttachmentDefinitions: those declared, and one per rail of pools whose rails make them."""
    return [network_attachment_definition(n) for n in stack.config.all_networks]


def storage(stack: Stack) -> list[dict[str, Any]]:
    """The StorageClasses made here, the volumes of named buckets, and every claim."""
    out: list[dict[str, Any]] = []
    for volume in stack.config.storage.volumes:
        cls = storage_class(volume, cluster=stack.config.cluster)
        if cls is not None and cls not in out:
            out.append(cls)
    out += [pv for v in stack.config.storage.volumes if (pv := bucket_volume(v)) is not None]
    out += [persistent_volume_claim(v) for v in stack.config.storage.volumes]
    return out


def queues(stack: Stack) -> list[dict[str, Any]]:
    """Volcano Queues, or Kueue flavors, ProvisioningRequest admission checks, cluster queues and local queues."""
    scheduler = stack.config.scheduler
    if scheduler.type == "volcano":
        return [volcano_queue(q) for q in scheduler.queues]
    if scheduler.type != "kueue":
        return []
    pools = list(stack.pools.values())
    topologies = {p.topology.name: p.topology for p in pools if p.topology is not None}
    out = [*(kueue_topology(t) for t in topologies.values())]
    out += [*(resource_flavor(p) for p in pools), default_flavor()]
    queued = [p for p in pools if p.provisioning_class is not None]
    out += [o for p in queued for o in (provisioning_request_config(p), admission_check(p))]
    for queue in scheduler.queues:
        members = [p for p in pools if not queue.pools or p.name in queue.pools]
        out.append(cluster_queue(queue, members))
        out += [local_queue(queue, ns) for ns in (queue.namespaces or queued_namespaces(stack))]
    return out


def queued_namespaces(stack: Stack) -> list[str]:
    """Where a queue with no namespaces of its own gets a LocalQueue: every namespace the stack uses but the node
    check's, whose DaemonSet pods no queue admits."""
    return [name for name in stack.namespaces if name != NODE_CHECK_NAMESPACE]


def runtimes(stack: Stack) -> list[dict[str, Any]]:
    """Each pool's ClusterTrainingRuntimes, when Kubeflow Trainer is installed."""
    if not stack.config.trainer.enabled:
        return []
    return [cluster_runtime(p, r, stack.scheduler) for p in stack.pools.values() for r in pool_runtimes(p)]


def node_checks(stack: Stack) -> list[dict[str, Any]]:
    """The node check's RBAC, scripts and one DaemonSet per checked pool."""
    return nodecheck.objects(list(stack.node_checks.values()))


def objects(stack: Stack) -> list[dict[str, Any]]:
    """Every platform object, namespaces first, their images (runtimes, node checks) through the stack's mirror."""
    built = [
        *namespaces(stack),
        *service_accounts(list(stack.config.service_accounts), stack.config.cluster),
        *networks(stack),
        *storage(stack),
        *queues(stack),
        *runtimes(stack),
        *node_checks(stack),
    ]
    return mirror_objects(stack.config.images.mirror, built)
