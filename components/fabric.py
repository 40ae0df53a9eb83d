"""What a pod needs to use its pool's fabric: environment, device resources, annotations, capabilities."""

from __future__ import annotations

from dataclasses import dataclass, field

from components.models.nodepool import Fabric
from components.pool import Pool

MULTUS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
PRIMARY_INTERFACE = "eth0"
# The EFA libfabric provider registers its buffers in 2 MiB huge pages; AWS's EKS EFA examples
# reserve 5 GiB of them per pod.
EFA_HUGEPAGES_RESOURCE = "hugepages-2Mi"
EFA_HUGEPAGES_MIB = 5120


@dataclass(frozen=True, slots=True)
class FabricProfile:
    """The pieces of a worker pod that its fabric decides."""

    fabric: Fabric
    env: dict[str, str] = field(default_factory=dict)
    resources: dict[str, str | int] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    capabilities: tuple[str, ...] = ()
    interfaces: tuple[str, ...] = (PRIMARY_INTERFACE,)

    @property
    def socket_ifname(self) -> str:
        """The interface NCCL bootstraps over (NCCL_SOCKET_IFNAME)."""
        return self.env.get("NCCL_SOCKET_IFNAME", PRIMARY_INTERFACE)


def profile(pool: Pool, namespace: str) -> FabricProfile:
    """The fabric profile of a worker pod in `namespace` on `pool`."""
    if pool.fabric == "efa":
        return _efa(pool)
    if pool.fabric in ("infiniband", "roce"):
        return _rdma(pool, namespace)
    return FabricProfile(
        fabric="tcp",
        env={"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": PRIMARY_INTERFACE},
    )


def _efa(pool: Pool) -> FabricProfile:
    env = {"FI_PROVIDER": "efa"}
    if pool.efa_gpudirect:
        env["FI_EFA_USE_DEVICE_RDMA"] = "1"
    env["FI_EFA_FORK_SAFE"] = "1"
    env["NCCL_SOCKET_IFNAME"] = PRIMARY_INTERFACE
    return FabricProfile(
        fabric="efa",
        env=env,
        resources={EFA_RESOURCE: pool.efa_interfaces, EFA_HUGEPAGES_RESOURCE: f"{EFA_HUGEPAGES_MIB}Mi"},
        capabilities=("IPC_LOCK",),
    )


def _rdma(pool: Pool, namespace: str) -> FabricProfile:
    networks = pool.networks_in(namespace)
    resources: dict[str, str | int] = {}
    if pool.rdma_resource:
        resources[pool.rdma_resource] = 1
    for net in networks:
        if net.resource_name:
            resources[net.resource_name] = int(resources.get(net.resource_name, 0)) + 1
    env = {
        "NCCL_IB_DISABLE": "0",
        "NCCL_IB_HCA": pool.ib_hca,
        "NCCL_SOCKET_IFNAME": networks[0].interface if networks else PRIMARY_INTERFACE,
    }
    if pool.fabric == "roce" and networks and networks[0].ip_range:
        # No NCCL_IB_GID_INDEX: with macvlan each pod's address sits at its own GID index, different per
        # pod and node (multus-cni#1100, NVIDIA/nccl#890), and NCCL >= 2.21 finds the RoCE v2 GID itself.
        # Naming the network's subnet makes it pick the GID of the pod's own secondary interface.
        env["NCCL_IB_ADDR_FAMILY"] = "AF_INET6" if ":" in networks[0].ip_range else "AF_INET"
        env["NCCL_IB_ADDR_RANGE"] = networks[0].ip_range
    annotations = {MULTUS_ANNOTATION: ",".join(f"{n.name}@{n.interface}" for n in networks)} if networks else {}
    return FabricProfile(
        fabric=pool.fabric,
        env=env,
        resources=resources,
        annotations=annotations,
        capabilities=("IPC_LOCK",),
        interfaces=(PRIMARY_INTERFACE, *(n.interface for n in networks)),
    )
