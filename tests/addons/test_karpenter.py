"""Karpenter's release and the EC2NodeClass and NodePool each of its pools gets."""

from __future__ import annotations

from typing import Any

import pytest

from components.addons import karpenter
from components.stack import Stack
from tests.addons.stacks import stack_file
from tests.support.schemas import assert_valid

P5 = {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1a"}


def prod(*pools: dict[str, Any], **cluster: Any) -> Stack:
    changes: dict[str, Any] = {"nodePools": list(pools) or [P5], "jobs": [], "storage": {"volumes": []}}
    if cluster:
        base = {"provider": "aws", "name": "train-prod", "region": "us-east-1"}
        changes["cluster"] = {**base, **cluster}
    return stack_file("prod", **changes)


def objects(stack: Stack, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in karpenter.objects(stack) if o["kind"] == kind}


def test_a_p5_pool_gets_efa_on_all_32_cards_its_placement_group_and_raid0_nvme() -> None:
    stack = prod()
    node_class = objects(stack, "EC2NodeClass")["p5"]["spec"]
    interfaces = node_class["networkInterfaces"]
    assert interfaces[0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    efa = [i for i in interfaces if i["interfaceType"] == "efa-only"]
    assert sorted(i["networkCardIndex"] for i in efa) == list(range(32))
    assert node_class["placementGroupSelector"] == {"name": "train-prod-p5"}
    assert node_class["instanceStorePolicy"] == "RAID0"
    assert node_class["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert node_class["role"] == "train-prod-us-east-1-karpenter-node"
    assert {"tags": {"gpu-training/efa-group": "train-prod-p5"}} in node_class["securityGroupSelectorTerms"]
    assert node_class["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "train-prod"}}]
    assert_valid(*karpenter.objects(stack))


def test_a_p6_b300_node_class_leaves_card_0_to_ena_and_puts_efa_on_cards_1_to_16() -> None:
    stack = prod({"name": "b300", "instanceType": "p6-b300.48xlarge", "maxNodes": 2, "zone": "us-east-1a"})
    interfaces = objects(stack, "EC2NodeClass")["b300"]["spec"]["networkInterfaces"]
    assert [i for i in interfaces if i["networkCardIndex"] == 0] == [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    ]
    efa = [i for i in interfaces if i["interfaceType"] == "efa-only"]
    assert sorted(i["networkCardIndex"] for i in efa) == list(range(1, 17))
    assert {i["deviceIndex"] for i in efa} == {0}
    assert_valid(*karpenter.objects(stack))


def test_the_node_pool_allows_only_the_pools_type_zone_and_capacity_and_never_disrupts_a_job() -> None:
    pool = objects(prod(), "NodePool")["p5"]["spec"]
    requirements = {r["key"]: r["values"] for r in pool["template"]["spec"]["requirements"]}
    assert requirements == {
        "node.kubernetes.io/instance-type": ["p5.48xlarge"],
        "kubernetes.io/arch": ["amd64"],
        "topology.kubernetes.io/zone": ["us-east-1a"],
        "karpenter.sh/capacity-type": ["on-demand"],
    }
    assert pool["template"]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    # The node check's taint goes once a node passes, which Karpenter expects of a startup taint.
    assert pool["template"]["spec"]["startupTaints"] == [
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "value": "pending",
            "effect": "NoSchedule",
        }
    ]
    assert pool["template"]["metadata"]["labels"] == {"gpu-training/pool": "p5", "gpu-training/node-check": "required"}
    assert pool["limits"] == {"nvidia.com/gpu": "64"}, "maxNodes x GPUs"
    assert pool["template"]["spec"]["expireAfter"] == "Never"
    assert pool["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert {"nodes": "0", "reasons": ["Drifted"]} in pool["disruption"]["budgets"]


@pytest.mark.parametrize("capacity", ["reservation", "capacity-block"])
def test_reserved_capacity_is_selected_by_id(capacity: str) -> None:
    stack = prod({**P5, "capacity": {"type": capacity, "reservationId": "cr-0123456789abcdef0"}})
    node_class = objects(stack, "EC2NodeClass")["p5"]["spec"]
    assert node_class["capacityReservationSelectorTerms"] == [{"id": "cr-0123456789abcdef0"}]
    assert "placementGroupSelector" not in node_class, "a reservation brings its own placement"
    requirements = {
        r["key"]: r["values"] for r in objects(stack, "NodePool")["p5"]["spec"]["template"]["spec"]["requirements"]
    }
    assert requirements["karpenter.sh/capacity-type"] == ["reserved"]
    assert_valid(*karpenter.objects(stack))


def test_spot_and_a_pool_without_efa() -> None:
    stack = prod(
        {"name": "g6", "instanceType": "g6.12xlarge", "maxNodes": 2, "fabric": "tcp", "capacity": {"type": "spot"}}
    )
    node_class = objects(stack, "EC2NodeClass")["g6"]["spec"]
    assert "networkInterfaces" not in node_class and "placementGroupSelector" not in node_class
    requirements = {
        r["key"]: r["values"] for r in objects(stack, "NodePool")["g6"]["spec"]["template"]["spec"]["requirements"]
    }
    assert requirements["karpenter.sh/capacity-type"] == ["spot"]
    assert "topology.kubernetes.io/zone" not in requirements, "no zone: any zone of the cluster"


def test_existing_subnets_are_named_by_id() -> None:
    stack = prod(vpcId="vpc-1", subnetIds={"us-east-1a": "subnet-a", "us-east-1b": "subnet-b"})
    assert objects(stack, "EC2NodeClass")["p5"]["spec"]["subnetSelectorTerms"] == [{"id": "subnet-a"}]
    stack = prod(vpcId="vpc-1", subnetIds=["subnet-a", "subnet-b"])
    assert objects(stack, "EC2NodeClass")["p5"]["spec"]["subnetSelectorTerms"] == [
        {"id": "subnet-a"},
        {"id": "subnet-b"},
    ]


def test_the_release_reads_interruptions_from_the_clusters_queue() -> None:
    release = karpenter.release(prod())
    assert release is not None and release.namespace == "kube-system"
    assert release.values["settings"]["clusterName"] == "train-prod"
    assert release.values["settings"]["interruptionQueue"] == "train-prod-karpenter"
    assert karpenter.release(prod({**P5, "minNodes": 2})) is None, "no Karpenter pool, no Karpenter"


def test_node_role_names_fit_iam() -> None:
    assert karpenter.node_role_name("train-prod", "us-east-1") == "train-prod-us-east-1-karpenter-node"
    long = karpenter.node_role_name("c" * 63, "ap-southeast-2")
    assert len(long) <= 64 and long != karpenter.node_role_name("c" * 62 + "d", "ap-southeast-2")


def test_karpenter_repairs_nodes_on_the_monitoring_agents_conditions_unless_repair_is_off() -> None:
    from components.addons import karpenter
    from tests.addons.stacks import stack_file

    gates = karpenter.release(stack_file("prod")).values["settings"]["featureGates"]
    assert gates == {"reservedCapacity": True, "nodeRepair": True}
    off = karpenter.release(stack_file("prod", health={"repair": {"enabled": False}}))
    assert off.values["settings"]["featureGates"]["nodeRepair"] is False
