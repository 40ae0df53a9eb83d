"""Tests for the NetworkAttachmentDefinitions of secondary networks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.manifests.network import RESOURCE_ANNOTATION, network_attachment_definition
from components.models import NetworkSpec, NodePoolSpec
from tests.support.schemas import assert_valid

IPAM = {"type": "whereabouts", "range": "192.168.10.0/24"}


def nad(**fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": "roce-network", "namespace": "training", "ipam": IPAM, **fields}
    return network_attachment_definition(NetworkSpec.model_validate(data))


def config(obj: dict[str, Any]) -> dict[str, Any]:
    assert isinstance(obj["spec"]["config"], str)
    return json.loads(obj["spec"]["config"])


NETWORKS: dict[str, dict[str, Any]] = {
    "macvlan": {"type": "macvlan", "master": "enp94s0f0"},
    "sriov": {"type": "sriov", "resourceName": "nvidia.com/sriov_rdma_vf", "vlan": 100},
    "ib-sriov": {"type": "ib-sriov", "resourceName": "nvidia.com/sriov_ib_vf", "pkey": "0x00FF"},
    "host-device": {"type": "host-device", "device": "mlx5_0"},
    "ipoib": {"type": "ipoib", "master": "ibs1"},
}


def test_is_a_nad_in_the_networks_namespace() -> None:
    obj = nad(namespace="research", **NETWORKS["macvlan"])
    assert (obj["apiVersion"], obj["kind"]) == ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
    assert (obj["metadata"]["name"], obj["metadata"]["namespace"]) == ("roce-network", "research")


@pytest.mark.parametrize("kind", list(NETWORKS))
def test_config_is_a_json_cni_config_of_the_networks_type(kind: str) -> None:
    cni = config(nad(**NETWORKS[kind]))
    assert cni["type"] == kind
    assert cni["name"] == "roce-network"
    assert cni["cniVersion"]
    assert cni["ipam"]["type"] == "whereabouts"


def test_macvlan_takes_master_and_bridge_mode_by_default() -> None:
    cni = config(nad(**NETWORKS["macvlan"]))
    assert (cni["master"], cni["mode"]) == ("enp94s0f0", "bridge")
    assert config(nad(type="macvlan", master="ens1", mode="private"))["mode"] == "private"


def test_macvlan_names_no_device_resource() -> None:
    assert RESOURCE_ANNOTATION not in nad(**NETWORKS["macvlan"])["metadata"].get("annotations", {})


def test_sriov_carries_its_vlan_and_names_its_vf_resource() -> None:
    obj = nad(**NETWORKS["sriov"])
    assert config(obj)["vlan"] == 100
    assert obj["metadata"]["annotations"][RESOURCE_ANNOTATION] == "nvidia.com/sriov_rdma_vf"
    assert "master" not in config(obj)


def test_sriov_without_a_vlan_sets_none() -> None:
    assert "vlan" not in config(nad(type="sriov", resourceName="nvidia.com/sriov_rdma_vf"))


def test_ib_sriov_takes_its_pkey_and_isolates_rdma() -> None:
    obj = nad(**NETWORKS["ib-sriov"])
    cni = config(obj)
    assert cni["pkey"] == "0x00FF"
    assert cni["rdmaIsolation"] is True
    assert cni["link_state"] == "enable"
    assert obj["metadata"]["annotations"][RESOURCE_ANNOTATION] == "nvidia.com/sriov_ib_vf"


def test_ib_sriov_without_a_pkey() -> None:
    assert "pkey" not in config(nad(type="ib-sriov", resourceName="nvidia.com/sriov_ib_vf"))


def test_host_device_names_its_device() -> None:
    cni = config(nad(**NETWORKS["host-device"]))
    assert cni["device"] == "mlx5_0"
    assert "master" not in cni


def test_ipoib_makes_a_child_of_its_ipoib_parent() -> None:
    obj = nad(**NETWORKS["ipoib"])
    cni = config(obj)
    assert (cni["type"], cni["master"]) == ("ipoib", "ibs1")
    assert "mode" not in cni and RESOURCE_ANNOTATION not in obj["metadata"].get("annotations", {})


def test_an_ipoib_network_without_addresses_has_no_ipam() -> None:
    obj = network_attachment_definition(NetworkSpec.model_validate({"name": "ib0", "type": "ipoib", "master": "ibs1"}))
    assert_valid(obj)
    assert "ipam" not in config(obj)


def test_the_rdma_device_stays_out_of_the_cni_config() -> None:
    assert "rdmaDevice" not in config(nad(rdmaDevice="mlx5_0", **NETWORKS["macvlan"]))


def test_every_rails_nad_validates() -> None:
    rails = {"count": 8, "interfaces": "ens{n}f0np0", "devices": "mlx5_{i}", "range": "192.168.0.0/16", "mtu": 9000}
    spec = NodePoolSpec.model_validate({"name": "h100", "fabric": "roce", "rails": rails})
    objects = [network_attachment_definition(n) for n in spec.rail_networks()]
    assert_valid(*objects)
    assert [config(o)["ipam"]["range"] for o in objects][-1] == "192.168.7.0/24"


def test_mtu_only_when_set() -> None:
    assert config(nad(mtu=9000, **NETWORKS["macvlan"]))["mtu"] == 9000
    assert "mtu" not in config(nad(**NETWORKS["macvlan"]))


def test_whereabouts_takes_a_range() -> None:
    ipam = config(
        nad(
            ipam={
                "type": "whereabouts",
                "range": "192.168.10.0/24",
                "rangeStart": "192.168.10.10",
                "rangeEnd": "192.168.10.200",
                "exclude": ["192.168.10.128/28"],
                "gateway": "192.168.10.1",
            },
            **NETWORKS["macvlan"],
        )
    )["ipam"]
    assert ipam == {
        "type": "whereabouts",
        "range": "192.168.10.0/24",
        "range_start": "192.168.10.10",
        "range_end": "192.168.10.200",
        "exclude": ["192.168.10.128/28"],
        "gateway": "192.168.10.1",
    }
    assert "subnet" not in ipam


def test_host_local_takes_a_subnet() -> None:
    ipam = config(
        nad(
            ipam={
                "type": "host-local",
                "range": "10.10.0.0/16",
                "rangeStart": "10.10.1.10",
                "rangeEnd": "10.10.1.250",
                "gateway": "10.10.0.1",
            },
            **NETWORKS["host-device"],
        )
    )["ipam"]
    assert ipam == {
        "type": "host-local",
        "subnet": "10.10.0.0/16",
        "rangeStart": "10.10.1.10",
        "rangeEnd": "10.10.1.250",
        "gateway": "10.10.0.1",
    }
    assert "range" not in ipam


def test_minimal_ipam_has_no_optional_keys() -> None:
    assert config(nad(**NETWORKS["macvlan"]))["ipam"] == {"type": "whereabouts", "range": "192.168.10.0/24"}


@pytest.mark.parametrize("ipam_type", ["whereabouts", "host-local"])
def test_routes_become_destinations(ipam_type: str) -> None:
    ipam = config(
        nad(
            ipam={"type": ipam_type, "range": "192.168.10.0/24", "routes": ["10.0.0.0/8", "172.16.0.0/12"]},
            **NETWORKS["macvlan"],
        )
    )["ipam"]
    assert ipam["routes"] == [{"dst": "10.0.0.0/8"}, {"dst": "172.16.0.0/12"}]


@pytest.mark.parametrize("kind", list(NETWORKS))
@pytest.mark.parametrize("ipam_type", ["whereabouts", "host-local"])
def test_validates_against_the_nad_schema(kind: str, ipam_type: str) -> None:
    obj = nad(
        mtu=9000,
        ipam={"type": ipam_type, "range": "192.168.10.0/24", "gateway": "192.168.10.1", "routes": ["10.0.0.0/8"]},
        **NETWORKS[kind],
    )
    assert_valid(obj)
