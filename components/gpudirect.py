"""GKE GPUDirect networks: the extra NICs of TCPX, TCPXO and RDMA machines, named once for the VPCs,
the cluster's Network objects and the pods' interfaces.

Sources: GoogleCloudPlatform/cluster-toolkit @1047080 (examples/gke-a3-highgpu, gke-a3-megagpu,
gke-a3-ultragpu, gke-a4; modules/network/multivpc and gpu-rdma-vpc; the GKENetworkParamSet and
Network templates of modules/scheduler/gke-cluster), and GKE's "Maximize GPU network bandwidth"
guides. Network names follow them (vpc1..vpc8, gvnic-1, rdma-0..rdma-7), so a user can read GKE's
documentation against what we make.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from components import dra
from components.gcp.subnets import DEFAULT_CIDR, SLOTS, SUBNET_PREFIX
from components.pool import Pool

DeviceMode = Literal["NetDevice", "RDMA"]

GPU_NIC_MTU = 8244
"""MTU of the TCPX / TCPXO GPU NIC VPCs (cluster-toolkit's multivpc for A3 High and Mega)."""
RDMA_MTU = 8896
"""MTU of the A3 Ultra / A4 networks, the RoCE VPC and the extra gVNIC's (cluster-toolkit)."""
RDMA_DEVICE_CLASS = "mrdma.google.com"
"""The DRA device class of GKE's RDMA NICs under the accelerator network profile."""
METAL_VPC = "rdma-metal"
"""The VPC (by suffix) of bare-metal machines' RDMA NICs, made with the zone's vpc-roce-metal profile."""
METAL_SUBNET = "default-subnet-1-{vpc}"
"""The subnet a vpc-roce-metal network profile makes in its VPC, which every RDMA NIC attaches (cluster-toolkit
v1.95.0 modules/network/gpu-rdma-vpc: the profile "automatically creates a predefined subnetwork for the MRDMA
interfaces", named default-subnet-1-<network>; no other subnet may be created there)."""
DEFAULT_NETWORK = "default"
"""The name GKE's multi-networking gives the pod network, which eth0 attaches."""


@dataclass(frozen=True, slots=True)
class GpuNetwork:
    """One extra NIC of a GPUDirect node: its VPC and subnet, its Network object, the pod's interface."""

    name: str
    """The Network and GKENetworkParamSet object name, e.g. vpc1 or rdma-0."""
    vpc: str
    """Which VPC holds its subnet, by suffix: its own name, `rdma` (one RoCE VPC, 8 subnets) or `rdma-metal` (the
    metal RoCE VPC, whose one subnet its network profile makes)."""
    device_mode: DeviceMode
    """NetDevice (a Linux interface in the pod) or RDMA (the NIC's RDMA device in the pod)."""
    mtu: int
    """The VPC's MTU."""
    slot: int
    """Its subnet's place in the GPU network range: it keeps one CIDR whatever else the cluster has."""
    interface: str
    """The interface name inside pods (and the NIC's name on the node)."""
    gpu: bool = True
    """Carries GPU traffic (the extra gVNIC of A3 Ultra / A4 does not, and pods do not attach it)."""

    @property
    def roce(self) -> bool:
        """Whether its VPC is a RoCE network (an RDMA network profile, zonal, without firewall rules)."""
        return self.vpc in ("rdma", METAL_VPC)

    @property
    def metal(self) -> bool:
        """Whether its VPC is the metal RoCE network of bare-metal machines, which makes its own subnet."""
        return self.vpc == METAL_VPC

    def subnet_cidr(self, cidr: str = DEFAULT_CIDR) -> str:
        """Its subnet, the slot-th /21 of `cidr`."""
        base = ipaddress.ip_network(cidr)
        return str(list(base.subnets(new_prefix=SUBNET_PREFIX))[self.slot])


def _tcp_nics(count: int) -> tuple[GpuNetwork, ...]:
    return tuple(
        GpuNetwork(f"vpc{i}", f"vpc{i}", "NetDevice", GPU_NIC_MTU, slot=i - 1, interface=f"eth{i}")
        for i in range(1, count + 1)
    )


def node_networks(pool: Pool) -> tuple[GpuNetwork, ...]:
    """The extra networks of the pool's nodes, in NIC order (eth1 first): what the node pool attaches.
    None when GKE's accelerator network profile makes them. Bare metal (A4X Max) attaches its host network and the
    metal RoCE VPC once per RDMA NIC (cluster-toolkit v1.95.0 examples/gke-a4x-max-bm: an IDPF VPC, then 8
    interfaces of the vpc-roce-metal network)."""
    if pool.dranet and not pool.roce_metal:
        return ()
    if pool.fabric in ("tcpx", "tcpxo"):
        return _tcp_nics(pool.gpu_nics)
    if pool.fabric == "rdma":
        gvnics = tuple(
            GpuNetwork(f"gvnic-{i}", f"gvnic-{i}", "NetDevice", RDMA_MTU, slot=7 + i, interface=f"eth{i}", gpu=False)
            for i in range(1, pool.extra_gvnics + 1)
        )
        first = 1 + pool.extra_gvnics
        if pool.roce_metal:
            # No subnet of their own (slots past the range's): the profile makes the VPC's one subnet.
            metal = tuple(
                GpuNetwork(f"rdma-metal-{i}", METAL_VPC, "RDMA", RDMA_MTU, slot=SLOTS + i, interface=f"eth{first + i}")
                for i in range(pool.gpu_nics)
            )
            return gvnics + metal
        rdma = tuple(
            GpuNetwork(f"rdma-{i}", "rdma", "RDMA", RDMA_MTU, slot=16 + i, interface=f"eth{first + i}")
            for i in range(pool.gpu_nics)
        )
        return gvnics + rdma
    return ()


def pod_networks(pool: Pool) -> tuple[GpuNetwork, ...]:
    """The networks a worker on the pool attaches: every GPU NIC; none when it claims them through DRANET."""
    if pool.dranet:
        return ()
    return tuple(n for n in node_networks(pool) if n.gpu)


def multinetwork_pools(pools: Iterable[Pool]) -> list[Pool]:
    """The pools whose pods attach the nodes' extra networks by name (GKE multi-networking: a Network object per
    network); bare-metal pools attach theirs to nodes only, and pods claim the RDMA NICs through DRANET."""
    return [p for p in pools if pod_networks(p)]


def cluster_networks(pools: Iterable[Pool]) -> tuple[GpuNetwork, ...]:
    """Every extra network the cluster's pools use, once each, in slot order: what the stack makes."""
    found: dict[str, GpuNetwork] = {}
    for pool in pools:
        for net in node_networks(pool):
            found.setdefault(net.name, net)
    return tuple(sorted(found.values(), key=lambda n: n.slot))


def vpc_name(cluster: str, net: GpuNetwork) -> str:
    """The GCP VPC that holds the network's subnet."""
    return f"{cluster}-{net.vpc}"


def subnet_name(cluster: str, net: GpuNetwork) -> str:
    """The network's GCP subnet."""
    return f"{cluster}-{net.name}"


def claim_template_name(pool: Pool) -> str:
    """The ResourceClaimTemplate through which a worker on a managed-RDMA pool claims the node's RDMA NICs."""
    return f"{pool.name}-rdma-nics"


def claim_template(pool: Pool, namespace: str) -> dict[str, object]:
    """A ResourceClaimTemplate for every RDMA NIC of a node of the pool (one worker per node takes them all)."""
    return dra.claim_template(claim_template_name(pool), namespace, "rdma-nics", RDMA_DEVICE_CLASS, pool.gpu_nics)
