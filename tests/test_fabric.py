"""Tests for fabric profiles: what a worker pod needs for EFA, InfiniBand, RoCE and TCP."""

from __future__ import annotations

from typing import Any

import pytest

from components.fabric import MULTUS_ANNOTATION, profile
from components.models import NetworkConfig, NodePoolSpec
from components.pool import Pool, resolve_pools
from tests.support.factories import ROCE_NETWORK, SRIOV_NETWORK, pool

IB_NETWORK = {
    "name": "ib-net",
    "namespace": "training",
    "type": "ib-sriov",
    "resourceName": "nvidia.com/sriov_ib_vf",
    "pkey": "0x00FF",
    "ipam": {"type": "whereabouts", "range": "192.168.30.0/24"},
}


def existing_pool(fabric: str, networks: list[str], declared: list[dict[str, Any]], **network: Any) -> Pool:
    config = NetworkConfig.model_validate({"networks": declared, **network})
    spec = NodePoolSpec.model_validate(
        {
            "name": "gpu",
            "gpusPerNode": 8,
            "maxNodes": 4,
            "fabric": fabric,
            "networks": networks,
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        }
    )
    pools, issues = resolve_pools([spec], "existing", None, config)
    assert not issues, issues
    return pools["gpu"]


def aws_pool(instance_type: str) -> Pool:
    spec = NodePoolSpec(name="gpu", instance_type=instance_type, max_nodes=2, zone="us-east-1a")
    pools, issues = resolve_pools([spec], "aws", "us-east-1", NetworkConfig())
    assert not issues, issues
    return pools["gpu"]


# -- EFA ----------------------------------------------------------------------------------------


def test_efa_requests_every_efa_device_of_a_p5() -> None:
    efa = profile(pool("efa"), "training")
    assert efa.fabric == "efa"
    assert efa.resources["vpc.amazonaws.com/efa"] == 32


def test_efa_requests_huge_pages() -> None:
    assert profile(pool("efa"), "training").resources["hugepages-2Mi"] == "5120Mi"


def test_efa_environment() -> None:
    env = profile(pool("efa"), "training").env
    assert env["FI_PROVIDER"] == "efa"
    assert env["FI_EFA_USE_DEVICE_RDMA"] == "1"
    assert env["FI_EFA_FORK_SAFE"] == "1"


def test_efa_needs_no_multus() -> None:
    efa = profile(pool("efa"), "training")
    assert MULTUS_ANNOTATION not in efa.annotations
    assert efa.interfaces == ("eth0",)


def test_efa_locks_memory() -> None:
    assert "IPC_LOCK" in profile(pool("efa"), "training").capabilities


def test_efa_device_rdma_only_where_the_type_supports_it() -> None:
    g5 = profile(aws_pool("g5.48xlarge"), "training")  # 1 EFA, no GPUDirect RDMA
    assert g5.fabric == "efa"
    assert g5.resources["vpc.amazonaws.com/efa"] == 1
    assert "FI_EFA_USE_DEVICE_RDMA" not in g5.env
    assert g5.env["FI_PROVIDER"] == "efa"


@pytest.mark.parametrize(
    ("instance_type", "devices"), [("p4d.24xlarge", 4), ("p5en.48xlarge", 16), ("p6-b200.48xlarge", 8)]
)
def test_efa_device_count_follows_the_catalog(instance_type: str, devices: int) -> None:
    efa = profile(aws_pool(instance_type), "training")
    assert efa.resources["vpc.amazonaws.com/efa"] == devices
    assert efa.env["FI_EFA_USE_DEVICE_RDMA"] == "1"


# -- RoCE and InfiniBand ------------------------------------------------------------------------


def test_roce_attaches_its_network_through_multus() -> None:
    assert profile(pool("roce"), "training").annotations == {MULTUS_ANNOTATION: "roce-network@net1"}


def test_roce_requests_the_shared_rdma_device() -> None:
    assert profile(pool("roce"), "training").resources == {"rdma/rdma_shared_device_a": 1}


def test_roce_environment() -> None:
    env = profile(pool("roce"), "training").env
    assert env["NCCL_IB_DISABLE"] == "0"
    assert env["NCCL_IB_HCA"] == "mlx5"
    assert env["NCCL_SOCKET_IFNAME"] == "net1"
    # NCCL finds the RoCE v2 GID of the pod's address itself; a fixed index is wrong under macvlan.
    assert "NCCL_IB_GID_INDEX" not in env
    assert (env["NCCL_IB_ADDR_FAMILY"], env["NCCL_IB_ADDR_RANGE"]) == ("AF_INET", "192.168.10.0/24")


@pytest.mark.parametrize("fabric", ["roce", "infiniband"])
def test_rdma_fabrics_lock_memory(fabric: str) -> None:
    assert profile(pool(fabric), "training").capabilities == ("IPC_LOCK",)


def test_infiniband_has_no_roce_gid_selection() -> None:
    env = profile(pool("infiniband"), "training").env
    assert "NCCL_IB_GID_INDEX" not in env and "NCCL_IB_ADDR_RANGE" not in env
    assert env["NCCL_IB_DISABLE"] == "0"
    assert env["NCCL_SOCKET_IFNAME"] == "net1"


def test_infiniband_without_networks_bootstraps_on_eth0_with_the_rdma_device() -> None:
    ib = profile(existing_pool("infiniband", [], []), "training")
    assert ib.env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert ib.env["NCCL_IB_DISABLE"] == "0"
    assert ib.env["NCCL_IB_HCA"] == "mlx5"
    assert ib.resources == {"rdma/rdma_shared_device_a": 1}
    assert ib.annotations == {}
    assert ib.interfaces == ("eth0",)


def test_rdma_resource_and_hca_come_from_the_network_config() -> None:
    roce = profile(
        existing_pool("roce", [], [], rdma={"resourceName": "rdma/hca_shared", "hca": "mlx5_0,mlx5_1"}), "training"
    )
    assert roce.resources == {"rdma/hca_shared": 1}
    assert roce.env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1"


def test_sriov_networks_add_their_vf_resource() -> None:
    p = existing_pool("roce", ["sriov-net"], [SRIOV_NETWORK])
    roce = profile(p, "training")
    assert roce.resources == {"rdma/rdma_shared_device_a": 1, "nvidia.com/sriov_rdma_vf": 1}
    assert roce.annotations == {MULTUS_ANNOTATION: "sriov-net@net1"}


def test_sriov_vfs_alone_when_the_shared_plugin_is_off() -> None:
    p = existing_pool("infiniband", ["ib-net"], [IB_NETWORK], rdma={"sharedDevicePlugin": False})
    assert profile(p, "training").resources == {"nvidia.com/sriov_ib_vf": 1}


def test_two_vfs_of_one_resource_are_counted() -> None:
    second = {**SRIOV_NETWORK, "name": "sriov-net-2", "ipam": {"type": "whereabouts", "range": "192.168.21.0/24"}}
    p = existing_pool("roce", ["sriov-net", "sriov-net-2"], [SRIOV_NETWORK, second])
    assert profile(p, "training").resources["nvidia.com/sriov_rdma_vf"] == 2


def test_several_networks_are_attached_in_order_and_nccl_uses_the_first() -> None:
    p = existing_pool("roce", ["roce-network", "sriov-net"], [{**ROCE_NETWORK, "interface": None}, SRIOV_NETWORK])
    roce = profile(p, "training")
    assert roce.annotations[MULTUS_ANNOTATION] == "roce-network@net1,sriov-net@net2"
    assert roce.env["NCCL_SOCKET_IFNAME"] == "net1"
    assert roce.interfaces == ("eth0", "net1", "net2")


def test_a_named_interface_is_used() -> None:
    p = existing_pool("roce", ["roce-network"], [{**ROCE_NETWORK, "interface": "rdma0"}])
    roce = profile(p, "training")
    assert roce.annotations[MULTUS_ANNOTATION] == "roce-network@rdma0"
    assert roce.env["NCCL_SOCKET_IFNAME"] == "rdma0"
    assert roce.socket_ifname == "rdma0"


def test_networks_of_another_namespace_are_not_attached() -> None:
    roce = profile(pool("roce"), "research")
    assert MULTUS_ANNOTATION not in roce.annotations
    assert roce.env["NCCL_SOCKET_IFNAME"] == "eth0"


# -- TCP ----------------------------------------------------------------------------------------


def test_tcp_disables_ib_and_uses_eth0() -> None:
    tcp = profile(pool("tcp"), "training")
    assert tcp.env == {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0"}
    assert tcp.socket_ifname == "eth0"


def test_tcp_needs_no_devices_capabilities_or_networks() -> None:
    tcp = profile(pool("tcp"), "training")
    assert tcp.resources == {}
    assert tcp.capabilities == ()
    assert tcp.annotations == {}
    assert tcp.interfaces == ("eth0",)


def test_gcp_pools_are_tcp() -> None:
    spec = NodePoolSpec(name="a3", machine_type="a3-highgpu-8g", max_nodes=2, zone="us-central1-a")
    pools, issues = resolve_pools([spec], "gcp", "us-central1", NetworkConfig())
    assert not issues
    assert profile(pools["a3"], "training").env["NCCL_IB_DISABLE"] == "1"
