"""EksGpuNodePool under Pulumi mocks: what it registers for EFA, placement and capacity options."""

from __future__ import annotations

from typing import Any

from components.aws import EksGpuNodePool
from tests.aws.pools import aws_pool
from tests.support.pulumi_mocks import RecordingMonitor, run

SUBNET = ["subnet-1a"]


def build(monitor: RecordingMonitor, **fields: Any) -> RecordingMonitor:
    spec, pool = aws_pool(**fields)
    run(
        lambda: EksGpuNodePool(
            f"prod-{pool.name}",
            spec,
            pool,
            cluster_name="train-prod",
            node_role_arn="arn:aws:iam::1:role/node",
            subnet_ids=SUBNET,
            vpc_id="vpc-1",
            cluster_security_group_id="sg-cluster",
            cluster="train-prod",
        )
    )
    return monitor


def only(monitor: RecordingMonitor, type_: str) -> dict[str, Any]:
    found = monitor.of_type(type_)
    assert len(found) == 1, [r.name for r in found]
    return found[0].inputs


def test_p5_efa_pool(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks)
    assert only(pulumi_mocks, "aws:ec2/placementGroup:PlacementGroup")["strategy"] == "cluster"

    group = only(pulumi_mocks, "aws:ec2/securityGroup:SecurityGroup")
    assert any(r["self"] and r["protocol"] == "-1" for r in group["ingress"])
    assert any(r.get("self") and r["protocol"] == "-1" for r in group["egress"])

    template = only(pulumi_mocks, "aws:ec2/launchTemplate:LaunchTemplate")
    efa = [i for i in template["networkInterfaces"] if i["interfaceType"] == "efa-only"]
    assert sorted(int(i["networkCardIndex"]) for i in efa) == list(range(32))
    assert template["networkInterfaces"][0]["interfaceType"] == "interface"
    assert all(i["securityGroups"] == ["sg-cluster", "prod-p5-efa-id"] for i in template["networkInterfaces"])
    assert template["placement"] == {"groupName": "mock-placement-group"}
    assert template["instanceType"] == "p5.48xlarge"

    group = only(pulumi_mocks, "aws:eks/nodeGroup:NodeGroup")
    assert group["subnetIds"] == SUBNET, "an EFA pool lives in one subnet"
    assert group["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "value": "pending",
            "effect": "NO_SCHEDULE",
        },
    ]
    assert group["labels"] == {"gpu-training/pool": "p5", "gpu-training/node-check": "required"}
    assert group["scalingConfig"] == {"minSize": 0, "maxSize": 4, "desiredSize": 0}
    assert group["launchTemplate"] == {"id": "prod-p5-id", "version": "1"}
    assert group["capacityType"] == "ON_DEMAND"
    (component,) = pulumi_mocks.of_type("gpu-training:index:EksGpuNodePool")
    children = [r for r in pulumi_mocks.registrations if r is not component]
    parent = component.urn
    assert all(r.parent == parent for r in children)


def test_capacity_block_wiring(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks, capacity={"type": "capacity-block", "reservationId": "cr-0fedcba9876543210"})
    template = only(pulumi_mocks, "aws:ec2/launchTemplate:LaunchTemplate")
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    reservation = template["capacityReservationSpecification"]["capacityReservationTarget"]
    assert reservation == {"capacityReservationId": "cr-0fedcba9876543210"}
    assert only(pulumi_mocks, "aws:eks/nodeGroup:NodeGroup")["capacityType"] == "CAPACITY_BLOCK"
    assert not pulumi_mocks.of_type("aws:ec2/placementGroup:PlacementGroup"), (
        "a capacity block brings its own placement"
    )


def test_capacity_reservation_wiring(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks, capacity={"type": "reservation", "reservationId": "cr-0123456789abcdef0"})
    template = only(pulumi_mocks, "aws:ec2/launchTemplate:LaunchTemplate")
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
    }
    assert "instanceMarketOptions" not in template


def test_efa_and_placement_are_independent(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks, placement="none")
    assert not pulumi_mocks.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert "placement" not in only(pulumi_mocks, "aws:ec2/launchTemplate:LaunchTemplate")
    assert pulumi_mocks.of_type("aws:ec2/securityGroup:SecurityGroup"), "still EFA"


def test_a_placement_group_without_efa(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks, name="g6", instanceType="g6.12xlarge", fabric="tcp", placement="cluster")
    assert only(pulumi_mocks, "aws:ec2/placementGroup:PlacementGroup")["strategy"] == "cluster"
    assert not pulumi_mocks.of_type("aws:ec2/securityGroup:SecurityGroup")
    template = only(pulumi_mocks, "aws:ec2/launchTemplate:LaunchTemplate")
    assert "networkInterfaces" not in template and template["placement"] == {"groupName": "mock-placement-group"}


def test_spot(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks, capacity={"type": "spot"})
    assert only(pulumi_mocks, "aws:eks/nodeGroup:NodeGroup")["capacityType"] == "SPOT"


def test_a_node_group_is_autoscaled_from_zero_and_up_never_scales_it_back(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks)
    (group,) = pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup")
    assert group.ignore_changes == ["scalingConfig.desiredSize"]
    tags = {t.inputs["tag"]["key"]: t.inputs for t in pulumi_mocks.of_type("aws:autoscaling/tag:Tag")}
    prefix = "k8s.io/cluster-autoscaler/node-template"
    assert tags[f"{prefix}/resources/nvidia.com/gpu"]["tag"]["value"] == "8"
    assert tags[f"{prefix}/resources/vpc.amazonaws.com/efa"]["tag"]["value"] == "32"
    assert f"{prefix}/resources/hugepages-2Mi" not in tags, "the node has none: the autoscaler must not think so"
    assert tags[f"{prefix}/label/gpu-training/pool"]["tag"]["value"] == "p5"
    assert tags[f"{prefix}/taint/nvidia.com/gpu"]["tag"]["value"] == "true:NoSchedule"
    assert {t["autoscalingGroupName"] for t in tags.values()} == {"eks-mock-asg"}
    assert not any(t["tag"]["propagateAtLaunch"] for t in tags.values())


def test_a_fixed_size_group_needs_no_autoscaler_tags(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks, minNodes=4)
    assert not pulumi_mocks.of_type("aws:autoscaling/tag:Tag")


def test_a_capacity_block_pool_scales_to_zero_an_hour_before_the_block_ends(pulumi_mocks: RecordingMonitor) -> None:
    build(
        pulumi_mocks,
        capacity={"type": "capacity-block", "reservationId": "cr-0fedcba9876543210", "endTime": "2026-12-01T11:30:00Z"},
    )
    (schedule,) = pulumi_mocks.of_type("aws:autoscaling/schedule:Schedule")
    assert schedule.inputs["startTime"] == "2026-12-01T10:30:00Z"
    assert (schedule.inputs["minSize"], schedule.inputs["maxSize"], schedule.inputs["desiredCapacity"]) == (0, 0, 0)
    assert schedule.inputs["autoscalingGroupName"] == "eks-mock-asg"
    update = only(pulumi_mocks, "aws:eks/nodeGroup:NodeGroup")["updateConfig"]
    assert update["updateStrategy"] == "MINIMAL", "a consumed block has no spare instance to surge into"


def test_an_end_time_in_another_zone_is_converted_to_utc(pulumi_mocks: RecordingMonitor) -> None:
    build(
        pulumi_mocks,
        capacity={
            "type": "capacity-block",
            "reservationId": "cr-0fedcba9876543210",
            "endTime": "2026-12-01T12:30:00+01:00",
        },
    )
    (schedule,) = pulumi_mocks.of_type("aws:autoscaling/schedule:Schedule")
    assert schedule.inputs["startTime"] == "2026-12-01T10:30:00Z"


def test_an_on_demand_pool_updates_with_a_surge(pulumi_mocks: RecordingMonitor) -> None:
    build(pulumi_mocks)
    assert "updateStrategy" not in only(pulumi_mocks, "aws:eks/nodeGroup:NodeGroup")["updateConfig"]
