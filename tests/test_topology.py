"""Tests for network topologies: each provider's levels, and where a job's pods land."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.errors import ConfigError
from components.models import TopologyLevelSpec
from components.topology import (
    HOSTNAME_LABEL,
    KUEUE_PREFERRED,
    KUEUE_REQUIRED,
    placement,
    provider_topology,
)
from tests.addons.stacks import stack_file


def labels(topology) -> list[str]:
    return [level.node_label for level in topology.levels]


def test_gke_levels_are_block_subblock_the_physical_host_then_the_node() -> None:
    topology = provider_topology("gcp", "a3-megagpu-8g", [])
    assert topology.names == ["block", "subblock", "gce-host", "host"]
    assert labels(topology) == [
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        HOSTNAME_LABEL,
    ]


@pytest.mark.parametrize("machine", ["a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g"])
def test_a_multi_node_gke_job_prefers_a_subblock_not_a_one_node_physical_host(machine: str) -> None:
    found = placement(provider_topology("gcp", machine, []), None, None, nodes=4)
    assert (found.mode, found.level.name) == ("preferred", "subblock")


def test_a_multi_node_job_that_names_the_physical_host_is_an_error() -> None:
    pools = [{"name": "a3", "machineType": "a3-megagpu-8g", "maxNodes": 4, "zone": "us-central1-a"}]
    job = {"name": "pretrain", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "command": ["python", "train.py"]}
    with pytest.raises(ConfigError) as caught:
        stack_file(
            "gke",
            nodePools=pools,
            scheduler={"type": "kueue", "topology": {"enabled": True}},
            jobs=[{**job, "nodes": 2, "topology": {"level": "gce-host"}}],
        )
    assert any(
        i.path.endswith("topology.level") and "one gce-host holds one node" in i.message for i in caught.value.issues
    ), caught.value.issues


def test_eks_has_three_network_layers_and_p6_b200_four() -> None:
    p5 = provider_topology("aws", "p5.48xlarge", [])
    assert p5.names == ["layer-1", "layer-2", "layer-3", "host"]
    assert labels(p5)[0] == "topology.k8s.aws/network-node-layer-1"
    p6 = provider_topology("aws", "p6-b200.48xlarge", [])
    assert p6.names == ["layer-1", "layer-2", "layer-3", "layer-4", "host"]
    assert p5.name != p6.name, "a Kueue Topology's levels are fixed; pools with other levels need another"


@pytest.mark.parametrize(("provider", "machine"), [("gcp", "g2-standard-96"), ("aws", "g6e.48xlarge"), ("aws", None)])
def test_machines_without_topology_labels_get_no_topology(provider: str, machine: str | None) -> None:
    # Kueue counts a node only when it carries every level's label: a topology would starve the pool.
    assert provider_topology(provider, machine, []) is None


def test_an_existing_cluster_uses_its_declared_levels_and_the_host() -> None:
    declared = [
        TopologyLevelSpec(name="spine", node_label="example.com/spine"),
        TopologyLevelSpec(name="leaf", node_label="example.com/leaf"),
    ]
    topology = provider_topology("existing", None, declared)
    assert topology.names == ["spine", "leaf", "host"]
    assert provider_topology("existing", None, []) is None


def test_volcano_tiers_count_up_from_the_finest_shared_level() -> None:
    topology = provider_topology("aws", "p5.48xlarge", [])
    assert [topology.tier(n) for n in ("layer-3", "layer-2", "layer-1")] == [1, 2, 3]


def test_a_named_level_is_required_by_default() -> None:
    found = placement(provider_topology("gcp", "a3-megagpu-8g", []), None, "subblock", nodes=8)
    assert found.mode == "required"
    assert found.kueue_annotations() == {KUEUE_REQUIRED: "cloud.google.com/gce-topology-subblock"}
    # Volcano tiers count up from the physical host's (1): a sub-block is tier 2.
    assert found.volcano_network_topology() == {"mode": "hard", "highestTierAllowed": 2}


def test_preferred_maps_to_volcano_soft() -> None:
    found = placement(provider_topology("gcp", "a3-megagpu-8g", []), "preferred", "block", nodes=8)
    assert found.kueue_annotations() == {KUEUE_PREFERRED: "cloud.google.com/gce-topology-block"}
    assert found.volcano_network_topology() == {"mode": "soft", "highestTierAllowed": 3}


@given(nodes=st.integers(min_value=1, max_value=512))
def test_by_default_only_multi_node_jobs_prefer_the_finest_shared_level(nodes: int) -> None:
    topology = provider_topology("aws", "p5.48xlarge", [])
    found = placement(topology, None, None, nodes)
    if nodes == 1:
        assert found is None
    else:
        assert (found.mode, found.level.name) == ("preferred", "layer-3")


def test_no_topology_no_placement() -> None:
    assert placement(None, "required", "block", nodes=4) is None


def test_volcano_refuses_pools_of_topologies_of_different_depths() -> None:
    pools = [
        {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 2, "zone": "us-east-1a"},
        {"name": "p6", "instanceType": "p6-b200.48xlarge", "maxNodes": 2, "zone": "us-east-1a"},
    ]
    with pytest.raises(ConfigError) as caught:
        stack_file("prod", nodePools=pools, scheduler={"type": "volcano", "topology": {"enabled": True}}, jobs=[])
    (issue,) = caught.value.issues
    assert issue.path == "scheduler.topology.enabled"
    assert "one HyperNode tree" in issue.message
    kueue = stack_file(
        "prod",
        nodePools=pools,
        scheduler={"type": "kueue", "queues": [{"name": "q", "gpus": 16}], "topology": {"enabled": True}},
        jobs=[],
    )
    assert {p.topology.name for p in kueue.pools.values()} == {"eks", "eks-4-layer"}
