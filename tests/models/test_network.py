"""Tests for the network models: NAD types (ipoib among them), RDMA devices, and a pool's rails."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.config import parse_stack
from components.errors import ConfigError
from components.models import NetworkSpec, NodePoolSpec
from components.models.network import RailsSpec, expand

CLUSTER = {"provider": "existing", "name": "train", "context": "train"}
IPAM = {"type": "whereabouts", "range": "192.168.10.0/24"}
RAILS = {"count": 8, "interfaces": "ens{n}f0np0", "devices": "mlx5_{i}", "range": "192.168.0.0/16"}


def pool(fabric: str = "roce", **fields: Any) -> dict[str, Any]:
    return {"name": "h100", "gpusPerNode": 8, "maxNodes": 4, "fabric": fabric, "nodeSelector": {"a": "b"}, **fields}


def error_of(pools: list[dict[str, Any]], networks: list[dict[str, Any]] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_stack({"cluster": CLUSTER, "nodePools": pools, "network": {"networks": networks or []}})
    return str(caught.value)


# -- NetworkSpec ---------------------------------------------------------------------------------


def test_ipoib_is_a_network_type_on_an_ipoib_parent() -> None:
    ib = NetworkSpec.model_validate({"name": "ib0", "type": "ipoib", "master": "ibs1", "ipam": IPAM})
    assert (ib.type, ib.master) == ("ipoib", "ibs1")


def test_only_ipoib_may_go_without_addresses() -> None:
    ib = NetworkSpec.model_validate({"name": "ib0", "namespace": "training", "type": "ipoib", "master": "ibs1"})
    assert ib.ipam is None
    message = error_of([pool()], [{"name": "roce", "type": "macvlan", "master": "ens1"}])
    assert "network.networks[0].ipam: is required for a macvlan network" in message


def test_ipoib_needs_its_parent_and_takes_no_device() -> None:
    message = error_of([pool("infiniband")], [{"name": "ib0", "type": "ipoib", "ipam": IPAM}])
    assert "network.networks[0].master: a ipoib network needs `master`" in message
    message = error_of(
        [pool("infiniband")], [{"name": "ib0", "type": "ipoib", "master": "ibs1", "device": "mlx5_0", "ipam": IPAM}]
    )
    assert "network.networks[0].device: `device` applies to host-device networks, not ipoib" in message


@pytest.mark.parametrize(
    ("network", "hca"),
    [
        ({"type": "host-device", "device": "mlx5_0"}, "mlx5_0"),
        ({"type": "host-device", "device": "ens1f0np0"}, None),
        ({"type": "macvlan", "master": "ens1f0np0"}, None),
        ({"type": "macvlan", "master": "ens1f0np0", "rdmaDevice": "mlx5_3"}, "mlx5_3"),
        ({"type": "ipoib", "master": "ibs1", "rdmaDevice": "mlx5_0:1"}, "mlx5_0:1"),
    ],
)
def test_the_rdma_device_of_a_network(network: dict[str, Any], hca: str | None) -> None:
    assert NetworkSpec.model_validate({"name": "n", "ipam": IPAM, **network}).hca == hca


# -- rails: shape --------------------------------------------------------------------------------


def test_a_bare_count_states_the_rails_and_makes_no_nads() -> None:
    spec = NodePoolSpec.model_validate(pool(rails=8))
    assert spec.rails == RailsSpec(count=8)
    assert not spec.rails.makes_nads and spec.rail_networks() == []


def test_patterns_count_rails_from_0_with_i_and_from_1_with_n() -> None:
    assert expand("mlx5_{i}", 3) == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert expand("ens{n}f0np0", 2) == ["ens1f0np0", "ens2f0np0"]
    rails = RailsSpec.model_validate({**RAILS, "count": 2})
    assert rails.interfaces == ["ens1f0np0", "ens2f0np0"] and rails.devices == ["mlx5_0", "mlx5_1"]


def test_one_resource_name_serves_every_rail() -> None:
    rails = RailsSpec.model_validate({"count": 3, "type": "sriov", "resourceName": "nvidia.com/rdma_vf"})
    assert rails.resource_name == ["nvidia.com/rdma_vf"] * 3


@pytest.mark.parametrize(
    ("rails", "path", "words"),
    [
        ({**RAILS, "interfaces": "ens1f0np0"}, "rails.interfaces", "names one interface; give 8 in a list"),
        ({**RAILS, "devices": ["mlx5_0", "mlx5_1"]}, "rails.devices", "lists 2 names for 8 rails"),
        ({**RAILS, "count": 2, "devices": ["mlx5_0", "mlx5_0"]}, "rails.devices", "names a device twice"),
        # Found by the fuzz run: an empty name made a NAD without a parent and crashed with a traceback.
        ({**RAILS, "count": 1, "interfaces": ""}, "rails.interfaces", "names an empty one"),
        ({**RAILS, "count": 2, "devices": ["mlx5_0", " "]}, "rails.devices", "names an empty one"),
        ({**RAILS, "range": "192.168.0.0/22"}, "rails.range", "holds 4 /24 subnets and 8 rails need 8: use a /21"),
        ({**RAILS, "range": "10.0.0.0/24", "prefixLength": 31}, "rails.prefixLength", "leaves no addresses"),
        ({**RAILS, "range": "10.0.0/24"}, "rails.range", "is not a CIDR"),
        ({"count": 0}, "rails.count", "must be greater than or equal to 1"),
        # Found by the mutation test: patterns expanded 2**31 names before the bound refused the count (MemoryError).
        ({**RAILS, "count": 2**31}, "rails.count", "must be less than or equal to 32"),
        ({**RAILS, "speedGbps": 0}, "rails.speedGbps", "must be greater than 0"),
    ],
)
def test_rail_shape_mistakes_name_the_key(rails: dict[str, Any], path: str, words: str) -> None:
    message = error_of([pool(rails=rails)])
    assert f"nodePools[0].{path}: " in message and words in message, message


def test_rails_are_carved_from_the_range_in_order() -> None:
    rails = RailsSpec.model_validate({**RAILS, "count": 3, "range": "10.20.0.0/16", "prefixLength": 20})
    assert rails.subnets() == ["10.20.0.0/20", "10.20.16.0/20", "10.20.32.0/20"]
    v6 = RailsSpec.model_validate({**RAILS, "count": 2, "range": "fd00:10::/48"})
    assert v6.subnets() == ["fd00:10::/64", "fd00:10:0:1::/64"]


# -- rails: the NADs they make -------------------------------------------------------------------


def test_roce_rails_are_macvlan_nads_one_per_rail_with_their_device() -> None:
    nads = NodePoolSpec.model_validate(pool(rails=RAILS)).rail_networks()
    assert [n.name for n in nads] == [f"h100-rail-{i}" for i in range(8)]
    assert {n.type for n in nads} == {"macvlan"} and {n.namespace for n in nads} == {"training"}
    assert [n.master for n in nads][:2] == ["ens1f0np0", "ens2f0np0"]
    assert [n.hca for n in nads][-1] == "mlx5_7"
    assert [n.ipam.range for n in nads][:2] == ["192.168.0.0/24", "192.168.1.0/24"]


def test_infiniband_rails_default_to_ipoib() -> None:
    rails = {"count": 2, "interfaces": "ibp{i}s0", "range": "10.0.0.0/16", "namespace": "research", "mtu": 4092}
    nads = NodePoolSpec.model_validate(pool("infiniband", rails=rails)).rail_networks()
    assert [(n.type, n.master, n.namespace, n.mtu) for n in nads] == [
        ("ipoib", "ibp0s0", "research", 4092),
        ("ipoib", "ibp1s0", "research", 4092),
    ]


def test_sriov_rails_each_name_their_vf_resource() -> None:
    rails = {
        "count": 2,
        "type": "ib-sriov",
        "resourceName": "nvidia.com/rail_{i}",
        "pkey": "0x8001",
        "range": "10.0.0.0/16",
    }
    nads = NodePoolSpec.model_validate(pool("infiniband", rails=rails)).rail_networks()
    assert [(n.type, n.resource_name, n.pkey) for n in nads] == [
        ("ib-sriov", "nvidia.com/rail_0", "0x8001"),
        ("ib-sriov", "nvidia.com/rail_1", "0x8001"),
    ]


def test_host_device_rails_move_their_interfaces() -> None:
    rails = {**RAILS, "count": 2, "type": "host-device"}
    nads = NodePoolSpec.model_validate(pool(rails=rails)).rail_networks()
    assert [(n.device, n.hca) for n in nads] == [("ens1f0np0", "mlx5_0"), ("ens2f0np0", "mlx5_1")]


@pytest.mark.parametrize(
    ("fabric", "rails", "path", "words"),
    [
        ("infiniband", {**RAILS, "type": "macvlan"}, "rails.type", "macvlan cannot attach to an IPoIB parent"),
        ("roce", {**RAILS, "type": "ipoib"}, "rails.type", "ipoib needs an InfiniBand parent"),
        ("roce", {**RAILS, "type": "ib-sriov"}, "rails.type", "ib-sriov does not carry roce"),
        ("roce", {**RAILS, "type": "sriov"}, "rails.interfaces", "applies to macvlan / ipoib / host-device rails"),
        (
            "roce",
            {"count": 8, "type": "sriov", "resourceName": "a/b", "devices": "mlx5_{i}", "range": "10.0.0.0/16"},
            "rails.devices",
            "whose names vary by node",
        ),
        ("roce", {**RAILS, "resourceName": "nvidia.com/vf"}, "rails.resourceName", "applies to sriov / ib-sriov"),
        ("roce", {**RAILS, "vlan": 10}, "rails.vlan", "applies to sriov rails, not macvlan"),
        ("roce", {"count": 8, "range": "10.0.0.0/16"}, "rails.interfaces", "8 macvlan rails need their interfaces"),
        (
            "roce",
            {"count": 2, "type": "sriov", "range": "10.0.0.0/16"},
            "rails.resourceName",
            "need their resourceName",
        ),
        ("roce", {"count": 8, "interfaces": "ens{n}f0np0"}, "rails.range", "is required"),
        ("tcp", RAILS, "rails", "this pool's fabric is tcp"),
    ],
)
def test_rails_that_cannot_make_their_nads_name_the_key(
    fabric: str, rails: dict[str, Any], path: str, words: str
) -> None:
    message = error_of([pool(fabric, rails=rails)])
    assert f"nodePools[0].{path}: " in message and words in message, message


def test_rails_listed_by_hand_state_only_count_devices_and_speed() -> None:
    spec = NodePoolSpec.model_validate(
        pool(networks=["a", "b"], rails={"count": 2, "devices": ["mlx5_0", "mlx5_3"], "speedGbps": 400})
    )
    assert spec.rail_networks() == [], "the pool's own networks are the rails"
    message = error_of([pool(networks=["a"], rails={"count": 8, "interfaces": "ens{n}f0np0"})])
    assert "nodePools[0].rails.interfaces: `interfaces` shapes the NADs the rails make" in message


def test_a_pool_name_too_long_for_its_rail_nads() -> None:
    message = error_of([pool(name="p" * 60, rails=RAILS)])
    assert "nodePools[0].name: the rails' NAD names" in message


# -- traffic class and service level -------------------------------------------------------------


def test_traffic_class_and_service_level_are_rdma_keys_within_range() -> None:
    spec = NodePoolSpec.model_validate(pool(trafficClass=106, serviceLevel=3))
    assert (spec.traffic_class, spec.service_level) == (106, 3)
    assert "nodePools[0].trafficClass: must be less than or equal to 255" in error_of([pool(trafficClass=256)])
    assert "nodePools[0].serviceLevel: must be less than or equal to 15" in error_of([pool(serviceLevel=16)])
    message = error_of([pool("tcp", trafficClass=106)])
    assert "nodePools[0].trafficClass: applies to roce and infiniband pools, and this pool's fabric is 'tcp'" in message


# -- any number of rails -------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(count=st.integers(1, 16), base=st.sampled_from(["10.0.0.0/16", "192.168.0.0/16", "fd00::/48"]))
def test_n_rails_make_n_nads_on_distinct_subnets_of_the_range(count: int, base: str) -> None:
    rails = {"count": count, "interfaces": "ens{n}f0np0", "devices": "mlx5_{i}", "range": base}
    nads = NodePoolSpec.model_validate(pool(rails=rails)).rail_networks()
    assert len(nads) == count
    subnets = [ipaddress.ip_network(n.ipam.range) for n in nads]
    assert len(set(subnets)) == count
    assert all(s.subnet_of(ipaddress.ip_network(base)) for s in subnets)  # type: ignore[arg-type]
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1 :])
    assert len({n.master for n in nads}) == len({n.hca for n in nads}) == len({n.name for n in nads}) == count
