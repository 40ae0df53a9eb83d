"""GKE GPUDirect VPCs, subnets and firewall rules, as plain dicts keyed like pulumi_gcp.compute's arguments.

Pure: no Pulumi import. Every extra network of `gpudirect.cluster_networks` gets a subnet in the
cluster's region; its VPC is its own, but the eight rdma-i subnets share one RoCE VPC, and the metal RoCE VPC of
bare-metal machines has the one subnet its network profile makes.

Source: GoogleCloudPlatform/cluster-toolkit @1047080: modules/network/multivpc (one VPC and subnet per
GPU NIC, REGIONAL routing, an internal tcp/udp/icmp rule through modules/network/vpc), modules/network/
gpu-rdma-vpc (one RoCE VPC with a zonal network profile and N subnets, no firewall rules),
examples/gke-a4/gke-a4.yaml (the extra gVNIC's VPC with its own internal rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from components import gpudirect
from components.gpudirect import GpuNetwork
from components.pool import Pool

ROUTING_MODE = "REGIONAL"
"""The GPU VPCs' routing mode: their subnets live in the cluster's region only."""
ROCE_PROFILE = "https://www.googleapis.com/compute/beta/projects/{project}/global/networkProfiles/{zone}-vpc-roce"
"""The RoCE network profile of a zone: a VPC made with it carries the RDMA NICs' traffic."""
METAL_ROCE_PROFILE = ROCE_PROFILE + "-metal"
"""The metal RoCE network profile of a zone, for bare-metal machines' RDMA NICs (cluster-toolkit v1.95.0
examples/gke-a4x-max-bm: `<zone>-vpc-roce-metal`)."""
INTERNAL_PROTOCOLS = ("tcp", "udp", "icmp")
"""What nodes may send each other over a NetDevice GPU VPC (cluster-toolkit's allow-internal-traffic)."""


class NetworkRef(NamedTuple):
    """How a node pool names one extra network: its VPC and its subnet (strings, or Outputs of the resources)."""

    network: Any
    """The VPC's name."""
    subnetwork: Any
    """The subnet's name."""


def gpudirect_pools(pools: Iterable[Pool]) -> list[Pool]:
    """The pools whose nodes attach extra GPUDirect networks this stack makes."""
    return [p for p in pools if gpudirect.node_networks(p)]


def roce_pools(pools: Iterable[Pool]) -> list[Pool]:
    """The pools whose nodes attach the RoCE VPC this stack makes (rdma pools, unless GKE makes their networks)."""
    return [p for p in pools if any(n.roce for n in gpudirect.node_networks(p))]


def cluster_args(pools: Iterable[Pool]) -> dict[str, Any]:
    """The `container.Cluster` arguments GPUDirect needs: multi-networking for pools that attach extra
    networks, Dataplane V2 for those and for pools whose RDMA NICs GKE manages (DRANET)."""
    pools = list(pools)
    attaching = bool(gpudirect_pools(pools))
    # Cluster Toolkit's gke-cluster turns multi-networking on with additional networks, and Dataplane V2
    # with it (modules/scheduler/gke-cluster/main.tf); its gke-node-pool needs Dataplane V2 for DRANET and
    # no multi-networking (modules/compute/gke-node-pool/main.tf, dranet_requirements; examples/gke-a4x). Bare
    # metal attaches its networks to the nodes while pods claim the NICs through DRANET, on a cluster without
    # multi-networking (examples/gke-a4x-max-bm: the cluster is given no additional networks).
    args: dict[str, Any] = {}
    if attaching or any(p.dranet for p in pools):
        args["datapath_provider"] = "ADVANCED_DATAPATH"
    if gpudirect.multinetwork_pools(pools):
        args["enable_multi_networking"] = True
    return args


def vpcs(networks: Iterable[GpuNetwork]) -> dict[str, list[GpuNetwork]]:
    """The networks grouped by the VPC that holds their subnets, in the order the VPCs first appear."""
    grouped: dict[str, list[GpuNetwork]] = {}
    for net in networks:
        grouped.setdefault(net.vpc, []).append(net)
    return grouped


def pool_zone(pool: Pool, cluster_zone: str | None) -> str | None:
    """The one zone the pool's nodes live in: its own, else a zonal cluster's; None when it spans the region."""
    return pool.zone or cluster_zone


def first_zone(pools: Iterable[Pool], cluster_zone: str | None) -> str | None:
    """The zone of the first pool that lives in one (a zonal file system's default place, with the GPU nodes that
    mount it), else a zonal cluster's; None when every pool spans the region of a regional cluster."""
    return next((zone for pool in pools if (zone := pool_zone(pool, cluster_zone))), cluster_zone)


def roce_zone(pools: Iterable[Pool], cluster_zone: str | None) -> str | None:
    """The zone of the cluster's RoCE VPC: that of the pools attaching it (validation makes them one), None
    without."""
    found = roce_pools(pools)
    return pool_zone(found[0], cluster_zone) if found else None


def roce_profile(project: str, zone: str, *, metal: bool = False) -> str:
    """The URL of the zone's RoCE network profile (the metal one for bare-metal machines)."""
    return (METAL_ROCE_PROFILE if metal else ROCE_PROFILE).format(project=project, zone=zone)


def metal_subnet(vpc: str) -> str:
    """The subnet a metal RoCE VPC's network profile makes in it, which the RDMA NICs attach."""
    return gpudirect.METAL_SUBNET.format(vpc=vpc)


def firewall_name(cluster: str, vpc: str) -> str:
    """The rule that lets a GPU VPC's nodes reach each other."""
    return f"{cluster}-{vpc}-internal"


def network_args(cluster: str, project: str, nets: Sequence[GpuNetwork], *, roce_zone: str | None) -> dict[str, Any]:
    """The `compute.Network` arguments of the VPC holding `nets` (one VPC's networks, as `vpcs` groups them)."""
    first = nets[0]
    args: dict[str, Any] = {
        "name": gpudirect.vpc_name(cluster, first),
        "project": project,
        "auto_create_subnetworks": False,
        "mtu": first.mtu,
        "routing_mode": ROUTING_MODE,
    }
    if first.roce:
        if roce_zone is None:
            raise ValueError(f"the RoCE VPC of cluster '{cluster}' needs a zone: its network profile is zonal")
        # Set at creation only: another zone replaces the VPC.
        args["network_profile"] = roce_profile(project, roce_zone, metal=first.metal)
    return args


def subnetwork_args(cluster: str, project: str, region: str, net: GpuNetwork, cidr: str) -> dict[str, Any]:
    """The `compute.Subnetwork` arguments of one GPU network but `network`: its /21 of `cidr` in the region."""
    return {
        "name": gpudirect.subnet_name(cluster, net),
        "project": project,
        "region": region,
        "ip_cidr_range": net.subnet_cidr(cidr),
    }


def firewall_args(cluster: str, project: str, nets: Sequence[GpuNetwork], cidr: str) -> dict[str, Any] | None:
    """The `compute.Firewall` arguments but `network` that let a NetDevice VPC's nodes reach each other;
    None for the RoCE VPC."""
    first = nets[0]
    if first.roce:
        # Firewall rules do not apply to the RDMA NICs' traffic, and a VPC with a RoCE profile takes none:
        # cluster-toolkit's gpu-rdma-vpc passes none and refuses any (modules/network/gpu-rdma-vpc/variables.tf,
        # firewall_rules; modules/network/vpc/main.tf, network_profile_firewall_validation).
        return None
    return {
        "name": firewall_name(cluster, first.vpc),
        "project": project,
        "direction": "INGRESS",
        "source_ranges": [net.subnet_cidr(cidr) for net in nets],
        "allows": [{"protocol": protocol} for protocol in INTERNAL_PROTOCOLS],
    }


def node_network_config(pool: Pool, refs: Mapping[str, NetworkRef]) -> dict[str, Any] | None:
    """The pool's `network_config`: the extra networks it attaches, or GKE's accelerator network profile
    when GKE makes its RDMA networks (DRANET); None for a pool without GPUDirect."""
    if pool.dranet and not pool.roce_metal:
        # GKE makes and attaches the networks itself, and refuses additional ones beside the profile.
        return {"accelerator_network_profile": "auto"}
    extra = node_network_configs(pool, refs)
    return {"additional_node_network_configs": extra} if extra else None


def node_network_configs(pool: Pool, refs: Mapping[str, NetworkRef]) -> list[dict[str, Any]]:
    """The pool's `additional_node_network_configs`: its extra networks in NIC order (eth1 first).

    `refs` names each network's VPC and subnet, by network name; it must hold every network of the pool.
    """
    configs: list[dict[str, Any]] = []
    for net in gpudirect.node_networks(pool):
        ref = refs.get(net.name)
        if ref is None:
            raise ValueError(f"pool '{pool.name}' attaches network '{net.name}', which was not made for the cluster")
        configs.append({"network": ref.network, "subnetwork": ref.subnetwork})
    return configs
