"""Tests for fabric profiles: what a worker pod needs for EFA, InfiniBand, RoCE and TCP."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import catalog
from components.fabric import (
    GKE_INTERFACES_ANNOTATION,
    MULTUS_ANNOTATION,
    ROCE_AUTO_GID_NCCL,
    bandwidth,
    min_nccl,
    profile,
)
from components.models import NetworkConfig, NodePoolSpec
from components.pool import Pool
from components.pools import resolve_pools
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
    assert efa.resources["vpc.amazonaws.com/efa"] == "32"


def test_efa_through_dra_claims_the_nodes_efa_devices_instead_of_requesting_them() -> None:
    spec = NodePoolSpec(name="b300", instance_type="p6-b300.48xlarge", max_nodes=2, zone="us-east-1a")
    config = NetworkConfig.model_validate({"efa": {"mode": "dra"}})
    pools, issues = resolve_pools([spec.model_copy(update={"provisioner": "nodegroup"})], "aws", "us-east-1", config)
    assert not issues, issues
    efa = profile(pools["b300"], "training")
    assert "vpc.amazonaws.com/efa" not in efa.resources
    assert efa.claims == ({"name": "efa", "resourceClaimTemplateName": "b300-efa"},)
    assert efa.env["FI_PROVIDER"] == "efa" and efa.whole_node


def test_efa_through_dra_is_refused_off_eks() -> None:
    spec = NodePoolSpec(name="gpu", gpus_per_node=8, max_nodes=2, node_selector={"a": "b"})
    config = NetworkConfig.model_validate({"efa": {"mode": "dra"}})
    _, issues = resolve_pools([spec], "existing", None, config)
    assert [i.path for i in issues] == ["network.efa.mode"]


def test_efa_requests_no_huge_pages_and_tells_libfabric() -> None:
    # Karpenter's instance types and our node groups advertise no huge pages: a request would never schedule.
    efa = profile(pool("efa"), "training")
    assert not [r for r in efa.resources if r.startswith("hugepages-")]
    assert efa.env["FI_EFA_USE_HUGE_PAGE"] == "0"
    assert (efa.env["NCCL_BUFFSIZE"], efa.env["NCCL_P2P_NET_CHUNKSIZE"]) == ("8388608", "524288")
    assert "NCCL_TUNER_PLUGIN" not in efa.env, "a user's image may not carry aws-ofi-nccl's tuner"


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
    assert g5.resources["vpc.amazonaws.com/efa"] == "1"
    assert "FI_EFA_USE_DEVICE_RDMA" not in g5.env
    assert g5.env["FI_PROVIDER"] == "efa"


@pytest.mark.parametrize(
    ("instance_type", "devices"), [("p4d.24xlarge", 4), ("p5en.48xlarge", 16), ("p6-b200.48xlarge", 8)]
)
def test_efa_device_count_follows_the_catalog(instance_type: str, devices: int) -> None:
    efa = profile(aws_pool(instance_type), "training")
    assert efa.resources["vpc.amazonaws.com/efa"] == str(devices)
    assert efa.env["FI_EFA_USE_DEVICE_RDMA"] == "1"


# -- RoCE and InfiniBand ------------------------------------------------------------------------


def test_roce_attaches_its_network_through_multus() -> None:
    assert profile(pool("roce"), "training").annotations == {MULTUS_ANNOTATION: "roce-network@net1"}


def test_roce_requests_the_shared_rdma_device() -> None:
    assert profile(pool("roce"), "training").resources == {"rdma/rdma_shared_device_a": "1"}


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
    assert ib.resources == {"rdma/rdma_shared_device_a": "1"}
    assert ib.annotations == {}
    assert ib.interfaces == ("eth0",)


def test_rdma_resource_and_hca_come_from_the_network_config() -> None:
    roce = profile(
        existing_pool("roce", [], [], rdma={"resourceName": "rdma/hca_shared", "hca": "mlx5_0,mlx5_1"}), "training"
    )
    assert roce.resources == {"rdma/hca_shared": "1"}
    assert roce.env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1"


def test_sriov_networks_add_their_vf_resource() -> None:
    p = existing_pool("roce", ["sriov-net"], [SRIOV_NETWORK])
    roce = profile(p, "training")
    assert roce.resources == {"rdma/rdma_shared_device_a": "1", "nvidia.com/sriov_rdma_vf": "1"}
    assert roce.annotations == {MULTUS_ANNOTATION: "sriov-net@net1"}


def test_sriov_vfs_alone_when_the_shared_plugin_is_off() -> None:
    p = existing_pool("infiniband", ["ib-net"], [IB_NETWORK], rdma={"sharedDevicePlugin": False})
    assert profile(p, "training").resources == {"nvidia.com/sriov_ib_vf": "1"}


def test_two_vfs_of_one_resource_are_counted() -> None:
    second = {**SRIOV_NETWORK, "name": "sriov-net-2", "ipam": {"type": "whereabouts", "range": "192.168.21.0/24"}}
    p = existing_pool("roce", ["sriov-net", "sriov-net-2"], [SRIOV_NETWORK, second])
    assert profile(p, "training").resources["nvidia.com/sriov_rdma_vf"] == "2"


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


def gke_pool(machine: str, **extra: Any) -> Pool:
    spec = NodePoolSpec.model_validate({"name": "gpu", "machineType": machine, "maxNodes": 2, **extra})
    pools, issues = resolve_pools([spec], "gcp", "us-central1", NetworkConfig())
    assert not issues, issues
    return pools["gpu"]


def gke_interfaces(p: Any) -> list[dict[str, str]]:
    return json.loads(p.annotations[GKE_INTERFACES_ANNOTATION])


@pytest.mark.parametrize(
    ("machine", "fabric"),
    [("a3-highgpu-8g", "tcpx"), ("a3-megagpu-8g", "tcpxo"), ("a3-ultragpu-8g", "rdma"), ("a4-highgpu-8g", "rdma")],
)
def test_a_gke_pool_that_says_nothing_gets_its_machines_gpudirect_fabric(machine: str, fabric: str) -> None:
    assert gke_pool(machine).fabric == fabric


def test_tcp_stays_an_explicit_opt_out_on_gke() -> None:
    tcp = profile(gke_pool("a3-megagpu-8g", fabric="tcp"), "training")
    assert tcp.env["NCCL_IB_DISABLE"] == "1"
    assert GKE_INTERFACES_ANNOTATION not in tcp.annotations


def test_gke_machines_without_gpu_nics_stay_on_tcp() -> None:
    assert gke_pool("a3-highgpu-4g").fabric == "tcp"
    assert gke_pool("g2-standard-96").fabric == "tcp"


def test_tcpxo_attaches_eth0_and_the_eight_gpu_nics() -> None:
    p = profile(gke_pool("a3-megagpu-8g"), "training")
    assert gke_interfaces(p) == [
        {"interfaceName": "eth0", "network": "default"},
        *({"interfaceName": f"eth{i}", "network": f"vpc{i}"} for i in range(1, 9)),
    ]
    assert p.annotations["networking.gke.io/default-interface"] == "eth0"
    assert p.env["NCCL_FASTRAK_IFNAME"] == "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
    assert p.env["NCCL_FASTRAK_CTRL_DEV"] == "eth0"
    assert p.env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert p.env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"
    assert p.interfaces == ("eth0", *(f"eth{i}" for i in range(1, 9)))


def test_tcpxo_runs_its_rxdm_as_a_native_sidecar_with_the_gpu_devices() -> None:
    p = profile(gke_pool("a3-megagpu-8g"), "training")
    (daemon,) = p.sidecars
    assert daemon["name"] == "tcpxo-daemon"
    assert daemon["restartPolicy"] == "Always"
    assert daemon["image"].endswith("tcpgpudmarxd-dev:v1.0.21")
    assert "--num_hops=2" in daemon["args"][0] and "--num_nics" not in daemon["args"][0], "a deprecated flag"
    assert set(daemon["securityContext"]["capabilities"]["add"]) == {"NET_ADMIN", "NET_BIND_SERVICE"}
    assert daemon["startupProbe"]["exec"]["command"] == ["cat", "/run/health-check"]
    devices = p.annotations["devices.gke.io/container.tcpxo-daemon"]
    assert [line for line in devices.splitlines()] == [
        *(f"- path: /dev/nvidia{i}" for i in range(8)),
        "- path: /dev/nvidiactl",
        "- path: /dev/nvidia-uvm",
        "- path: /dev/dmabuf_import_helper",
    ]
    assert {"name": "aperture-devices", "mountPath": "/dev/aperture_devices"} in p.mounts


def test_tcpx_shares_the_rxdm_socket_with_the_worker() -> None:
    p = profile(gke_pool("a3-highgpu-8g"), "training")
    (daemon,) = p.sidecars
    assert daemon["name"] == "tcpx-daemon"
    assert daemon["restartPolicy"] == "Always"
    assert "/run/tcpx" in daemon["command"]
    assert {"name": "tcpx-socket", "mountPath": "/run/tcpx"} in p.mounts
    assert {"name": "tcpx-socket", "mountPath": "/run/tcpx"} in daemon["volumeMounts"]
    assert p.env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4"
    assert p.env["NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX"] == "/run/tcpx"
    assert [i["network"] for i in gke_interfaces(p)] == ["default", "vpc1", "vpc2", "vpc3", "vpc4"]
    assert "devices.gke.io/container.tcpx-daemon" in p.annotations


@pytest.mark.parametrize("machine", ["a3-ultragpu-8g", "a4-highgpu-8g"])
def test_rdma_attaches_the_eight_rdma_nics_through_gib(machine: str) -> None:
    p = profile(gke_pool(machine), "training")
    # eth1 is the extra gVNIC: the node has it, the pod does not need it.
    assert gke_interfaces(p) == [
        {"interfaceName": "eth0", "network": "default"},
        *({"interfaceName": f"eth{i + 2}", "network": f"rdma-{i}"} for i in range(8)),
    ]
    assert p.env["NCCL_NET"] == "gIB"
    assert p.sidecars == ()
    assert {"name": "gib", "mountPath": "/usr/local/gib"} in p.mounts
    assert p.capabilities == ("IPC_LOCK",)


@pytest.mark.parametrize(
    ("machine", "tuner"),
    [("a3-ultragpu-8g", "tuner_config_a3u.txtpb"), ("a4-highgpu-8g", "tuner_config_a4.txtpb")],
)
def test_rdma_workers_get_their_machines_gib_tuner_profile(machine: str, tuner: str) -> None:
    p = profile(gke_pool(machine), "training")
    assert p.env["NCCL_TUNER_CONFIG_PATH"] == f"/usr/local/gib/configs/{tuner}"


@pytest.mark.parametrize(
    ("machine", "fabric", "message"),
    [
        ("a3-highgpu-8g", "tcpxo", "a3-highgpu-8g cannot do tcpxo (tcpxo is for a3-megagpu-8g); use tcpx or tcp"),
        ("a4-highgpu-8g", "tcpx", "a4-highgpu-8g cannot do tcpx (tcpx is for a3-highgpu-8g); use rdma or tcp"),
        (
            "g2-standard-96",
            "rdma",
            "g2-standard-96 cannot do rdma (rdma is for a3-ultragpu-8g, a4-highgpu-8g); use tcp",
        ),
    ],
)
def test_a_fabric_the_machine_cannot_do_names_the_pool(machine: str, fabric: str, message: str) -> None:
    spec = NodePoolSpec.model_validate({"name": "gpu", "machineType": machine, "maxNodes": 2, "fabric": fabric})
    _, issues = resolve_pools([spec], "gcp", "us-central1", NetworkConfig())
    assert [(i.path, i.message) for i in issues] == [("nodePools[0].fabric", f"pool 'gpu': {message}")]


@pytest.mark.parametrize("provider", ["aws", "existing"])
def test_gpudirect_is_refused_off_gke(provider: str) -> None:
    key = {"aws": {"instanceType": "p5.48xlarge", "zone": "us-east-1a"}, "existing": {"gpusPerNode": 8}}[provider]
    extra = {"nodeSelector": {"a": "b"}} if provider == "existing" else {}
    spec = NodePoolSpec.model_validate({"name": "gpu", "maxNodes": 2, "fabric": "tcpxo", **key, **extra})
    _, issues = resolve_pools([spec], provider, "us-east-1" if provider == "aws" else None, NetworkConfig())
    assert any(i.path == "nodePools[0].fabric" and "GKE GPUDirect" in i.message for i in issues)


# -- the bandwidth account ----------------------------------------------------------------------


def catalog_pool(provider: str, name: str) -> Pool:
    key = {"instanceType": name, "zone": "us-east-1a"} if provider == "aws" else {"machineType": name}
    if catalog.ultraservers(name):  # sold only through Capacity Blocks
        key["capacity"] = {"type": "capacity-block", "reservationId": "cr-0123456789abcdef0"}
    spec = NodePoolSpec.model_validate({"name": "gpu", "maxNodes": 2, **key})
    pools, issues = resolve_pools(
        [spec], provider, "us-east-1" if provider == "aws" else "us-central1", NetworkConfig()
    )
    assert not issues, issues
    return pools["gpu"]


@pytest.mark.parametrize(
    ("provider", "name"),
    [(p, n) for p in ("aws", "gcp") for n in catalog.names(p)],  # type: ignore[arg-type]
)
def test_every_catalog_machine_with_its_default_fabric_reaches_its_full_bandwidth(provider: str, name: str) -> None:
    account = bandwidth(catalog_pool(provider, name))
    machine = catalog.lookup(provider, name)  # type: ignore[arg-type]
    assert machine is not None
    if account.nominal is None:
        # Only GCP machines without GPU NICs have no recorded figure; they say nothing about bandwidth.
        assert (provider, machine.gpudirect) == ("gcp", None)
        return
    assert account.usable == account.nominal == machine.fabric_gbps
    assert account.shortfall is None


@pytest.mark.parametrize(
    ("provider", "name", "described"),
    [
        ("aws", "p5.48xlarge", "32 EFA, 3200 of 3200 Gbps"),
        ("aws", "p5en.48xlarge", "16 EFA, 3200 of 3200 Gbps"),
        ("aws", "g5.xlarge", "eth0, 2.5 of 2.5 Gbps"),
        ("gcp", "a3-highgpu-8g", "4 GPU NICs, 800 of 800 Gbps (1000 Gbps with the gVNIC)"),
        ("gcp", "a3-megagpu-8g", "8 GPU NICs, 1600 of 1600 Gbps (1800 Gbps with the gVNIC)"),
        ("gcp", "a3-ultragpu-8g", "8 GPU NICs, 3200 of 3200 Gbps (3600 Gbps with the 2 gVNICs)"),
        ("gcp", "a4-highgpu-8g", "8 GPU NICs, 3200 of 3200 Gbps (3600 Gbps with the 2 gVNICs)"),
        ("gcp", "g2-standard-96", ""),
    ],
)
def test_the_account_names_the_devices_and_the_figures(provider: str, name: str, described: str) -> None:
    assert bandwidth(catalog_pool(provider, name)).describe() == described


def test_opting_out_to_tcp_says_what_the_pool_leaves_unused() -> None:
    account = bandwidth(gke_pool("a3-megagpu-8g", fabric="tcp"))
    assert (account.usable, account.nominal) == (0, 1600)
    assert account.shortfall is not None and "not the machine's tcpxo fabric" in account.shortfall


def test_an_rdma_pool_attaching_one_network_of_eight_gpus_says_so() -> None:
    p = existing_pool("roce", [ROCE_NETWORK["name"]], [ROCE_NETWORK])
    account = bandwidth(p, "training")
    assert account.nics == "1 of 8 rails, one per GPU assumed"
    assert account.shortfall is not None and "1 of the node's 8 rails" in account.shortfall


@st.composite
def rdma_pools(draw: st.DrawFn) -> Pool:
    """A RoCE or InfiniBand pool of any shape: rails declared or not, NADs (address-carrying or SR-IOV VFs),
    the shared device plugin on or off and with or without ifNames, NCCL_IB_HCA a prefix or an exact list."""
    fabric = draw(st.sampled_from(["roce", "infiniband"]))
    gpus = draw(st.sampled_from([4, 8]))
    kind = draw(
        st.sampled_from(["macvlan" if fabric == "roce" else "ipoib", "sriov" if fabric == "roce" else "ib-sriov"])
    )
    count = draw(st.integers(0, 8))
    declared = []
    for i in range(count):
        net: dict[str, Any] = {"name": f"rail{i}", "type": kind, "ipam": {"range": f"10.{i}.0.0/24"}}
        net |= {"master": f"ens{i}"} if kind in ("macvlan", "ipoib") else {"resourceName": f"nvidia.com/vf{i}"}
        declared.append(net)
    plugin = draw(st.booleans()) or not any("resourceName" in n for n in declared)
    interfaces = draw(st.sampled_from([[], [f"ens{i}" for i in range(draw(st.integers(1, 8)))]]))
    hca = draw(st.sampled_from(["mlx5", "=" + ",".join(f"mlx5_{i}" for i in range(draw(st.integers(1, 8))))]))
    spec: dict[str, Any] = {
        "name": "h100",
        "gpusPerNode": gpus,
        "maxNodes": 2,
        "fabric": fabric,
        "networks": [n["name"] for n in declared],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
    }
    if rails := draw(st.sampled_from([None, 1, 4, 8])):
        spec["rails"] = {"count": rails, "speedGbps": 400}
    config = NetworkConfig.model_validate(
        {"networks": declared, "rdma": {"sharedDevicePlugin": plugin, "interfaces": interfaces, "hca": hca}}
    )
    pools, issues = resolve_pools([NodePoolSpec.model_validate(spec)], "existing", None, config)
    assert not issues, issues
    return pools["h100"]


@settings(max_examples=300, deadline=None)
@given(p=rdma_pools())
def test_the_rdma_account_warns_exactly_when_nccl_cannot_use_a_rail(p: Pool) -> None:
    use = p.rail_use()
    account = bandwidth(p)
    assert use is not None and 0 <= use.usable <= use.total
    assert account.nics.startswith(f"{use.usable} of {use.total} rails")
    # The summary's "below the fabric's bandwidth" and render's warning say the same, and only on a real loss.
    assert (account.shortfall is not None) == (use.usable < use.total) == (p.rail_shortfall() > 0)
    lost = [a for a in p.rdma_advice() if f"uses {use.usable} of its nodes' {use.total} rails" in a]
    assert len(lost) == (1 if use.usable < use.total else 0)
    if p.rail_gbps and account.usable is not None and account.nominal is not None:
        assert (account.usable < account.nominal) == (use.usable < use.total)
    # What bounds the rails NCCL can use, each on its own: never more than it can see, name, or address.
    if p.ib_hca.startswith("="):
        assert use.usable <= len(p.ib_hca[1:].split(","))
    if p.fabric == "roce":
        assert use.usable <= len(p.networks), "a RoCE rail needs the pod's address on it"
    if p.rdma_resource is None:
        assert use.usable <= sum(1 for n in p.networks if n.resource_name)
    # InfiniBand through a plugin that exposes every HCA, with NCCL_IB_HCA not narrowing it: every rail.
    if p.fabric == "infiniband" and p.rdma_resource and not p.rdma_interfaces and not p.ib_hca.startswith("="):
        assert use.usable == use.total and account.shortfall is None


# -- rails ---------------------------------------------------------------------------------------


def rail_pool(fabric: str = "roce", **fields: Any) -> Pool:
    spec = {
        "name": "h100",
        "gpusPerNode": 8,
        "maxNodes": 4,
        "fabric": fabric,
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        **fields,
    }
    pools, issues = resolve_pools([NodePoolSpec.model_validate(spec)], "existing", None, NetworkConfig())
    assert not issues, issues
    return pools["h100"]


RAILS = {"count": 8, "interfaces": "ens{n}f0np0", "devices": "mlx5_{i}", "range": "192.168.0.0/16"}


def test_a_worker_attaches_every_rail_and_nccl_uses_exactly_their_devices() -> None:
    roce = profile(rail_pool(rails=RAILS), "training")
    assert roce.annotations == {MULTUS_ANNOTATION: ",".join(f"h100-rail-{i}@net{i + 1}" for i in range(8))}
    assert roce.env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7"
    assert roce.resources == {"rdma/rdma_shared_device_a": "1"}, "one shared resource reaches every rail's HCA"
    assert roce.interfaces == ("eth0", *(f"net{i}" for i in range(1, 9)))
    assert roce.env["NCCL_SOCKET_IFNAME"] == "net1"


def test_nccl_picks_each_rails_gid_from_the_subnet_holding_every_rail() -> None:
    env = profile(rail_pool(rails=RAILS), "training").env
    assert "NCCL_IB_GID_INDEX" not in env
    assert (env["NCCL_IB_ADDR_FAMILY"], env["NCCL_IB_ADDR_RANGE"]) == ("AF_INET", "192.168.0.0/21")
    v6 = profile(rail_pool(rails={**RAILS, "count": 2, "range": "fd00:10::/48"}), "training").env
    assert (v6["NCCL_IB_ADDR_FAMILY"], v6["NCCL_IB_ADDR_RANGE"]) == ("AF_INET6", "fd00:10::/63")


def test_roce_leaving_the_gid_to_nccl_needs_nccl_2_21_unless_a_job_names_the_index() -> None:
    env = profile(rail_pool(rails=RAILS), "training").env
    assert min_nccl("roce", env) == ROCE_AUTO_GID_NCCL == "2.21"
    assert min_nccl("roce", {**env, "NCCL_IB_GID_INDEX": "3"}) is None, "nccl: {ibGidIndex: 3} works on any NCCL"
    ib = {**RAILS, "type": "ipoib", "interfaces": "ibs{n}"}
    assert min_nccl("infiniband", profile(rail_pool("infiniband", rails=ib), "training").env) is None


def test_sriov_rails_request_one_vf_of_each_rails_resource() -> None:
    rails = {"count": 4, "type": "sriov", "resourceName": "nvidia.com/rail_{i}", "range": "10.0.0.0/16"}
    roce = profile(rail_pool(rails=rails), "training")
    assert roce.resources == {"rdma/rdma_shared_device_a": "1", **{f"nvidia.com/rail_{i}": "1" for i in range(4)}}


def test_traffic_class_and_service_level_become_nccl_env() -> None:
    env = profile(rail_pool(rails=RAILS, trafficClass=106, serviceLevel=3), "training").env
    assert (env["NCCL_IB_TC"], env["NCCL_IB_SL"]) == ("106", "3")
    assert "NCCL_IB_TC" not in profile(rail_pool(rails=RAILS), "training").env


def test_infiniband_rails_attach_ipoib_without_a_roce_gid_range() -> None:
    rails = {"count": 2, "interfaces": "ibp{i}s0", "devices": "mlx5_{i}", "range": "10.0.0.0/16"}
    ib = profile(rail_pool("infiniband", rails=rails, serviceLevel=1), "training")
    assert ib.annotations[MULTUS_ANNOTATION] == "h100-rail-0@net1,h100-rail-1@net2"
    assert ib.env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1" and ib.env["NCCL_IB_SL"] == "1"
    assert "NCCL_IB_ADDR_RANGE" not in ib.env


def test_rails_in_another_namespace_are_not_attached() -> None:
    roce = profile(rail_pool(rails={**RAILS, "namespace": "research"}), "training")
    assert MULTUS_ANNOTATION not in roce.annotations and "NCCL_IB_ADDR_RANGE" not in roce.env


def test_nccl_bootstraps_on_eth0_when_the_ipoib_network_has_no_address() -> None:
    ib0 = {"name": "ib0", "namespace": "training", "type": "ipoib", "master": "ibs1"}
    ib = profile(existing_pool("infiniband", ["ib0"], [ib0]), "training")
    assert ib.annotations == {MULTUS_ANNOTATION: "ib0@net1"}
    assert ib.env["NCCL_SOCKET_IFNAME"] == "eth0"
