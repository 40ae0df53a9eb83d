"""GKE GPUDirect networks: the VPCs, subnets and firewall rules of the extra NICs, made once per cluster and
attached by each GPUDirect node pool in NIC order; the cluster turns on multi-networking for them."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pulumi_gcp import compute
from pulumi_gcp.compute import _inputs

from components import gpudirect
from components.config import parse_stack
from components.errors import ConfigError
from components.gcp import gpunetworks, subnets
from components.gcp.gpunetworks import NetworkRef
from components.models import GcpClusterSpec
from components.pool import Pool
from components.resolution import resolve
from tests.gcp.test_cluster import CLUSTER, NODE_POOL, REGION, ZONE, build, cluster_spec, gke_pools, only
from tests.support.pulumi_mocks import RecordingMonitor

REPO = Path(__file__).resolve().parents[2]
NETWORK = "gcp:compute/network:Network"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
ROCE_PROFILE = f"https://www.googleapis.com/compute/beta/projects/ml-prod/global/networkProfiles/{ZONE}-vpc-roce"

MEGA = {"name": "mega", "machineType": "a3-megagpu-8g", "maxNodes": 4, "zone": ZONE}
HIGH = {"name": "high", "machineType": "a3-highgpu-8g", "maxNodes": 4, "zone": ZONE}
A4 = {"name": "b200", "machineType": "a4-highgpu-8g", "maxNodes": 2, "zone": ZONE}
DRANET = {**A4, "acceleratorNetworkProfile": "auto"}
ULTRA = {"name": "h200", "machineType": "a3-ultragpu-8g", "maxNodes": 2, "zone": ZONE}


def pool(config: dict[str, Any]) -> Pool:
    [(_, resolved)] = gke_pools([config])
    return resolved


def refs(pools: list[Pool]) -> dict[str, NetworkRef]:
    return {
        net.name: NetworkRef(gpudirect.vpc_name("train", net), gpudirect.subnet_name("train", net))
        for net in gpudirect.cluster_networks(pools)
    }


def by_name(monitor: RecordingMonitor, type_: str) -> dict[str, dict[str, Any]]:
    """The inputs of each registration of a type, by cloud name, sorted (registration order is not fixed)."""
    return dict(sorted((r.inputs["name"], r.inputs) for r in monitor.of_type(type_)))


def names(monitor: RecordingMonitor, type_: str) -> list[str]:
    return list(by_name(monitor, type_))


def attached(monitor: RecordingMonitor, pool_name: str) -> list[tuple[str, str]]:
    configs = monitor.named(f"train-{pool_name}").inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    return [(c["network"], c["subnetwork"]) for c in configs]


# Pure builders.


def test_a_tcpxo_vpc_has_jumbo_frames_regional_routing_and_no_auto_subnets() -> None:
    [vpc1, *_] = gpudirect.node_networks(pool(MEGA))

    assert gpunetworks.network_args("train", "ml-prod", [vpc1], roce_zone=None) == {
        "name": "train-vpc1",
        "project": "ml-prod",
        "auto_create_subnetworks": False,
        "mtu": 8244,
        "routing_mode": "REGIONAL",
    }


def test_the_roce_vpc_takes_the_zones_roce_network_profile_and_needs_a_zone() -> None:
    rdma = [n for n in gpudirect.node_networks(pool(A4)) if n.roce]

    args = gpunetworks.network_args("train", "ml-prod", rdma, roce_zone=ZONE)
    assert (args["name"], args["mtu"], args["network_profile"]) == ("train-rdma", 8896, ROCE_PROFILE)
    with pytest.raises(ValueError, match="zonal"):
        gpunetworks.network_args("train", "ml-prod", rdma, roce_zone=None)


def test_each_subnet_is_its_networks_slot_of_the_range_in_the_clusters_region() -> None:
    by_name = {n.name: n for n in gpudirect.cluster_networks([pool(MEGA), pool(A4)])}

    assert gpunetworks.subnetwork_args("train", "ml-prod", REGION, by_name["vpc1"], "192.168.0.0/16") == {
        "name": "train-vpc1",
        "project": "ml-prod",
        "region": REGION,
        "ip_cidr_range": "192.168.0.0/21",
    }
    ranges = {
        name: gpunetworks.subnetwork_args("train", "p", REGION, net, "10.200.0.0/16")["ip_cidr_range"]
        for name, net in by_name.items()
    }
    assert (ranges["vpc8"], ranges["gvnic-1"], ranges["rdma-0"], ranges["rdma-7"]) == (
        "10.200.56.0/21",
        "10.200.64.0/21",
        "10.200.128.0/21",
        "10.200.184.0/21",
    )
    assert len(set(ranges.values())) == len(ranges) == 17


def test_a_netdevice_vpc_lets_its_own_subnet_in_over_tcp_udp_and_icmp_and_the_roce_vpc_takes_no_rule() -> None:
    nets = gpunetworks.vpcs(gpudirect.node_networks(pool(A4)))

    assert gpunetworks.firewall_args("train", "ml-prod", nets["gvnic-1"], "192.168.0.0/16") == {
        "name": "train-gvnic-1-internal",
        "project": "ml-prod",
        "direction": "INGRESS",
        "source_ranges": ["192.168.64.0/21"],
        "allows": [{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
    }
    assert gpunetworks.firewall_args("train", "ml-prod", nets["rdma"], "192.168.0.0/16") is None


def test_the_rdma_subnets_share_one_vpc() -> None:
    grouped = gpunetworks.vpcs(gpudirect.node_networks(pool(A4)))

    assert list(grouped) == ["gvnic-1", "rdma"]
    assert [n.name for n in grouped["rdma"]] == [f"rdma-{i}" for i in range(8)]


@pytest.mark.parametrize(
    ("config", "order"),
    [
        (MEGA, [f"vpc{i}" for i in range(1, 9)]),
        (HIGH, ["vpc1", "vpc2", "vpc3", "vpc4"]),
        (A4, ["gvnic-1", *(f"rdma-{i}" for i in range(8))]),
        (ULTRA, ["gvnic-1", *(f"rdma-{i}" for i in range(8))]),
        ({**MEGA, "fabric": "tcp"}, []),
    ],
    ids=["tcpxo", "tcpx", "a4", "a3-ultra", "tcp"],
)
def test_a_pool_attaches_its_networks_in_nic_order(config: dict[str, Any], order: list[str]) -> None:
    found = gpunetworks.node_network_configs(pool(config), refs([pool(MEGA), pool(A4)]))

    vpc = {n: "rdma" if n.startswith("rdma-") else n for n in order}
    assert found == [{"network": f"train-{vpc[n]}", "subnetwork": f"train-{n}"} for n in order]


def test_gke_makes_the_networks_of_a_dranet_pool_which_takes_the_accelerator_network_profile() -> None:
    managed = pool(DRANET)

    assert gpunetworks.gpudirect_pools([managed]) == gpunetworks.roce_pools([managed]) == []
    assert gpunetworks.node_network_config(managed, {}) == {"accelerator_network_profile": "auto"}
    assert gpunetworks.node_network_config(pool({**MEGA, "fabric": "tcp"}), {}) is None


def test_the_cluster_runs_multi_networking_for_attached_networks_and_dataplane_v2_for_any_gpudirect() -> None:
    both = {"datapath_provider": "ADVANCED_DATAPATH", "enable_multi_networking": True}

    assert gpunetworks.cluster_args([pool(MEGA)]) == gpunetworks.cluster_args([pool(DRANET), pool(A4)]) == both
    assert gpunetworks.cluster_args([pool(DRANET)]) == {"datapath_provider": "ADVANCED_DATAPATH"}
    assert gpunetworks.cluster_args([pool({**MEGA, "fabric": "tcp"})]) == {}
    assert gpunetworks.cluster_args([]) == {}


def test_a_pool_whose_network_was_not_made_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="'vpc5'"):
        gpunetworks.node_network_configs(pool(MEGA), refs([pool(HIGH)]))


def test_the_roce_zone_is_the_rdma_pools_or_the_zonal_clusters() -> None:
    regional = pool({**A4, "zone": None})

    assert gpunetworks.roce_zone([pool(MEGA), pool(A4)], None) == ZONE
    assert gpunetworks.roce_zone([regional], "us-central1-c") == "us-central1-c"
    assert gpunetworks.roce_zone([regional], None) is None
    assert gpunetworks.roce_zone([pool(MEGA)], ZONE) is None, "no rdma pool, no RoCE VPC"


_NESTED_TYPE = re.compile(r"'(\w+?)(?:ArgsDict|Args)'")


def unknown_keys(value: dict[str, Any], args_type: type) -> list[str]:
    """Keys of `value` (and of its nested dicts) that name no argument of the pulumi_gcp compute input type."""
    fields = {n: str(p.annotation) for n, p in inspect.signature(args_type.__init__).parameters.items()}
    unknown = []
    for key, item in value.items():
        if key not in fields:
            unknown.append(key)
            continue
        nested = _NESTED_TYPE.search(fields[key])
        for element in item if isinstance(item, list) else [item]:
            if nested is not None and isinstance(element, dict):
                typed = getattr(_inputs, f"{nested.group(1)}Args")
                unknown += [f"{key}.{k}" for k in unknown_keys(element, typed)]
    return unknown


def test_every_key_names_a_pulumi_gcp_compute_argument() -> None:
    nets = gpunetworks.vpcs(gpudirect.cluster_networks([pool(MEGA), pool(A4)]))
    for vpc, members in nets.items():
        assert unknown_keys(gpunetworks.network_args("t", "p", members, roce_zone=ZONE), compute.NetworkArgs) == []
        firewall = gpunetworks.firewall_args("t", "p", members, "192.168.0.0/16")
        assert firewall is None or unknown_keys(firewall, compute.FirewallArgs) == [], vpc
        for net in members:
            args = gpunetworks.subnetwork_args("t", "p", REGION, net, "192.168.0.0/16")
            assert unknown_keys(args, compute.SubnetworkArgs) == []
    assert unknown_keys({"allows": [{"protocl": "tcp"}]}, compute.FirewallArgs) == ["allows.protocl"]


def test_the_builders_import_no_pulumi() -> None:
    code = (
        "import sys, components.gcp.gpunetworks, components.gcp.nodepool\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


# The component, under Pulumi mocks.


def test_an_a3_mega_cluster_makes_eight_gpu_vpcs_with_subnets_and_firewalls(pulumi_mocks: RecordingMonitor) -> None:
    build(pools=gke_pools([MEGA]))

    vpcs = [f"train-vpc{i}" for i in range(1, 9)]
    networks = by_name(pulumi_mocks, NETWORK)
    assert list(networks) == vpcs
    assert all(
        (n["mtu"], n["autoCreateSubnetworks"], n["routingMode"]) == (8244, False, "REGIONAL")
        and "networkProfile" not in n
        for n in networks.values()
    )
    subnets = by_name(pulumi_mocks, SUBNETWORK)
    assert list(subnets) == vpcs
    assert [s["ipCidrRange"] for s in subnets.values()] == [f"192.168.{8 * i}.0/21" for i in range(8)]
    assert all(s["region"] == REGION and s["project"] == "ml-prod" for s in subnets.values())
    assert [s["network"] for s in subnets.values()] == [f"{v}-id" for v in vpcs]
    firewalls = by_name(pulumi_mocks, FIREWALL)
    assert list(firewalls) == [f"{v}-internal" for v in vpcs]
    assert [(f["network"], f["sourceRanges"]) for f in firewalls.values()] == [
        (f"{v}-id", [subnets[v]["ipCidrRange"]]) for v in vpcs
    ]
    assert all(f["allows"] == [{"protocol": p} for p in ("tcp", "udp", "icmp")] for f in firewalls.values())


def test_a_gpudirect_cluster_runs_multi_networking_on_dataplane_v2(pulumi_mocks: RecordingMonitor) -> None:
    build(pools=gke_pools([MEGA]))

    inputs = only(pulumi_mocks, CLUSTER).inputs
    assert inputs["enableMultiNetworking"] is True
    assert inputs["datapathProvider"] == "ADVANCED_DATAPATH"


def test_an_a3_mega_pool_attaches_vpc1_to_vpc8_in_order_and_waits_for_the_subnets(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build(pools=gke_pools([MEGA]))

    assert attached(pulumi_mocks, "mega") == [(f"train-vpc{i}", f"train-vpc{i}") for i in range(1, 9)]
    node_pool = pulumi_mocks.named("train-mega")
    assert node_pool.inputs["nodeConfig"]["gvnic"] == {"enabled": True}
    assert "gpudirectStrategy" not in node_pool.inputs["nodeConfig"], "Cluster Toolkit sets none for A3 Mega"
    assert {s.urn for s in pulumi_mocks.of_type(SUBNETWORK)} <= set(node_pool.dependencies)
    assert "networkConfig" not in pulumi_mocks.named("train-system").inputs


def test_an_a4_pool_attaches_the_extra_gvnic_then_eight_rdma_subnets_of_one_roce_vpc(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build(pools=gke_pools([A4]))

    assert attached(pulumi_mocks, "b200") == [
        ("train-gvnic-1", "train-gvnic-1"),
        *(("train-rdma", f"train-rdma-{i}") for i in range(8)),
    ]
    networks = by_name(pulumi_mocks, NETWORK)
    assert list(networks) == ["train-gvnic-1", "train-rdma"]
    assert networks["train-rdma"]["networkProfile"] == ROCE_PROFILE
    assert "networkProfile" not in networks["train-gvnic-1"]
    assert networks["train-rdma"]["mtu"] == networks["train-gvnic-1"]["mtu"] == 8896
    subnets = by_name(pulumi_mocks, SUBNETWORK)
    assert {name: s["network"] for name, s in subnets.items()} == {
        "train-gvnic-1": "train-gvnic-1-id",
        **{f"train-rdma-{i}": "train-rdma-id" for i in range(8)},
    }
    assert names(pulumi_mocks, FIREWALL) == ["train-gvnic-1-internal"], "the RoCE VPC takes no firewall rule"


def test_a_zonal_cluster_gives_its_zone_to_the_roce_profile_of_a_pool_without_one(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build(cluster_spec(zone="us-central1-b"), pools=gke_pools([{**A4, "zone": None}]))

    rdma = by_name(pulumi_mocks, NETWORK)["train-rdma"]
    assert rdma["networkProfile"].endswith("/networkProfiles/us-central1-b-vpc-roce")


def test_an_a3_high_and_an_a3_mega_pool_share_vpc1_to_vpc4(pulumi_mocks: RecordingMonitor) -> None:
    build(pools=gke_pools([HIGH, MEGA]))

    assert names(pulumi_mocks, NETWORK) == [f"train-vpc{i}" for i in range(1, 9)], "8 VPCs, not 12"
    assert len(pulumi_mocks.of_type(SUBNETWORK)) == len(pulumi_mocks.of_type(FIREWALL)) == 8
    assert attached(pulumi_mocks, "high") == attached(pulumi_mocks, "mega")[:4]


def test_a_tcp_pool_makes_no_gpu_networks_and_the_cluster_no_multi_networking(
    pulumi_mocks: RecordingMonitor,
) -> None:
    component = build(pools=gke_pools([{**MEGA, "fabric": "tcp"}]))

    assert not pulumi_mocks.of_type(NETWORK) and not pulumi_mocks.of_type(SUBNETWORK)
    assert not pulumi_mocks.of_type(FIREWALL)
    inputs = only(pulumi_mocks, CLUSTER).inputs
    assert "enableMultiNetworking" not in inputs and "datapathProvider" not in inputs
    assert "networkConfig" not in pulumi_mocks.named("train-mega").inputs
    assert component.gpu_networks == {}


def test_a_dranet_pool_makes_no_networks_and_the_cluster_only_dataplane_v2(pulumi_mocks: RecordingMonitor) -> None:
    build(pools=gke_pools([DRANET]))

    assert not pulumi_mocks.of_type(NETWORK) and not pulumi_mocks.of_type(SUBNETWORK)
    inputs = only(pulumi_mocks, CLUSTER).inputs
    assert inputs["datapathProvider"] == "ADVANCED_DATAPATH" and "enableMultiNetworking" not in inputs
    assert pulumi_mocks.named("train-b200").inputs["networkConfig"] == {"acceleratorNetworkProfile": "auto"}


def test_the_subnets_come_from_the_clusters_gpu_network_range(pulumi_mocks: RecordingMonitor) -> None:
    component = build(cluster_spec(gpuNetworks={"cidr": "10.200.0.0/16"}), pools=gke_pools([HIGH]))

    assert [s["ipCidrRange"] for s in by_name(pulumi_mocks, SUBNETWORK).values()] == [
        "10.200.0.0/21",
        "10.200.8.0/21",
        "10.200.16.0/21",
        "10.200.24.0/21",
    ]
    assert list(component.gpu_networks) == ["vpc1", "vpc2", "vpc3", "vpc4"]
    assert len(pulumi_mocks.of_type(NODE_POOL)) == 2


# Config.

# 1.34: the stack makes the RoCE VPC (from 1.35 GKE's accelerator network profile does by default).
GKE = {"provider": "gcp", "name": "g", "project": "my-project", "region": REGION, "kubernetesVersion": "1.34"}


def config_issues(cluster: dict[str, Any], pools: list[dict[str, Any]]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        resolve(parse_stack({"cluster": cluster, "nodePools": pools}))
    return [(i.path, i.message) for i in caught.value.issues]


def test_the_gpu_network_range_defaults_to_192_168_0_0_16_and_must_hold_every_subnet() -> None:
    assert cluster_spec().gpu_networks.cidr == subnets.DEFAULT_CIDR == "192.168.0.0/16"
    assert cluster_spec().to_config()["gpuNetworks"] == {"cidr": "192.168.0.0/16"}
    assert GcpClusterSpec.model_validate({**GKE, "gpuNetworks": {"cidr": "10.8.0.0/14"}}).gpu_networks.cidr == (
        "10.8.0.0/14"
    )
    for bad in ("10.0.0.0/17", "fd00::/48", "not-a-cidr"):
        [(path, message)] = config_issues({**GKE, "gpuNetworks": {"cidr": bad}}, [])
        assert path == "cluster.gpuNetworks.cidr" and bad in message


def test_an_rdma_pool_needs_a_zone_for_its_roce_vpc() -> None:
    regional = {**A4, "zone": None, "placement": "none"}

    assert config_issues(GKE, [regional]) == [
        (
            "nodePools[0].zone",
            "pool 'b200' runs rdma over a RoCE VPC, whose network profile is zonal: "
            "set `zone`, make the cluster zonal (cluster.zone), or let GKE make the networks "
            "(acceleratorNetworkProfile: auto)",
        )
    ]
    resolve(parse_stack({"cluster": {**GKE, "zone": ZONE}, "nodePools": [regional]}))
    resolve(parse_stack({"cluster": GKE, "nodePools": [{**regional, "fabric": "tcp"}]}))
    on_135 = {**GKE, "kubernetesVersion": "1.35"}
    managed = resolve(parse_stack({"cluster": on_135, "nodePools": [regional]})).pools["b200"]
    assert managed.dranet, "GKE makes the networks of a DRANET pool, wherever it is"


def test_the_rdma_pools_of_a_cluster_share_one_zone() -> None:
    other = {**ULTRA, "zone": "us-central1-b"}

    assert config_issues(GKE, [A4, other, {**MEGA, "zone": "us-central1-c"}]) == [
        (
            "nodePools[1].zone",
            "the cluster's rdma pools share one RoCE VPC, which is zonal: put pool 'h200' in "
            f"{ZONE} with pool 'b200', or use fabric tcp",
        )
    ]


A4X_MAX = {"name": "gb300", "machineType": "a4x-maxgpu-4g-metal", "maxNodes": 18, "zone": ZONE}


def test_the_metal_roce_vpc_takes_the_zones_metal_profile_no_subnet_and_no_rule() -> None:
    nets = gpudirect.node_networks(pool(A4X_MAX))
    metal = [n for n in nets if n.metal]
    assert [n.name for n in nets] == ["gvnic-1", *(f"rdma-metal-{i}" for i in range(8))]
    assert all(n.roce and n.device_mode == "RDMA" for n in metal)
    args = gpunetworks.network_args("train", "ml-prod", metal, roce_zone=ZONE)
    assert args["name"] == "train-rdma-metal" and args["network_profile"] == ROCE_PROFILE + "-metal"
    assert gpunetworks.firewall_args("train", "ml-prod", metal, "192.168.0.0/16") is None
    assert gpunetworks.metal_subnet("train-rdma-metal") == "default-subnet-1-train-rdma-metal"


def test_a4x_max_pods_attach_nothing_by_name_and_claim_eight_nics_through_dranet() -> None:
    a4x_max = pool(A4X_MAX)
    assert gpudirect.pod_networks(a4x_max) == ()
    assert gpudirect.multinetwork_pools([a4x_max]) == []
    template = gpudirect.claim_template(a4x_max, "training")
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"] == {"deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 8}
    assert gpunetworks.cluster_args([a4x_max]) == {"datapath_provider": "ADVANCED_DATAPATH"}
    assert gpunetworks.cluster_args([a4x_max, pool(A4)])["enable_multi_networking"] is True, "A4 pods attach theirs"


def test_an_a4x_max_and_an_a4_pool_share_the_extra_gvnic_vpc_but_not_the_roce_vpc(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build(cluster_spec(), gke_pools([A4, {**A4X_MAX, "name": "gb300"}]))

    assert names(pulumi_mocks, NETWORK) == ["train-gvnic-1", "train-rdma", "train-rdma-metal"]
    profiles = {n: a.get("networkProfile") for n, a in by_name(pulumi_mocks, NETWORK).items()}
    assert profiles["train-rdma"] == ROCE_PROFILE and profiles["train-rdma-metal"] == ROCE_PROFILE + "-metal"


def test_an_a4x_max_pool_needs_a_zone_for_its_metal_roce_vpc_and_no_profile_would_help() -> None:
    regional = {**A4X_MAX, "zone": None, "placement": "none"}
    [(path, message)] = config_issues({**GKE, "kubernetesVersion": "1.35"}, [regional])
    assert path == "nodePools[0].zone" and message.endswith("set `zone` or make the cluster zonal (cluster.zone)")


def test_a4x_without_gkes_profile_attaches_the_gvnic_and_four_rdma_subnets_of_the_roce_vpc() -> None:
    # NVIDIA AICR, "GKE GB200 (A4X) Networking Prerequisites": gvnic-1 and rdma-0..rdma-3.
    a4x = pool({"name": "gb200", "machineType": "a4x-highgpu-4g", "maxNodes": 18, "zone": ZONE})
    assert not a4x.dranet, "no cluster version: this stack makes the networks"
    assert [n.name for n in gpudirect.node_networks(a4x)] == ["gvnic-1", "rdma-0", "rdma-1", "rdma-2", "rdma-3"]
    assert [n.interface for n in gpudirect.pod_networks(a4x)] == ["eth2", "eth3", "eth4", "eth5"]
