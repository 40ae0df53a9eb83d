"""EKS's pool rules (components/aws/pools.py): instance types, Karpenter or a node group, cluster placement groups,
Capacity Blocks, rack-scale UltraServers, EFA."""

from __future__ import annotations

from typing import Any

import pytest

from components.errors import Issue
from components.models import NetworkConfig, NodePoolSpec
from components.pool import Pool
from components.pools import resolve_pools
from tests.support.pools import P5, issue_at, one, resolve


def test_efa_pool_needs_a_zone() -> None:
    _, issues = resolve("aws", {"name": "h100", "instanceType": "p5.48xlarge", "maxNodes": 4, "placement": "none"})
    assert issue_at(issues, "nodePools[0].zone")


@pytest.mark.parametrize(
    ("spec", "placement"),
    [
        (P5, "cluster"),
        ({**P5, "instanceType": "g5.xlarge", "zone": None}, "none"),
        ({**P5, "capacity": {"type": "reservation", "reservationId": "cr-0123"}}, "none"),
        ({**P5, "capacity": {"type": "capacity-block", "reservationId": "cr-0456"}}, "none"),
        ({**P5, "capacity": {"type": "spot"}}, "cluster"),
    ],
)
def test_default_placement(spec: dict[str, Any], placement: str) -> None:
    assert one("aws", spec).placement == placement


def test_placement_of_the_other_cloud() -> None:
    _, issues = resolve("aws", {**P5, "placement": "compact"})
    assert issue_at(issues, "nodePools[0].placement")


def test_explicit_placement_on_a_reservation_is_kept() -> None:
    spec = {**P5, "placement": "cluster", "capacity": {"type": "reservation", "reservationId": "cr-0123"}}
    assert one("aws", spec).placement == "cluster"


def test_taints_default_to_the_gpu_taint() -> None:
    p = one("aws", P5)
    assert [(t.key, t.value, t.effect) for t in p.taints] == [("nvidia.com/gpu", "true", "NoSchedule")]


def test_an_eks_pool_that_scales_from_zero_is_karpenters_and_one_with_warm_nodes_a_node_groups() -> None:
    assert one("aws", P5).provisioner == "karpenter"
    assert one("aws", {**P5, "minNodes": 2}).provisioner == "nodegroup"
    assert one("aws", {**P5, "provisioner": "nodegroup"}).provisioner == "nodegroup"


@pytest.mark.parametrize(
    ("spec", "path", "words"),
    [
        ({**P5, "provisioner": "karpenter", "minNodes": 2}, "minNodes", "keeps none warm"),
        (
            {**P5, "minNodes": 1, "capacity": {"type": "capacity-block", "reservationId": "cr-0123456789abcdef0"}},
            "minNodes",
            "starts empty",
        ),
    ],
)
def test_scaling_mistakes_name_the_key(spec: dict[str, Any], path: str, words: str) -> None:
    _, issues = resolve("aws", spec)
    assert words in issue_at(issues, f"nodePools[0].{path}").message


# -- Rack-scale NVLink on EKS (p6e-gb200 UltraServers) -------------------------------------------------------

GB200 = {
    "name": "gb200",
    "instanceType": "p6e-gb200.36xlarge",
    "maxNodes": 18,
    "zone": "us-east-1a",
    "capacity": {"type": "capacity-block", "reservationId": "cr-0123456789abcdef0"},
}


def eks(spec: dict[str, Any], version: str = "1.35") -> tuple[dict[str, Pool], list[Issue]]:
    return resolve_pools(
        [NodePoolSpec.model_validate(spec)], "aws", "us-east-1", NetworkConfig(), kubernetes_version=version
    )


def test_a_gb200_pool_is_a_node_group_of_arm64_nodes_even_when_it_scales_from_zero() -> None:
    pools, issues = eks(GB200)
    assert not issues, issues
    gb200 = pools["gb200"]
    assert (gb200.provisioner, gb200.min_nodes, gb200.arch) == ("nodegroup", 0, "arm64")
    assert (gb200.nvlink_domain_nodes, gb200.efa_interfaces, gb200.fabric_gbps) == (18, 4, 1600)
    assert gb200.autoscaled, "the Cluster Autoscaler scales it between 0 and maxNodes"


def test_karpenter_for_a_gb200_pool_is_refused_for_want_of_dra() -> None:
    _, issues = eks({**GB200, "provisioner": "karpenter"})
    message = issue_at(issues, "nodePools[0].provisioner").message
    assert "DRA" in message and "Karpenter" in message and "provisioner: nodegroup" in message


@pytest.mark.parametrize(
    "capacity", [{"type": "on-demand"}, {"type": "spot"}, {"type": "reservation", "reservationId": "cr-1"}]
)
def test_a_gb200_pool_takes_capacity_blocks_only(capacity: dict[str, str]) -> None:
    _, issues = eks({**GB200, "capacity": capacity})
    assert "Capacity Blocks" in issue_at(issues, "nodePools[0].capacity.type").message


def test_a_gb200_pool_needs_kubernetes_1_33() -> None:
    _, issues = eks(GB200, version="1.32")
    assert "1.33 or later" in issue_at(issues, "cluster.kubernetesVersion").message
    assert not eks(GB200, version="1.33")[1]


@pytest.mark.parametrize(("nodes", "ok"), [(9, True), (18, True), (4, False), (12, False)])
def test_a_gb200_domain_is_an_ultraserver(nodes: int, ok: bool) -> None:
    pools, issues = eks({**GB200, "nvlinkDomainNodes": nodes})
    if ok:
        assert not issues and pools["gb200"].nvlink_domain_nodes == nodes
    else:
        message = issue_at(issues, "nodePools[0].nvlinkDomainNodes").message
        assert "9 (u-p6e-gb200x36)" in message and "18 (u-p6e-gb200x72)" in message


def test_a_b300_pool_is_no_rack_and_keeps_the_usual_defaults() -> None:
    pools, issues = eks({"name": "b300", "instanceType": "p6-b300.48xlarge", "maxNodes": 2, "zone": "us-east-1a"})
    assert not issues
    b300 = pools["b300"]
    assert (b300.provisioner, b300.arch, b300.nvlink_domain_nodes, b300.efa_interfaces, b300.fabric_gbps) == (
        "karpenter",
        "x86_64",
        0,
        16,
        6400,
    )
