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
    SYSTEM_RESERVE_CPU,
    SYSTEM_RESERVE_CPU_MIN,
    SYSTEM_RESERVE_MEMORY,
    SYSTEM_RESERVE_MEMORY_MIN_GIB,
    Pool,
    Provider,
    RailUse,
)
from components.pools import resolve_pools
from components.wellknown import POOL_LABEL
from tests.support.factories import ROCE_NETWORK, pool
from tests.support.pools import A3, EXISTING, P5, REGION, SELECTOR, issue_at, one, resolve

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


@pytest.mark.parametrize(
    ("provider", "spec", "path", "words"),
    [
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


def test_the_autoscaler_ignores_the_node_check_taint_when_it_sizes_a_node_group() -> None:
    from components.addons import autoscaler
    from components.config import parse_stack
    from components.resolution import resolve as resolve_stack
    from components.wellknown import STARTUP_TAINT_PREFIX

    cluster = {"provider": "aws", "name": "c", "region": "us-east-1"}
    checked = resolve_stack(parse_stack({"cluster": cluster, "nodePools": [{**P5, "minNodes": 1}]}))
    (pool,) = checked.pools.values()
    # Under the autoscaler's own startup-taint prefix: left out of the group's template with no flag at all.
    assert [t.key for t in pool.startup_taints] == [f"{STARTUP_TAINT_PREFIX}gpu-training-node-check"]
    release = autoscaler.release(checked)
    assert release is not None and "startup-taint" not in release.values.get("extraArgs", {})
