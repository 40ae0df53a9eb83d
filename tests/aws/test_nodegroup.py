"""Launch template and node group arguments of a GPU pool on EKS."""

from __future__ import annotations

import pytest

from components.aws.nodegroup import (
    capacity_block_scale_down,
    launch_template_args,
    network_interfaces,
    node_group_args,
)
from tests.aws.pools import aws_pool


def test_p5_gets_an_efa_device_on_each_of_its_32_network_cards() -> None:
    _, pool = aws_pool()
    interfaces = network_interfaces(pool, 32, ["sg-cluster", "sg-efa"])
    primary, *efa = interfaces
    assert (primary["network_card_index"], primary["device_index"], primary["interface_type"]) == (0, 0, "interface")
    assert len(efa) == 32 == pool.efa_interfaces
    assert {i["interface_type"] for i in efa} == {"efa-only"}
    assert sorted(i["network_card_index"] for i in efa) == list(range(32))
    assert efa[0]["device_index"] == 1, "card 0's EFA sits behind the ENA primary"
    assert all(i["device_index"] == 0 for i in efa[1:])
    assert all(i["security_groups"] == ["sg-cluster", "sg-efa"] for i in interfaces)


def test_g6e_48xlarge_gets_four() -> None:
    _, pool = aws_pool(name="g6e", instanceType="g6e.48xlarge")
    assert [i["interface_type"] for i in network_interfaces(pool, 4, [])].count("efa-only") == 4


def test_p6_b300_leaves_card_0_without_efa_and_has_16_efa_interfaces_on_cards_1_to_16() -> None:
    spec, pool = aws_pool(name="b300", instanceType="p6-b300.48xlarge")
    interfaces = launch_template_args(spec, pool, network_cards=17)["network_interfaces"]
    primary, *efa = interfaces
    assert (primary["network_card_index"], primary["device_index"], primary["interface_type"]) == (0, 0, "interface")
    assert [i for i in interfaces if i["network_card_index"] == 0] == [primary], "card 0 carries ENA only"
    assert len(efa) == 16 == pool.efa_interfaces
    assert {i["interface_type"] for i in efa} == {"efa-only"}
    assert [i["network_card_index"] for i in efa] == list(range(1, 17))
    assert {i["device_index"] for i in efa} == {0}


def test_p6e_gb200_puts_one_efa_per_gpu_on_the_cards_aws_prescribes() -> None:
    # EC2 User Guide, "EFA configuration for P6e-GB200 instances": cards 1, 5, 9 and 13, 400 Gbps each.
    _, pool = aws_pool(
        name="gb200",
        instanceType="p6e-gb200.36xlarge",
        capacity={"type": "capacity-block", "reservationId": "cr-0fedcba9876543210"},
    )
    layout = [
        (i["network_card_index"], i["device_index"], i["interface_type"]) for i in network_interfaces(pool, 17, [])
    ]
    assert layout == [(0, 0, "interface"), *((card, 0, "efa-only") for card in (1, 5, 9, 13))]
    assert pool.efa_interfaces == 4


@pytest.mark.parametrize(
    ("instance_type", "cards"),
    [("p5.48xlarge", 32), ("p5en.48xlarge", 16), ("p6-b200.48xlarge", 8), ("g6e.24xlarge", 2)],
)
def test_machines_with_efa_on_every_card_keep_it_on_card_0_behind_the_primary(instance_type: str, cards: int) -> None:
    _, pool = aws_pool(name="pool", instanceType=instance_type)
    layout = [
        (i["network_card_index"], i["device_index"], i["interface_type"]) for i in network_interfaces(pool, cards, [])
    ]
    assert layout == [(0, 0, "interface"), (0, 1, "efa-only"), *((card, 0, "efa-only") for card in range(1, cards))]


def test_launch_template_for_an_efa_pool_in_a_placement_group() -> None:
    spec, pool = aws_pool(diskSizeGb=1000)
    args = launch_template_args(spec, pool, network_cards=32, security_groups=["sg"], placement_group="pg-p5")
    assert args["instance_type"] == "p5.48xlarge"
    assert args["placement"] == {"group_name": "pg-p5"}
    assert len(args["network_interfaces"]) == 33
    assert args["block_device_mappings"][0]["ebs"]["volume_size"] == 1000
    assert args["metadata_options"]["http_tokens"] == "required"
    assert "capacity_reservation_specification" not in args and "instance_market_options" not in args


def test_a_pool_without_efa_leaves_interfaces_to_the_node_group() -> None:
    spec, pool = aws_pool(name="g5", instanceType="g5.12xlarge", zone=None, fabric="tcp")
    args = launch_template_args(spec, pool)
    assert "network_interfaces" not in args and "placement" not in args


def test_an_on_demand_capacity_reservation() -> None:
    spec, pool = aws_pool(capacity={"type": "reservation", "reservationId": "cr-0123456789abcdef0"})
    args = launch_template_args(spec, pool, network_cards=32)
    target = args["capacity_reservation_specification"]["capacity_reservation_target"]
    assert target == {"capacity_reservation_id": "cr-0123456789abcdef0"}
    assert "instance_market_options" not in args
    assert node_group_args(spec, pool)["capacity_type"] == "ON_DEMAND"


def test_a_capacity_block_for_ml() -> None:
    spec, pool = aws_pool(capacity={"type": "capacity-block", "reservationId": "cr-0fedcba9876543210"})
    args = launch_template_args(spec, pool, network_cards=32)
    assert args["instance_market_options"] == {"market_type": "capacity-block"}
    target = args["capacity_reservation_specification"]["capacity_reservation_target"]
    assert target["capacity_reservation_id"] == "cr-0fedcba9876543210"
    assert node_group_args(spec, pool)["capacity_type"] == "CAPACITY_BLOCK"


@pytest.mark.parametrize(("capacity", "expected"), [("on-demand", "ON_DEMAND"), ("spot", "SPOT")])
def test_capacity_types(capacity: str, expected: str) -> None:
    spec, pool = aws_pool(capacity={"type": capacity})
    assert node_group_args(spec, pool)["capacity_type"] == expected


def test_node_group_uses_the_accelerated_ami_with_the_pools_taints_labels_and_size() -> None:
    spec, pool = aws_pool(
        minNodes=1,
        maxNodes=8,
        labels={"team": "llm"},
        taints=[{"key": "nvidia.com/gpu", "value": "true"}, {"key": "dedicated", "effect": "NoExecute"}],
    )
    args = node_group_args(spec, pool)
    assert args["ami_type"] == "AL2023_x86_64_NVIDIA"

    assert args["scaling_config"] == {"min_size": 1, "max_size": 8, "desired_size": 1}
    assert args["labels"] == {"team": "llm", "gpu-training/pool": "p5", "gpu-training/node-check": "required"}
    assert args["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
        {"key": "dedicated", "value": None, "effect": "NO_EXECUTE"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "value": "pending",
            "effect": "NO_SCHEDULE",
        },
    ]


def test_a_grace_pool_runs_the_arm64_nvidia_ami() -> None:
    spec, pool = aws_pool(
        name="gb200",
        instanceType="p6e-gb200.36xlarge",
        capacity={"type": "capacity-block", "reservationId": "cr-0fedcba9876543210"},
    )
    assert pool.arch == "arm64"
    assert node_group_args(spec, pool)["ami_type"] == "AL2023_ARM_64_NVIDIA"


def test_a_node_group_on_a_machine_with_instance_store_puts_it_in_raid0_through_nodeadm() -> None:
    import base64

    spec, pool = aws_pool()
    assert pool.local_storage, "p5.48xlarge has 30.4 TB of instance-store NVMe"
    user_data = base64.b64decode(launch_template_args(spec, pool)["user_data"]).decode()
    assert "Content-Type: application/node.eks.aws" in user_data
    assert "kind: NodeConfig" in user_data and "strategy: RAID0" in user_data
    spec, pool = aws_pool(localStorage="none")
    assert "user_data" not in launch_template_args(spec, pool)


def test_an_ultraserver_block_scales_to_zero_90_minutes_before_its_end() -> None:
    end = "2026-12-01T11:30:00Z"
    block = {"type": "capacity-block", "reservationId": "cr-0fedcba9876543210", "endTime": end}
    spec, pool = aws_pool(name="gb200", instanceType="p6e-gb200.36xlarge", capacity=block)
    assert capacity_block_scale_down(spec, pool).isoformat() == "2026-12-01T10:00:00+00:00"
    spec, pool = aws_pool(name="b300", instanceType="p6-b300.48xlarge", capacity=block)
    assert capacity_block_scale_down(spec, pool).isoformat() == "2026-12-01T10:30:00+00:00"
