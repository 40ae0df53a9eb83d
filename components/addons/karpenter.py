"""Karpenter on EKS: its Helm release, and one EC2NodeClass and NodePool per pool it provisions.

Everything here is known offline: the objects name the cloud resources the cluster creates by
deterministic names and tags (the node role, the interruption queue, the placement group) instead of
by ids that exist only after `pulumi up`, so `render` shows them exactly as they are applied.
"""

from __future__ import annotations

import hashlib
from typing import Any

from components import quantity, repair
from components.addons.install import HelmRelease
from components.aws.nodegroup import efa_layout
from components.manifests.pod import GPU_RESOURCE
from components.models import AwsClusterSpec, NodePoolSpec
from components.models.nodepool import Taint
from components.pool import Pool, taints_of
from components.stack import Stack
from components.versions import KARPENTER
from components.wellknown import SYSTEM_NAMESPACE as NAMESPACE

NAME = "karpenter"
SERVICE_ACCOUNT = "karpenter"
DISCOVERY_TAG = "karpenter.sh/discovery"
"""The tag on the cluster's security group and a new VPC's private subnets that node classes select."""
EFA_GROUP_TAG = "gpu-training/efa-group"
"""The tag on a pool's EFA security group; its value is `<cluster>-<pool>`."""
AMI_ALIAS = "al2023@latest"
"""EKS-optimized Amazon Linux 2023: Karpenter picks its NVIDIA variant for GPU instance types."""
ROOT_DEVICE = "/dev/xvda"
CONSOLIDATE_AFTER = "10m"
"""How long a GPU node stays empty before Karpenter removes it: long enough for the next job of a
queue to land on it, short enough that an idle p5 is not paid for long."""
CAPACITY_TYPE = {"on-demand": "on-demand", "spot": "spot", "reservation": "reserved", "capacity-block": "reserved"}
"""The karpenter.sh/capacity-type a pool's capacity maps to."""


def pools(stack: Stack) -> list[tuple[NodePoolSpec, Pool]]:
    """The pools Karpenter provisions, with their specs."""
    found = [(spec, stack.pools.get(spec.name)) for spec in stack.config.node_pools]
    return [(spec, pool) for spec, pool in found if pool is not None and pool.provisioner == "karpenter"]


def queue_name(cluster: str) -> str:
    """The SQS queue EC2 interruption and health events reach Karpenter through."""
    return f"{cluster}-karpenter"


def node_role_name(cluster: str, region: str) -> str:
    """The IAM role of the nodes Karpenter launches (IAM names are global: the region keeps two
    clusters of one name apart; at most 64 characters)."""
    name = f"{cluster}-{region}-karpenter-node"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:45]}-{digest}-karpenter"


def placement_group_name(cluster: str, pool: str) -> str:
    """The cluster placement group of a Karpenter pool (unique in the region)."""
    return f"{cluster}-{pool}"


def release(stack: Stack) -> HelmRelease | None:
    """The Karpenter controller, on the system nodes, reading interruptions from its queue."""
    cluster = stack.config.cluster
    if not isinstance(cluster, AwsClusterSpec) or not pools(stack):
        return None
    values: dict[str, Any] = {
        "settings": {
            "clusterName": cluster.name,
            "interruptionQueue": queue_name(cluster.name),
            # Beta and on by default in 1.14; stated because ODCR and Capacity Block pools depend on it.
            # NodeRepair is alpha and off by default in 1.14.1: on with the EKS node monitoring agent, whose node
            # conditions (AcceleratedHardwareReady ...) its repair policies act on (components/repair.py).
            "featureGates": {"reservedCapacity": True, "nodeRepair": repair.karpenter_repairs(stack.config)},
        },
        # The chart's default affinity already keeps the controller off the nodes Karpenter makes.
        "serviceAccount": {"name": SERVICE_ACCOUNT},
    }
    return HelmRelease(NAME, KARPENTER, NAMESPACE, values)


def objects(stack: Stack) -> list[dict[str, Any]]:
    """An EC2NodeClass and a NodePool for every pool Karpenter provisions."""
    cluster = stack.config.cluster
    if not isinstance(cluster, AwsClusterSpec):
        return []
    out: list[dict[str, Any]] = []
    for spec, pool in pools(stack):
        out += [node_class(cluster, spec, pool), node_pool(pool)]
    return out


def node_class(cluster: AwsClusterSpec, spec: NodePoolSpec, pool: Pool) -> dict[str, Any]:
    """How Karpenter launches the pool's instances: AMI, subnets, security groups, disks, EFA
    interfaces on every network card, the placement group and the reservation."""
    groups: list[dict[str, Any]] = [{"tags": {DISCOVERY_TAG: cluster.name}}]
    body: dict[str, Any] = {
        "role": node_role_name(cluster.name, cluster.region),
        "amiSelectorTerms": [{"alias": AMI_ALIAS}],
        "subnetSelectorTerms": _subnets(cluster, pool),
        "securityGroupSelectorTerms": groups,
        "blockDeviceMappings": [
            {
                "deviceName": ROOT_DEVICE,
                "ebs": {
                    "volumeSize": f"{spec.disk_size_gb}Gi",
                    "volumeType": "gp3",
                    "encrypted": True,
                    "deleteOnTermination": True,
                },
            }
        ],
        "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 2},
    }
    if pool.local_storage:
        body["instanceStorePolicy"] = "RAID0"
    if pool.fabric == "efa":
        groups.append({"tags": {EFA_GROUP_TAG: f"{cluster.name}-{pool.name}"}})
        machine = pool.machine()
        body["networkInterfaces"] = [
            {"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind}
            for card, device, kind in efa_layout(pool, machine.network_cards if machine else 1)
        ]
    if pool.placement == "cluster":
        body["placementGroupSelector"] = {"name": placement_group_name(cluster.name, pool.name)}
    if spec.capacity.reservation_id:
        body["capacityReservationSelectorTerms"] = [{"id": spec.capacity.reservation_id}]
    body["tags"] = {"gpu-training/pool": pool.name, "Name": f"{cluster.name}-{pool.name}"}
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": pool.name},
        "spec": body,
    }


def _subnets(cluster: AwsClusterSpec, pool: Pool) -> list[dict[str, Any]]:
    """The pool's subnets: a new VPC's private subnets by tag, or the configured ones by id (the
    NodePool's zone requirement picks the pool's zone among them)."""
    ids = cluster.subnet_ids
    if isinstance(ids, dict):
        chosen = [ids[pool.zone]] if pool.zone in ids else list(ids.values())
        return [{"id": subnet} for subnet in chosen]
    if ids:
        return [{"id": subnet} for subnet in ids]
    return [{"tags": {DISCOVERY_TAG: cluster.name}}]


def _taint(taint: Taint) -> dict[str, str]:
    return {"key": taint.key, **({"value": taint.value} if taint.value else {}), "effect": taint.effect}


def node_pool(pool: Pool) -> dict[str, Any]:
    """Which nodes Karpenter may launch for the pool (instance type, zone, capacity), their labels and
    taints, at most maxNodes of them, removed once empty and never while a job runs on them."""
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [pool.machine_type]},
        # Stated so that the AMI alias resolves to the architecture's variant and no image of another lands here.
        {"key": "kubernetes.io/arch", "operator": "In", "values": [pool.kubernetes_arch]},
    ]
    if pool.zone:
        requirements.append({"key": "topology.kubernetes.io/zone", "operator": "In", "values": [pool.zone]})
    requirements.append(
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [CAPACITY_TYPE[pool.capacity]]},
    )
    template: dict[str, Any] = {
        "metadata": {"labels": dict(pool.labels)},
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
            "requirements": requirements,
            "taints": [_taint(t) for t in taints_of([pool])],
            # Karpenter expects these to go once the node is up (the node check removes its own) and keeps
            # provisioning for pods that do not tolerate them.
            **({"startupTaints": [_taint(t) for t in pool.startup_taints]} if pool.startup_taints else {}),
            # Training nodes are not recycled on a timer; a node is replaced only once it is empty.
            "expireAfter": "Never",
        },
    }
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": pool.name},
        "spec": {
            "template": template,
            "limits": quantity.quantities({GPU_RESOURCE: pool.max_nodes * pool.gpus_per_node}),
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": CONSOLIDATE_AFTER,
                # A drifted node (a newer AMI, a changed node class) is replaced once empty, never under a job.
                "budgets": [{"nodes": "0", "reasons": ["Drifted"]}],
            },
        },
    }
