"""Tests for resolving node pools against the catalog and the network config."""

from __future__ import annotations

from typing import Any
from unittest.mock import ANY

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import catalog, quantity
from components.errors import Issue
from components.models import NetworkConfig, NodePoolSpec
from components.pool import (
    POOL_LABEL,
    SYSTEM_RESERVE_CPU,
    SYSTEM_RESERVE_CPU_MIN,
    SYSTEM_RESERVE_MEMORY,
    SYSTEM_RESERVE_MEMORY_MIN_GIB,
    Pool,
    Provider,
    RailUse,
    resolve_pools,
)
from tests.support.factories import ROCE_NETWORK, pool

REGION = {"aws": "us-east-1", "gcp": "us-central1", "existing": None}
SELECTOR = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def resolve(
    provider: Provider,
    *specs: dict[str, Any],
    networks: list[dict[str, Any]] | None = None,
    gpu_labels: bool = False,
    **network: Any,
) -> tuple[dict[str, Pool], list[Issue]]:
    config = NetworkConfig.model_validate({"networks": networks or [], **network})
    pools = [NodePoolSpec.model_validate(s) for s in specs]
    return resolve_pools(pools, provider, REGION[provider], config, gpu_labels=gpu_labels)


def one(provider: Provider, spec: dict[str, Any], **kwargs: Any) -> Pool:
    pools, issues = resolve(provider, spec, **kwargs)
    assert not issues, issues
    return pools[spec["name"]]


def issue_at(issues: list[Issue], path: str) -> Issue:
    found = [i for i in issues if i.path == path]
    assert len(found) == 1, issues
    return found[0]


P5 = {"name": "h100", "instanceType": "p5.48xlarge", "maxNodes": 4, "zone": "us-east-1a"}
A3 = {"name": "a3", "machineType": "a3-highgpu-8g", "maxNodes": 4, "zone": "us-central1-a"}
EXISTING = {"name": "h100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": SELECTOR}


# -- GPUs from the catalog ----------------------------------------------------------------------


def test_p5_gets_its_gpus_and_efa_from_the_catalog() -> None:
    p = one("aws", P5)
    assert p.gpus_per_node == 8
    assert p.fabric == "efa"
    assert p.efa_interfaces == 32
    assert p.efa_gpudirect is True
    assert (p.vcpus, p.memory_gib) == (192, 2048)
    assert p.gpu_model == "NVIDIA H100 80GB"


def test_a3_gets_its_gpus_from_the_catalog() -> None:
    p = one("gcp", A3)
    assert p.gpus_per_node == 8
    assert p.fabric == "tcpx"
    assert p.gpu_nics == 4
    assert p.efa_interfaces == 0


def test_stated_gpus_matching_the_catalog_are_fine() -> None:
    assert one("aws", {**P5, "gpusPerNode": 8}).gpus_per_node == 8


@pytest.mark.parametrize(("provider", "spec"), [("aws", P5), ("gcp", A3)])
def test_stated_gpus_contradicting_the_catalog(provider: Provider, spec: dict[str, Any]) -> None:
    pools, issues = resolve(provider, {**spec, "gpusPerNode": 4})
    issue = issue_at(issues, "nodePools[0].gpusPerNode")
    assert "8" in issue.message
    assert "4" in issue.message
    assert pools == {}


def test_issue_paths_name_the_pools_position() -> None:
    _, issues = resolve("aws", P5, {**P5, "name": "second", "gpusPerNode": 2})
    assert [i.path for i in issues] == ["nodePools[1].gpusPerNode"]


def uncatalogued(spec: dict[str, Any]) -> tuple[dict[str, Pool], list[Issue]]:
    """A pool of p9.huge, a type the catalog does not know and the stack vouches for (cluster.allowUnknown)."""
    pool = NodePoolSpec.model_validate({"name": "x", "instanceType": "p9.huge", "maxNodes": 1, **spec})
    return resolve_pools([pool], "aws", REGION["aws"], NetworkConfig(), allow_unknown=["p9.huge"])


def test_an_uncatalogued_aws_type_is_refused_first_even_with_gpus_per_node() -> None:
    for extra in ({}, {"gpusPerNode": 8}):
        _, issues = resolve("aws", {"name": "x", "instanceType": "p5.96xlarge", "maxNodes": 1, **extra})
        assert [i.path for i in issues] == ["nodePools[0].instanceType"], "never a TCP pool from a typo"
        assert "did you mean 'p5.4xlarge' or 'p5.48xlarge'" in issues[0].message
        assert "cluster.allowUnknown: [p5.96xlarge]" in issues[0].message


def test_an_uncatalogued_type_the_stack_vouches_for_needs_gpus() -> None:
    _, issues = uncatalogued({"fabric": "tcp"})
    assert issue_at(issues, "nodePools[0].gpusPerNode")


def test_an_uncatalogued_type_with_gpus_resolves_to_a_tcp_pool() -> None:
    pools, issues = uncatalogued({"gpusPerNode": 4})
    assert not issues
    assert (pools["x"].gpus_per_node, pools["x"].fabric, pools["x"].vcpus) == (4, "tcp", None)


def test_an_existing_clusters_pool_needs_no_instance_type_and_may_name_any() -> None:
    for extra in ({}, {"instanceType": "dgx-h100-custom"}):
        spec = {"name": "x", "gpusPerNode": 8, "maxNodes": 1, "nodeSelector": {"a": "b"}, **extra}
        assert one("existing", spec).gpus_per_node == 8


# -- fabric -------------------------------------------------------------------------------------


def test_efa_on_a_type_without_efa() -> None:
    _, issues = resolve("aws", {**P5, "instanceType": "g5.xlarge", "fabric": "efa"})
    issue = issue_at(issues, "nodePools[0].fabric")
    assert "g5.xlarge" in issue.message
    assert "no EFA" in issue.message


def test_a_type_without_efa_defaults_to_tcp() -> None:
    assert one("aws", {**P5, "instanceType": "g5.xlarge"}).fabric == "tcp"


def test_efa_on_gcp() -> None:
    _, issues = resolve("gcp", {**A3, "fabric": "efa"})
    assert "AWS" in issue_at(issues, "nodePools[0].fabric").message


def test_efa_pool_needs_a_zone() -> None:
    _, issues = resolve("aws", {"name": "h100", "instanceType": "p5.48xlarge", "maxNodes": 4, "placement": "none"})
    assert issue_at(issues, "nodePools[0].zone")


def test_rdma_fabric_without_any_rdma_device() -> None:
    _, issues = resolve("existing", {**EXISTING, "fabric": "roce"}, rdma={"sharedDevicePlugin": False})
    assert "RDMA" in issue_at(issues, "nodePools[0].fabric").message


# -- zones and placement ------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "spec", "zone"), [("aws", P5, "us-west-2a"), ("gcp", A3, "europe-west4-a")])
def test_zone_outside_the_region(provider: Provider, spec: dict[str, Any], zone: str) -> None:
    _, issues = resolve(provider, {**spec, "zone": zone})
    issue = issue_at(issues, "nodePools[0].zone")
    assert zone in issue.message
    assert REGION[provider] in issue.message  # type: ignore[operator]


@pytest.mark.parametrize(
    ("provider", "spec", "placement"),
    [
        ("aws", P5, "cluster"),
        ("gcp", A3, "compact"),
        ("aws", {**P5, "instanceType": "g5.xlarge", "zone": None}, "none"),
        ("gcp", {**A3, "zone": None}, "none"),
        ("aws", {**P5, "capacity": {"type": "reservation", "reservationId": "cr-0123"}}, "none"),
        ("aws", {**P5, "capacity": {"type": "capacity-block", "reservationId": "cr-0456"}}, "none"),
        ("aws", {**P5, "capacity": {"type": "spot"}}, "cluster"),
        ("gcp", {**A3, "capacity": {"type": "reservation", "reservationId": "a3-res"}}, "none"),
        ("existing", EXISTING, "none"),
    ],
)
def test_default_placement(provider: Provider, spec: dict[str, Any], placement: str) -> None:
    assert one(provider, spec).placement == placement


@pytest.mark.parametrize(
    ("provider", "spec"), [("gcp", {**A3, "placement": "cluster"}), ("aws", {**P5, "placement": "compact"})]
)
def test_placement_of_the_other_cloud(provider: Provider, spec: dict[str, Any]) -> None:
    _, issues = resolve(provider, spec)
    assert issue_at(issues, "nodePools[0].placement")


def test_explicit_placement_on_a_reservation_is_kept() -> None:
    spec = {**P5, "placement": "cluster", "capacity": {"type": "reservation", "reservationId": "cr-0123"}}
    assert one("aws", spec).placement == "cluster"


# -- existing clusters --------------------------------------------------------------------------


def test_existing_pool_keeps_its_selector_and_gpus() -> None:
    p = one("existing", EXISTING)
    assert p.gpus_per_node == 8
    assert p.node_selector == SELECTOR
    assert POOL_LABEL not in p.labels
    assert p.fabric == "tcp"


def test_existing_cluster_requires_node_selector() -> None:
    _, issues = resolve("existing", {"name": "h100", "gpusPerNode": 8, "maxNodes": 4})
    assert issue_at(issues, "nodePools[0].nodeSelector")


def test_existing_cluster_requires_gpus_per_node() -> None:
    _, issues = resolve("existing", {"name": "h100", "maxNodes": 4, "nodeSelector": SELECTOR})
    assert issue_at(issues, "nodePools[0].gpusPerNode")


def test_existing_cluster_reports_both_at_once() -> None:
    _, issues = resolve("existing", {"name": "h100", "maxNodes": 4})
    assert {i.path for i in issues} == {"nodePools[0].nodeSelector", "nodePools[0].gpusPerNode"}


def test_existing_cluster_with_a_catalogued_type_derives_gpus() -> None:
    p = one(
        "existing",
        {"name": "h100", "instanceType": "p5.48xlarge", "maxNodes": 2, "nodeSelector": SELECTOR, "fabric": "tcp"},
    )
    assert p.gpus_per_node == 8


def test_existing_cluster_takes_no_capacity_type() -> None:
    _, issues = resolve("existing", {**EXISTING, "capacity": {"type": "spot"}})
    assert issue_at(issues, "nodePools[0].capacity.type")


# -- networks -----------------------------------------------------------------------------------


def test_declared_network_is_attached_with_its_interface() -> None:
    p = one("existing", {**EXISTING, "fabric": "roce", "networks": ["roce-network"]}, networks=[ROCE_NETWORK])
    assert [(n.name, n.namespace, n.interface) for n in p.networks] == [("roce-network", "training", "net1")]
    assert p.rdma_resource == "rdma/rdma_shared_device_a"


def test_undeclared_network() -> None:
    _, issues = resolve("existing", {**EXISTING, "fabric": "roce", "networks": ["ib-network"]}, networks=[ROCE_NETWORK])
    issue = issue_at(issues, "nodePools[0].networks[0]")
    assert "ib-network" in issue.message
    assert "roce-network" in issue.message


def test_networks_need_multus() -> None:
    _, issues = resolve(
        "existing",
        {**EXISTING, "fabric": "roce", "networks": ["roce-network"]},
        networks=[ROCE_NETWORK],
        multus={"enabled": False},
    )
    assert issue_at(issues, "nodePools[0].networks")


# -- labels -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "spec"), [("aws", P5), ("gcp", A3)])
def test_pools_this_stack_creates_carry_and_select_the_pool_label(provider: Provider, spec: dict[str, Any]) -> None:
    p = one(provider, {**spec, "labels": {"team": "llm"}})
    assert p.labels == {"team": "llm", POOL_LABEL: spec["name"], "gpu-training/node-check": "required"}
    assert p.node_selector == {POOL_LABEL: spec["name"]}


def test_node_selector_is_for_existing_clusters_only() -> None:
    _, issues = resolve("aws", {**P5, "nodeSelector": SELECTOR})
    assert POOL_LABEL in issue_at(issues, "nodePools[0].nodeSelector").message


def test_taints_default_to_the_gpu_taint() -> None:
    p = one("aws", P5)
    assert [(t.key, t.value, t.effect) for t in p.taints] == [("nvidia.com/gpu", "true", "NoSchedule")]


def test_duplicate_pool_names() -> None:
    pools, issues = resolve("aws", P5, P5)
    assert issue_at(issues, "nodePools[1].name")
    assert list(pools) == ["h100"]


MACHINES = [catalog.lookup(p, n) for p in ("aws", "gcp") for n in catalog.names(p)]


@settings(max_examples=200, deadline=None)
@given(machine=st.sampled_from(MACHINES), data=st.data())
def test_workers_filling_a_node_fit_it_with_the_system_reserve_left(machine: catalog.MachineType, data) -> None:
    gpus = data.draw(st.integers(min_value=1, max_value=machine.gpus), label="gpus per worker")
    pool = Pool(
        name="p",
        provider=machine.provider,
        gpus_per_node=machine.gpus,
        max_nodes=1,
        vcpus=machine.vcpus,
        memory_gib=machine.memory_gib,
    )
    requests = pool.worker_requests(gpus)
    workers = machine.gpus // gpus
    cpu, memory = quantity.parse(requests["cpu"]), quantity.parse(requests["memory"])
    assert cpu > 0 and memory > 0
    assert workers * cpu <= machine.vcpus - max(SYSTEM_RESERVE_CPU_MIN, machine.vcpus * SYSTEM_RESERVE_CPU)
    reserve = max(SYSTEM_RESERVE_MEMORY_MIN_GIB, machine.memory_gib * SYSTEM_RESERVE_MEMORY) * 2**30
    assert workers * memory <= machine.memory_gib * 2**30 - reserve


def test_a_machine_the_catalog_does_not_know_gives_no_default_requests() -> None:
    assert one("existing", EXISTING).worker_requests(8) == {}


def test_a_pool_without_max_nodes_is_sized_to_the_most_any_job_asks_of_it() -> None:
    from components.config import parse_stack
    from components.resolution import resolve as resolve_stack

    job = {"image": "registry.example.com/t:v1", "command": ["train.py"], "nodePool": "busy"}
    stack = resolve_stack(
        parse_stack(
            {
                "cluster": {"provider": "existing", "name": "c"},
                "nodePools": [
                    {"name": "busy", "gpusPerNode": 8, "nodeSelector": SELECTOR},
                    {"name": "idle", "gpusPerNode": 8, "minNodes": 3, "nodeSelector": SELECTOR},
                    {"name": "spare", "gpusPerNode": 8, "nodeSelector": SELECTOR},
                ],
                "jobs": [
                    {**job, "name": "a", "nodes": 2},
                    {**job, "name": "b", "nodes": 2, "elastic": {"minNodes": 2, "maxNodes": 6}},
                ],
            }
        )
    )
    assert {name: p.max_nodes for name, p in stack.pools.items()} == {"busy": 6, "idle": 3, "spare": 1}


def test_a_lone_pool_on_an_existing_cluster_is_found_by_the_gpu_feature_discovery_label() -> None:
    spec = {"name": "h100", "gpusPerNode": 8}
    pools, issues = resolve("existing", spec, gpu_labels=True)
    assert not issues and pools["h100"].node_selector == {"nvidia.com/gpu.present": "true"}
    for pools_and_labels in (((spec, {**spec, "name": "a100"}), True), ((spec,), False)):
        specs, labelled = pools_and_labels
        _, issues = resolve("existing", *specs, gpu_labels=labelled)
        assert "nodePools[0].nodeSelector" in [i.path for i in issues]


def test_an_eks_pool_that_scales_from_zero_is_karpenters_and_one_with_warm_nodes_a_node_groups() -> None:
    assert one("aws", P5).provisioner == "karpenter"
    assert one("aws", {**P5, "minNodes": 2}).provisioner == "nodegroup"
    assert one("aws", {**P5, "provisioner": "nodegroup"}).provisioner == "nodegroup"
    assert one("gcp", A3).provisioner == "gke" and one("existing", EXISTING).provisioner is None


@pytest.mark.parametrize(
    ("provider", "spec", "path", "words"),
    [
        ("aws", {**P5, "provisioner": "karpenter", "minNodes": 2}, "minNodes", "keeps none warm"),
        ("gcp", {**A3, "provisioner": "karpenter"}, "provisioner", "GKE pools scale with GKE's autoscaler"),
        ("existing", {**EXISTING, "provisioner": "nodegroup"}, "provisioner", "nodes are not made here"),
        (
            "aws",
            {**P5, "minNodes": 1, "capacity": {"type": "capacity-block", "reservationId": "cr-0123456789abcdef0"}},
            "minNodes",
            "starts empty",
        ),
        ("gcp", {**A3, "machineType": "g2-standard-48", "localStorage": "raid0"}, "localStorage", "no local disks"),
        ("existing", {**EXISTING, "localStorage": "none"}, "localStorage", "not an existing cluster's"),
    ],
)
def test_scaling_mistakes_name_the_key(provider: Provider, spec: dict[str, Any], path: str, words: str | None) -> None:
    _, issues = resolve(provider, spec)
    issue = issue_at(issues, f"nodePools[0].{path}")
    assert words is None or words in issue.message


def test_the_summary_says_how_each_pool_scales() -> None:
    assert "0-4 nodes by Karpenter" in one("aws", P5).summary()
    assert "2-4 nodes, node group + Cluster Autoscaler" in one("aws", {**P5, "minNodes": 2}).summary()
    assert "4 nodes, fixed node group" in one("aws", {**P5, "minNodes": 4}).summary()
    assert "0-4 nodes, GKE autoscaler" in one("gcp", A3).summary()
    assert "up to 4 nodes" in one("existing", EXISTING).summary()


def test_a_scaling_node_group_needs_an_autoscaler_release_for_the_clusters_minor() -> None:
    from components.config import parse_stack
    from components.errors import ConfigError
    from components.resolution import resolve as resolve_stack

    cluster = {"provider": "aws", "name": "c", "region": "us-east-1", "kubernetesVersion": "1.36"}
    with pytest.raises(ConfigError, match=r"Cluster Autoscaler, which has no release pinned for 1\.36"):
        resolve_stack(parse_stack({"cluster": cluster, "nodePools": [{**P5, "minNodes": 1}]}))
    assert resolve_stack(parse_stack({"cluster": cluster, "nodePools": [P5]})).pools["h100"].provisioner == "karpenter"


# -- rails and RDMA defaults ---------------------------------------------------------------------

RAILS = {"count": 8, "interfaces": "ens{n}f0np0", "devices": "mlx5_{i}", "range": "192.168.0.0/16", "speedGbps": 400}
ROCE = {**EXISTING, "fabric": "roce"}


def test_rails_are_attached_on_net1_to_net8_and_set_the_pools_rails_and_bandwidth() -> None:
    p = one("existing", {**ROCE, "rails": RAILS})
    assert [(n.name, n.interface) for n in p.networks][:2] == [("h100-rail-0", "net1"), ("h100-rail-1", "net2")]
    assert len(p.networks) == 8 and p.networks[-1].interface == "net8"
    assert (p.rails, p.rail_gbps, p.fabric_gbps) == (8, 400, 3200)
    assert p.ib_hca == "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7"
    assert p.rail_shortfall() == 0 and p.rdma_advice() == []


def test_rails_without_a_speed_leave_the_bandwidth_unknown() -> None:
    p = one("existing", {**ROCE, "rails": {**RAILS, "speedGbps": None}})
    assert (p.rails, p.rail_gbps, p.fabric_gbps) == (8, None, 0)


def test_nads_listed_by_hand_still_work_and_their_devices_name_the_hcas() -> None:
    networks = [
        {**ROCE_NETWORK, "name": f"rail{i}", "interface": None, "master": f"ens{i}", "rdmaDevice": f"mlx5_{i}",
         "ipam": {"range": f"192.168.{i}.0/24"}}
        for i in (0, 3)
    ]  # fmt: skip
    p = one("existing", {**ROCE, "networks": ["rail0", "rail3"]}, networks=networks)
    assert [(n.name, n.interface) for n in p.networks] == [("rail0", "net1"), ("rail3", "net2")]
    assert p.ib_hca == "=mlx5_0,mlx5_3"
    assert p.rails == 0 and p.rail_shortfall() == 6, "8 rails assumed, one per GPU"
    assert p.rdma_interfaces == ["ens0", "ens3"], "the shared plugin exposes the NADs' parents"


def test_a_bare_count_beside_hand_listed_networks_states_rails_devices_and_speed() -> None:
    rails = {"count": 1, "devices": ["mlx5_4"], "speedGbps": 200}
    p = one("existing", {**ROCE, "networks": ["roce-network"], "rails": rails}, networks=[ROCE_NETWORK])
    assert (p.rails, p.fabric_gbps, p.ib_hca) == (1, 200, "=mlx5_4")


def test_without_known_devices_nccl_ib_hca_keeps_the_configured_value_and_the_pool_is_warned() -> None:
    p = one("existing", {**ROCE, "networks": ["roce-network"]}, networks=[ROCE_NETWORK])
    assert p.ib_hca == "mlx5"
    advice = p.rdma_advice()
    assert len(advice) == 2
    assert advice[0].startswith("pool 'h100' (roce) uses 1 of its nodes' 8 rails: workers attach 1 of the node's")
    assert "one per GPU assumed" in advice[0] and "attach one network per rail" in advice[0]
    assert "NCCL_IB_HCA=mlx5 is a prefix" in advice[1]
    exact = one("existing", {**ROCE, "networks": ["roce-network"]}, networks=[ROCE_NETWORK], rdma={"hca": "=mlx5_2"})
    assert exact.ib_hca == "=mlx5_2" and len(exact.rdma_advice()) == 1


def test_sriov_vfs_alone_need_no_hca_list() -> None:
    sriov = {"name": "vf", "type": "ib-sriov", "resourceName": "nvidia.com/vf", "ipam": {"range": "10.0.0.0/24"}}
    p = one(
        "existing",
        {**EXISTING, "fabric": "infiniband", "networks": ["vf"]},
        networks=[sriov],
        rdma={"sharedDevicePlugin": False},
    )
    assert p.ib_hca == "mlx5" and all("NCCL_IB_HCA" not in a for a in p.rdma_advice()), "a pod sees only its VFs"


def test_an_infiniband_pool_reaches_every_declared_rail_through_the_shared_plugin() -> None:
    p = one("existing", {**EXISTING, "fabric": "infiniband", "rails": {"count": 8, "devices": "mlx5_{i}"}})
    assert p.networks == [] and p.rail_use() == RailUse(8, 8, assumed=False) and p.rdma_advice() == []


def test_an_infiniband_pool_with_no_rails_and_no_network_uses_every_hca_the_plugin_exposes() -> None:
    # Seed 000's shape: IB verbs need no pod interface, and the plugin (no ifNames) exposes every HCA.
    bare = one("existing", {**EXISTING, "fabric": "infiniband"})
    assert bare.rdma_interfaces == [] and bare.rail_use() == RailUse(8, 8, assumed=True)
    assert bare.rail_shortfall() == 0
    assert [a for a in bare.rdma_advice() if "rail" in a.split(":")[0]] == [], "no rail is lost"


def test_an_infiniband_pool_reaches_only_the_hcas_the_plugin_exposes() -> None:
    # One IPoIB NAD on ibs1 makes the plugin's selector ifNames: [ibs1], so a worker sees one HCA of 8.
    ipoib = {"name": "ib0", "type": "ipoib", "master": "ibs1"}
    p = one("existing", {**EXISTING, "fabric": "infiniband", "networks": ["ib0"]}, networks=[ipoib])
    use = p.rail_use()
    assert use is not None and (use.usable, use.total) == (1, 8)
    assert use.limit is not None and "the RDMA shared device plugin exposes the devices of ibs1" in use.limit
    assert "network.rdma.interfaces" in use.limit
    listed = one(
        "existing",
        {**EXISTING, "fabric": "infiniband", "networks": ["ib0"]},
        networks=[ipoib],
        rdma={"interfaces": [f"ibs{n}" for n in range(1, 9)]},
    )
    assert listed.rail_use() == RailUse(8, 8, assumed=True)


def test_an_exact_hca_list_shorter_than_the_rails_is_a_shortfall() -> None:
    p = one("existing", {**EXISTING, "fabric": "infiniband", "rails": 8}, rdma={"hca": "=mlx5_0,mlx5_1"})
    use = p.rail_use()
    assert use is not None and (use.usable, use.total) == (2, 8)
    assert use.limit is not None and "NCCL_IB_HCA==mlx5_0,mlx5_1 names 2 of the node's 8 rails" in use.limit


def test_a_roce_pool_uses_only_the_rails_it_attaches() -> None:
    p = one("existing", {**ROCE, "rails": 8})
    assert p.rails == 8 and p.rail_use() == RailUse(0, 8, assumed=False, limit=ANY) and p.rail_shortfall() == 8


def test_other_fabrics_have_no_rails_to_fall_short_of() -> None:
    assert one("aws", P5).rail_shortfall() == 0 and one("aws", P5).rdma_advice() == []


def test_traffic_class_and_service_level_reach_the_pool() -> None:
    p = one("existing", {**ROCE, "trafficClass": 106, "serviceLevel": 3})
    assert (p.ib_tc, p.ib_sl) == (106, 3)
    assert (one("existing", ROCE).ib_tc, one("existing", ROCE).ib_sl) == (None, None)


def test_macvlan_on_an_infiniband_pool_is_refused_naming_the_network() -> None:
    _, issues = resolve(
        "existing", {**EXISTING, "fabric": "infiniband", "networks": ["roce-network"]}, networks=[ROCE_NETWORK]
    )
    issue = issue_at(issues, "nodePools[0].networks[0]")
    assert "macvlan cannot attach to an IPoIB parent" in issue.message and "ipoib" in issue.message


def test_ipoib_on_a_roce_pool_is_refused() -> None:
    ipoib = {"name": "ib0", "type": "ipoib", "master": "ibs1", "ipam": {"range": "10.0.0.0/24"}}
    _, issues = resolve("existing", {**ROCE, "networks": ["ib0"]}, networks=[ipoib])
    assert "ipoib needs an InfiniBand parent" in issue_at(issues, "nodePools[0].networks[0]").message


def test_a_rail_nad_clashing_with_a_declared_network() -> None:
    _, issues = resolve("existing", {**ROCE, "rails": RAILS}, networks=[{**ROCE_NETWORK, "name": "h100-rail-3"}])
    assert (
        "makes NAD training/h100-rail-3, which network.networks declares too"
        in issue_at(issues, "nodePools[0].rails").message
    )


def test_rails_need_multus() -> None:
    _, issues = resolve("existing", {**ROCE, "rails": RAILS}, multus={"enabled": False})
    assert "needs Multus" in issue_at(issues, "nodePools[0].rails").message


def test_gke_gpudirect_rails_are_the_machines_gpu_nics() -> None:
    mega = {**A3, "machineType": "a3-megagpu-8g"}
    assert one("gcp", {**mega, "rails": 8}).fabric == "tcpxo"
    _, issues = resolve("gcp", {**mega, "rails": 4})
    assert "a3-megagpu-8g has 8 GPU NICs, not 4" in issue_at(issues, "nodePools[0].rails").message
    _, issues = resolve("gcp", {**mega, "rails": {"count": 8, "devices": "mlx5_{i}"}})
    assert issue_at(issues, "nodePools[0].rails.devices")
    _, issues = resolve("aws", {**P5, "rails": 8})
    assert "roce and infiniband" in issue_at(issues, "nodePools[0].rails").message


@settings(max_examples=30, deadline=None)
@given(count=st.integers(1, 16), gpus=st.sampled_from([1, 4, 8, 16]))
def test_a_roce_pool_uses_every_declared_rail_and_is_advised_when_gpus_share_one(count: int, gpus: int) -> None:
    rails = {"count": count, "interfaces": "ens{n}f0np0", "devices": "mlx5_{i}", "range": "10.0.0.0/8"}
    p = one("existing", {**ROCE, "gpusPerNode": gpus, "rails": rails})
    assert len(p.networks) == count and len({n.interface for n in p.networks}) == count
    assert p.rail_use() == RailUse(count, count, assumed=False), "each rail attached, named and exposed"
    assert p.rail_shortfall() == 0
    # Fewer rails than GPUs is the machine, not lost bandwidth: advice, never a shortfall.
    assert [a for a in p.rdma_advice() if "share another's NIC" in a] == ([] if count >= gpus else [ANY])
    assert not any("uses" in a for a in p.rdma_advice())


def test_a_pool_finds_its_machine_in_the_catalog_on_any_provider() -> None:
    assert pool("efa").machine().name == "p5.48xlarge"
    assert pool("tcpxo").machine().name == "a3-megagpu-8g"
    assert pool("tcp", instanceType="g6e.48xlarge").machine().name == "g6e.48xlarge", "an existing cluster's AWS type"
    assert pool("tcp").machine() is None, "an existing pool that names no type"


# GKE versions: each GPUDirect machine's least GKE patch (a catalog fact), for a minor alone or an exact version.

GPUDIRECT_MACHINES = [m for m in catalog.names("gcp") if (found := catalog.lookup("gcp", m)) and found.gpudirect]


def version_issues(machine: str, version: str, **spec: Any) -> list[Issue]:
    """The issues a GKE pool of `machine` on its own fabric has on cluster version `version`."""
    pools = [
        NodePoolSpec.model_validate(
            {"name": "gpu", "machineType": machine, "maxNodes": 2, "zone": "us-central1-a", **spec}
        )
    ]
    _, issues = resolve_pools(pools, "gcp", "us-central1", NetworkConfig(), kubernetes_version=version)
    return issues


@pytest.mark.parametrize(
    ("machine", "version", "least"),
    [
        ("a3-megagpu-8g", "1.31.9-gke.1000", "1.31.14-gke.1243000"),
        ("a3-highgpu-8g", "1.29.1-gke.1", "1.29.15-gke.2467000"),
        ("a3-ultragpu-8g", "1.31.3-gke.9", "1.31.4-gke.1183000"),
        ("a3-ultragpu-8g", "1.30.14-gke.1", "1.31.4-gke.1183000"),
        ("a4-highgpu-8g", "1.32.1-gke.1", "1.32.2-gke.1422000"),
        ("a4-highgpu-8g", "1.31", "1.32.2-gke.1422000"),
    ],
)
def test_a_version_below_the_machines_least_gke_patch_names_cluster_kubernetes_version(
    machine: str, version: str, least: str
) -> None:
    issue = issue_at(version_issues(machine, version), "cluster.kubernetesVersion")
    assert least in issue.message and machine in issue.message, issue.message


@pytest.mark.parametrize(
    ("machine", "version"),
    [
        ("a3-megagpu-8g", "1.31"),
        ("a3-megagpu-8g", "1.31.14-gke.1243000"),
        ("a3-megagpu-8g", "1.33.5-gke.1"),
        ("a3-ultragpu-8g", "1.31"),
        ("a4-highgpu-8g", "1.32"),
        ("a4-highgpu-8g", "1.35.1-gke.1396000"),
    ],
)
def test_a_minor_alone_or_a_version_at_the_least_patch_runs_the_fabric(machine: str, version: str) -> None:
    assert not version_issues(machine, version)


@settings(max_examples=60, deadline=None)
@given(
    machine=st.sampled_from(GPUDIRECT_MACHINES),
    minor=st.integers(29, 37),
    patch=st.integers(0, 20),
    build=st.integers(0, 3_000_000),
)
def test_a_minor_alone_stands_for_its_newest_patch_and_a_newer_one_never_breaks_a_fabric(
    machine: str, minor: int, patch: int, build: int
) -> None:
    def fine(version: str) -> bool:
        return not [i for i in version_issues(machine, version) if i.path == "cluster.kubernetesVersion"]

    exact = f"1.{minor}.{patch}-gke.{build}"
    assert fine(f"1.{minor}") == fine(f"1.{minor}.999-gke.99999999"), "GKE takes a minor to its newest patch"
    if fine(exact):
        assert fine(f"1.{minor}.{patch + 1}-gke.0") and fine(f"1.{minor + 1}")


def test_gke_managed_rdma_needs_its_first_version_even_on_an_exact_134_patch() -> None:
    issues = version_issues("a4-highgpu-8g", "1.34.0-gke.5", acceleratorNetworkProfile="auto")
    assert "1.34.1-gke.1829001" in issue_at(issues, "nodePools[0].acceleratorNetworkProfile").message
    assert not version_issues("a4-highgpu-8g", "1.34.1-gke.1829001", acceleratorNetworkProfile="auto")


def test_the_autoscaler_ignores_the_node_check_taint_when_it_sizes_a_node_group() -> None:
    from components.addons import autoscaler
    from components.config import parse_stack
    from components.models.nodepool import STARTUP_TAINT_PREFIX
    from components.resolution import resolve as resolve_stack

    cluster = {"provider": "aws", "name": "c", "region": "us-east-1"}
    checked = resolve_stack(parse_stack({"cluster": cluster, "nodePools": [{**P5, "minNodes": 1}]}))
    (pool,) = checked.pools.values()
    # Under the autoscaler's own startup-taint prefix: left out of the group's template with no flag at all.
    assert [t.key for t in pool.startup_taints] == [f"{STARTUP_TAINT_PREFIX}gpu-training-node-check"]
    release = autoscaler.release(checked)
    assert release is not None and "startup-taint" not in release.values.get("extraArgs", {})


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


# -- GKE rack-scale pools (A4X, A4X Max) ------------------------------------------------------------

A4X = {
    "name": "gb200",
    "machineType": "a4x-highgpu-4g",
    "maxNodes": 18,
    "zone": "us-central1-a",
    "capacity": {"type": "reservation", "reservationId": "gb200-block"},
}
A4X_MAX = {**A4X, "name": "gb300", "machineType": "a4x-maxgpu-4g-metal"}


def gke_resolve(spec: dict[str, Any], version: str) -> tuple[dict[str, Pool], list[Issue]]:
    return resolve_pools(
        [NodePoolSpec.model_validate(spec)], "gcp", "us-central1", NetworkConfig(), kubernetes_version=version
    )


def test_an_arm64_gke_pool_tolerates_gkes_arm_taint_beside_its_own() -> None:
    gb200 = one("gcp", A4X)
    assert gb200.arch == "arm64" and gb200.nvlink_domain_nodes == 18
    assert [(t.key, t.value) for t in gb200.taints] == [("nvidia.com/gpu", "present"), ("kubernetes.io/arch", "arm64")]
    custom = one("gcp", {**A4X, "taints": [{"key": "team", "value": "llm"}]})
    assert [t.key for t in custom.taints] == ["team", "kubernetes.io/arch"], "GKE puts it whatever the pool says"
    assert all(t.key != "kubernetes.io/arch" for t in one("gcp", A3).taints), "x86 nodes carry no Arm taint"


def test_a_gke_rack_scale_pool_is_placed_in_its_sub_block_even_on_a_reservation() -> None:
    assert one("gcp", A4X).placement == "compact", "the 1x72 workload policy"
    assert one("gcp", {**A4X, "placement": "none"}).placement == "none"
    assert one("gcp", {**A4X, "zone": None}).placement == "none", "a workload policy keeps its pool in one zone"
    assert one("gcp", {**A3, "capacity": {"type": "reservation", "reservationId": "r"}}).placement == "none"


def test_a_gke_rack_scale_pool_holds_at_most_one_1x72_sub_block() -> None:
    _, issues = resolve("gcp", {**A4X, "maxNodes": 36})
    assert "one pool per sub-block" in issue_at(issues, "nodePools[0].maxNodes").message
    _, issues = resolve("gcp", {**A4X, "maxNodes": 36, "placement": "none"})
    assert not issues, "without the workload policy the pool may span sub-blocks"
    _, issues = resolve("gcp", {**A4X, "nvlinkDomainNodes": 19})
    assert "at most 18" in issue_at(issues, "nodePools[0].nvlinkDomainNodes").message


def test_a4x_on_gke_1_35_claims_its_nics_through_gkes_accelerator_network_profile() -> None:
    pools, issues = gke_resolve(A4X, "1.35")
    assert not issues
    assert pools["gb200"].dranet and not pools["gb200"].roce_metal
    assert (pools["gb200"].gpu_nics, pools["gb200"].extra_gvnics) == (4, 0), "GKE makes them all"


def test_a4x_max_is_bare_metal_rdma_over_the_metal_roce_network_with_dranet() -> None:
    pools, issues = gke_resolve(A4X_MAX, "1.34")
    assert not issues, "a minor alone is GKE's newest patch of it, past 1.34.3-gke.1318000"
    gb300 = pools["gb300"]
    assert gb300.fabric == "rdma" and gb300.dranet and gb300.roce_metal
    assert (gb300.gpu_nics, gb300.extra_gvnics, gb300.fabric_gbps) == (8, 1, 3200)


@pytest.mark.parametrize("profile", ["none", "auto"])
def test_a4x_max_takes_no_accelerator_network_profile(profile: str) -> None:
    _, issues = gke_resolve({**A4X_MAX, "acceleratorNetworkProfile": profile}, "1.35")
    assert "vpc-roce-metal" in issue_at(issues, "nodePools[0].acceleratorNetworkProfile").message


def test_a4x_max_needs_gke_1_34_3_gke_1318000() -> None:
    _, issues = gke_resolve(A4X_MAX, "1.34.1-gke.1829001")
    assert "1.34.3-gke.1318000 or later" in issue_at(issues, "cluster.kubernetesVersion").message
    _, issues = gke_resolve(A4X_MAX, "1.33")
    assert "1.34.3-gke.1318000" in issue_at(issues, "cluster.kubernetesVersion").message
    _, issues = gke_resolve(A4X_MAX, "1.34.3-gke.1318000")
    assert not issues
