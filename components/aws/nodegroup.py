"""The launch template and managed node group of a GPU pool on EKS, as plain arguments.

Network interfaces follow AWS's layout for instances with several network cards ("Maximize
network bandwidth on Amazon EC2 instances with multiple network cards", EC2 User Guide): an ENA
primary interface on card 0 / device 0, an EFA-only interface on card 0 / device 1, and an
EFA-only interface on device 0 of every further card. EFA-only interfaces take no IP address, so a
p5.48xlarge uses one VPC address for its 32 EFA devices. A type whose card 0 carries no EFA (p6-b300:
the catalog's `first_efa_card`) gets the ENA primary alone on card 0 and its EFA-only interfaces on device 0
of cards 1 onwards (aws/aws-parallelcluster#7143, AWS engineering's layout for p6-b300); a type for which AWS
prescribes the cards (p6e-gb200: 1, 5, 9 and 13, one per GPU) gets them on those (the catalog's `efa_cards`).
"""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

from components import catalog
from components.allocatable import allocatable
from components.models import NodePoolSpec
from components.pool import Pool

AMI_TYPES: dict[str, str] = {"x86_64": "AL2023_x86_64_NVIDIA", "arm64": "AL2023_ARM_64_NVIDIA"}
"""The EKS-optimized accelerated AMI (NVIDIA driver and toolkit baked in) for each CPU architecture: the EKS
API's AMITypes (aws-sdk-go-v2 service/eks types: AMITypesAl2023X8664Nvidia, AMITypesAl2023Arm64Nvidia); Grace
machines take the ARM one (EKS user guide, ml-eks-nvidia-ultraserver: the AL2023 ARM NVIDIA AMI)."""
ROOT_DEVICE = "/dev/xvda"
_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
_CAPACITY_TYPE = {
    "on-demand": "ON_DEMAND",
    "spot": "SPOT",
    "reservation": "ON_DEMAND",
    "capacity-block": "CAPACITY_BLOCK",
}


def efa_layout(pool: Pool, network_cards: int) -> list[tuple[int, int, str]]:
    """(network card, device index, interface type) of each interface: one EFA device per network
    card that carries EFA, behind an ENA primary interface on card 0."""
    machine = pool.machine()
    cards = machine.efa_cards if machine else range(network_cards)
    layout = [(0, 0, "interface")] + [(card, 1 if card == 0 else 0, "efa-only") for card in cards]
    return layout[: pool.efa_interfaces + 1]


def network_interfaces(pool: Pool, network_cards: int, security_groups: list[Any]) -> list[dict[str, Any]]:
    """The launch template's interfaces in the EFA layout, each in the pool's security groups."""
    return [_interface(card, device, kind, security_groups) for card, device, kind in efa_layout(pool, network_cards)]


def _interface(card: int, device: int, kind: str, security_groups: list[Any]) -> dict[str, Any]:
    return {
        "network_card_index": card,
        "device_index": device,
        "interface_type": kind,
        "security_groups": list(security_groups),
        "delete_on_termination": "true",
    }


def launch_template_args(
    spec: NodePoolSpec,
    pool: Pool,
    *,
    network_cards: int = 1,
    security_groups: list[Any] | None = None,
    placement_group: Any = None,
) -> dict[str, Any]:
    """The launch template: instance type, root disk, IMDSv2, EFA interfaces, placement, capacity."""
    args: dict[str, Any] = {
        "instance_type": pool.machine_type,
        "block_device_mappings": [
            {
                "device_name": ROOT_DEVICE,
                "ebs": {
                    "volume_size": spec.disk_size_gb,
                    "volume_type": "gp3",
                    "delete_on_termination": "true",
                    "encrypted": "true",
                },
            }
        ],
        "metadata_options": {"http_tokens": "required", "http_put_response_hop_limit": 2, "http_endpoint": "enabled"},
        "update_default_version": True,
    }
    if pool.local_storage:
        args["user_data"] = base64.b64encode(LOCAL_STORAGE_USER_DATA.encode()).decode()
    if pool.fabric == "efa":
        args["network_interfaces"] = network_interfaces(pool, network_cards, security_groups or [])
    if placement_group is not None:
        args["placement"] = {"group_name": placement_group}
    reservation = spec.capacity.reservation_id
    if reservation:
        args["capacity_reservation_specification"] = {
            "capacity_reservation_target": {"capacity_reservation_id": reservation}
        }
    if spec.capacity.type == "capacity-block":
        args["instance_market_options"] = {"market_type": "capacity-block"}
    return args


def node_group_args(spec: NodePoolSpec, pool: Pool, *, node_repair: dict[str, Any] | None = None) -> dict[str, Any]:
    """The managed node group: the accelerated AMI, capacity type, size, labels and taints, and its node auto
    repair (`node_repair`, from components/repair.py) when the stack repairs nodes.

    The desired size is where the group starts; after that the Cluster Autoscaler owns it (the
    component ignores later changes to it, so `pulumi up` never scales a pool back down). A pool on
    reserved capacity updates with the MINIMAL strategy: old nodes go before new ones come, because
    a consumed reservation has no spare instance for the default surge.
    """
    reserved = spec.capacity.type in ("reservation", "capacity-block")
    repair = {"node_repair_config": node_repair} if node_repair else {}
    return {
        **repair,
        "ami_type": AMI_TYPES[pool.arch],
        "capacity_type": _CAPACITY_TYPE[spec.capacity.type],
        "scaling_config": {"min_size": spec.min_nodes, "max_size": pool.max_nodes, "desired_size": spec.min_nodes},
        "labels": dict(pool.labels),
        "taints": [
            {"key": t.key, "value": t.value or None, "effect": _EFFECT[t.effect]}
            for t in (*pool.taints, *pool.startup_taints)
        ],
        "update_config": {"max_unavailable": 1, **({"update_strategy": "MINIMAL"} if reserved else {})},
    }


AUTOSCALER_TEMPLATE = "k8s.io/cluster-autoscaler/node-template"
"""The prefix of the ASG tags that tell the Cluster Autoscaler what a node of an empty group would have."""


def node_template_tags(pool: Pool) -> dict[str, str]:
    """The ASG tags that let the Cluster Autoscaler scale the pool up from zero: the GPUs and the
    fabric's devices a node offers (which it cannot learn from an empty group), its labels and taints."""
    # What a node really advertises, and no more: a resource claimed here but absent on the node makes the
    # autoscaler add nodes that never take the pod. cpu and memory it reads from the instance type.
    tags = {
        f"{AUTOSCALER_TEMPLATE}/resources/{resource}": amount
        for resource, amount in allocatable(pool).items()
        if amount is not None and resource not in ("cpu", "memory")
    }
    for key, value in pool.labels.items():
        tags[f"{AUTOSCALER_TEMPLATE}/label/{key}"] = value
    for taint in pool.taints:
        tags[f"{AUTOSCALER_TEMPLATE}/taint/{taint.key}"] = f"{taint.value}:{taint.effect}"
    return tags


CAPACITY_BLOCK_DRAIN = timedelta(hours=1)
"""How long before a Capacity Block ends its node group is scaled to zero: EC2 starts terminating the
instances 30 minutes before the end, so pods get the other 30 minutes to drain and checkpoint (EKS's
own scheduled action, 40 minutes before the end, would leave them 10)."""


ULTRASERVER_BLOCK_DRAIN = timedelta(hours=1, minutes=30)
"""The same for a Capacity Block of UltraServers, whose instances EC2 starts terminating 60 minutes before the end
(AWS, as Karpenter's "Capacity Reservations" task page quotes it: "30 minutes (for instance types) or 60 minutes
(for UltraServer types)"): pods keep their 30 minutes."""


def capacity_block_scale_down(spec: NodePoolSpec, pool: Pool | None = None) -> datetime | None:
    """When a Capacity Block pool's node group goes to zero, if its block's end is known."""
    end = spec.capacity.end_time
    ultraserver = bool(pool and catalog.ultraservers(pool.machine_type))
    return None if end is None else end - (ULTRASERVER_BLOCK_DRAIN if ultraserver else CAPACITY_BLOCK_DRAIN)


LOCAL_STORAGE_USER_DATA = """MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  instance:
    localStorage:
      strategy: RAID0

--//--
"""
"""nodeadm's NodeConfig (AL2023) putting the instance-store NVMe disks in one RAID0 array that holds
containerd's and the kubelet's state, so images and pods' ephemeral storage live on local NVMe. EKS
merges it with the node group's own bootstrap configuration."""
