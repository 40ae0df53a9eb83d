"""The launch template and managed node group of a GPU pool on EKS, as plain arguments.

Network interfaces follow AWS's layout for instances with several network cards ("Maximize
network bandwidth on Amazon EC2 instances with multiple network cards", EC2 User Guide): an ENA
primary interface on card 0 / device 0, an EFA-only interface on card 0 / device 1, and an
EFA-only interface on device 0 of every further card. EFA-only interfaces take no IP address, so a
p5.48xlarge uses one VPC address for its 32 EFA devices.
"""

from __future__ import annotations

from typing import Any

from components.models import NodePoolSpec
from components.pool import Pool

AMI_TYPE = "AL2023_x86_64_NVIDIA"  # the EKS-optimized accelerated AMI: NVIDIA driver and toolkit baked in
ROOT_DEVICE = "/dev/xvda"
_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
_CAPACITY_TYPE = {
    "on-demand": "ON_DEMAND",
    "spot": "SPOT",
    "reservation": "ON_DEMAND",
    "capacity-block": "CAPACITY_BLOCK",
}


def network_interfaces(pool: Pool, network_cards: int, security_groups: list[Any]) -> list[dict[str, Any]]:
    """One EFA device per network card, behind an ENA primary interface on card 0."""
    interfaces: list[dict[str, Any]] = [
        _interface(0, 0, "interface", security_groups),
        _interface(0, 1, "efa-only", security_groups),
    ]
    interfaces += [_interface(card, 0, "efa-only", security_groups) for card in range(1, network_cards)]
    return interfaces[: pool.efa_interfaces + 1]


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


def node_group_args(spec: NodePoolSpec, pool: Pool) -> dict[str, Any]:
    """The managed node group: the accelerated AMI, capacity type, size, labels and taints."""
    return {
        "ami_type": AMI_TYPE,
        "capacity_type": _CAPACITY_TYPE[spec.capacity.type],
        "scaling_config": {"min_size": spec.min_nodes, "max_size": pool.max_nodes, "desired_size": spec.min_nodes},
        "labels": dict(pool.labels),
        "taints": [{"key": t.key, "value": t.value or None, "effect": _EFFECT[t.effect]} for t in pool.taints],
        "update_config": {"max_unavailable": 1},
    }
