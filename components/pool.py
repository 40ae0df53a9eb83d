"""A node pool resolved against the catalog and the network config: what a job placed on it needs (components/pools.py
resolves a stack's pools into these)."""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from pydantic import Field

from components import catalog, quantity
from components.models.base import Spec
from components.models.nodepool import Fabric, Taint
from components.podnetworks import PodNetwork
from components.poolrules import Placement, Provisioner
from components.topology import Topology

Provider = Literal["aws", "gcp", "existing"]
SYSTEM_POOL = "system"
"""The name of the untainted pool EKS and GKE stacks make for add-ons."""

# What a GPU node keeps from its workers, as a share of the machine's nominal figures, with a floor
# for small machines. It covers: memory the hypervisor and kernel hold (Karpenter assumes up to 7.5%
# of the nominal is never visible: VM_MEMORY_OVERHEAD_PERCENT); the kubelet's reservations and
# eviction threshold (EKS AMIs: 255Mi + 11Mi per pod, and 6% of the first core down to 0.25% of cores
# past the fourth; GKE: a sliding scale down to 2% of memory above 128 GiB); and the node's DaemonSets
# (GPU Operator, device plugins, CNI, CSI and monitoring agents).
SYSTEM_RESERVE_MEMORY = Decimal("0.10")
"""Share of a node's memory kept for the system: 10%, at least SYSTEM_RESERVE_MEMORY_MIN_GIB."""
SYSTEM_RESERVE_MEMORY_MIN_GIB = 4
"""The least memory a node keeps for the system, in GiB."""
SYSTEM_RESERVE_CPU = Decimal("0.05")
"""Share of a node's vCPUs kept for the system: 5%, at least SYSTEM_RESERVE_CPU_MIN."""
SYSTEM_RESERVE_CPU_MIN = 2
"""The fewest vCPUs a node keeps for the system."""


@dataclass(frozen=True, slots=True)
class RailUse:
    """RoCE / InfiniBand: how many of a node's rails NCCL can use in a worker, and what stops the rest."""

    usable: int
    """Rails NCCL can use: with a device the worker sees, NCCL_IB_HCA admits and (RoCE) an address on it."""
    total: int
    """The node's rails: as declared (`rails`), else one per GPU."""
    assumed: bool
    """`total` is one per GPU, not declared."""
    limit: str | None = None
    """Why `usable` falls short of `total`, and the fix; None when it does not."""


class Pool(Spec):
    """What a job placed on a pool takes from it: GPUs, placement, fabric. Nothing is typed twice."""

    name: str
    """Pool name."""
    provider: Provider
    """aws | gcp | existing."""
    machine_type: str | None = None
    """Instance or machine type, when known."""
    gpus_per_node: int = Field(ge=1)
    """GPUs per node."""
    gpu_model: str | None = None
    """GPU model, when known."""
    accelerator_type: str | None = None
    """GCP guest accelerator type, e.g. nvidia-h100-80gb."""
    max_nodes: int = Field(ge=1)
    """Most nodes the pool scales to."""
    min_nodes: int = Field(default=0, ge=0)
    """Nodes the pool keeps, whether or not pods need them."""
    provisioner: Provisioner | None = None
    """What makes the pool's nodes: Karpenter or a managed node group (EKS), GKE's node pool; none on
    an existing cluster."""
    local_storage: bool = False
    """The machine's local NVMe / SSD disks hold the container runtime and pods' ephemeral storage."""
    capacity: Literal["on-demand", "spot", "reservation", "capacity-block", "flex-start"] = "on-demand"
    """How the nodes are bought."""
    provisioning_class: str | None = None
    """The ProvisioningRequest class Kueue asks the autoscaler for the pool's nodes with, all at once before it admits
    a job (queuedProvisioning); None when nodes come as pods need them."""
    provisioning_retries: int = Field(default=3, ge=0)
    """How many times Kueue asks again after a failed request (queuedProvisioning.retries)."""
    vcpus: int | None = None
    """vCPUs per node, when known."""
    memory_gib: int | None = None
    """Host memory per node, when known."""
    allocatable_cpu: str | None = None
    """A node's allocatable cpu as the pool states it (allocatable.cpu), which replaces what the catalog implies."""
    allocatable_memory: str | None = None
    """A node's allocatable memory as the pool states it (allocatable.memory), which replaces what the catalog
    implies."""
    zone: str | None = None
    """The pool's single zone, when it has one."""
    placement: Placement = "none"
    """Placement group strategy."""
    taints: list[Taint] = Field(default_factory=list)
    """Node taints; jobs tolerate them."""
    startup_taints: list[Taint] = Field(default_factory=list)
    """Taints the pool's nodes come up with and lose once their node check passes; no job tolerates them."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Node labels the pool sets (pools this stack creates)."""
    node_selector: dict[str, str] = Field(default_factory=dict)
    """The labels jobs select the pool's nodes by."""
    fabric: Fabric = "tcp"
    """efa | infiniband | roce | tcpx | tcpxo | rdma | tcp."""
    machine_fabric: Fabric = "tcp"
    """The machine's fastest fabric (catalog), which `fabric` may opt out of."""
    fabric_gbps: float = 0
    """The nominal bandwidth of the machine's GPU fabric in Gbps (catalog); 0 when unknown."""
    gpu_nics: int = Field(default=0, ge=0)
    """GKE GPUDirect: the machine's GPU NICs, each on its own network; every worker attaches them all."""
    extra_gvnics: int = Field(default=0, ge=0)
    """GKE: gVNICs beside eth0, each on its own network (A3 Ultra and A4 have one)."""
    dranet: bool = False
    """GKE rdma: pods claim the RDMA NICs through GKE's DRANET instead of attaching networks by name; GKE's
    accelerator network profile makes the networks, unless `roce_metal`."""
    roce_metal: bool = False
    """GKE rdma on a bare-metal machine (A4X Max): the stack attaches the zone's metal RoCE network (vpc-roce-metal)
    and an IDPF host network to every node, and pods claim the RDMA NICs through GKE's DRANET."""
    rails: int = Field(default=0, ge=0)
    """RoCE / InfiniBand: the node's RDMA NICs for GPU traffic (one per GPU on most machines); 0 when
    not declared."""
    rail_gbps: float | None = None
    """RoCE / InfiniBand: one rail's line rate in Gbps, when declared."""
    efa_interfaces: int = Field(default=0, ge=0)
    """EFA devices per node, requested whole by each worker."""
    efa_gpudirect: bool = False
    """EFA supports GPUDirect RDMA on this type (FI_EFA_USE_DEVICE_RDMA=1)."""
    efa_dra: bool = False
    """EFA devices come through the AWS EFA DRA driver: workers claim them (ResourceClaimTemplate) instead of
    requesting vpc.amazonaws.com/efa (network.efa.mode dra)."""
    networks: list[PodNetwork] = Field(default_factory=list)
    """Secondary networks pods attach (infiniband / roce)."""
    rdma_resource: str | None = None
    """The RDMA shared-device resource pods request (infiniband / roce)."""
    rdma_interfaces: list[str] = Field(default_factory=list)
    """The host interfaces whose RDMA devices the shared device plugin exposes on this pool's nodes, as far as
    the stack knows (its ifNames); empty when it exposes every Mellanox device."""
    ib_hca: str = "mlx5"
    """NCCL_IB_HCA for infiniband / roce: the rails' devices (=mlx5_0,mlx5_1,...) when known."""
    ib_tc: int | None = None
    """NCCL_IB_TC (infiniband / roce), when the pool declares a traffic class."""
    ib_sl: int | None = None
    """NCCL_IB_SL (infiniband / roce), when the pool declares a service level."""
    arch: catalog.Arch = "x86_64"
    """The nodes' CPU architecture (catalog; x86_64 when unknown)."""
    nvlink_domain_nodes: int = Field(default=0, ge=0)
    """Rack-scale NVLink: the most nodes one NVLink domain joins; 0 when NVLink stays inside the node."""
    topology: Topology | None = None
    """The network topology jobs are placed by, when scheduler.topology is on."""
    runtimes: dict[str, str] = Field(default_factory=dict)
    """The pool's Kubeflow Trainer ClusterTrainingRuntimes by kind (torch -> <pool>-torch), when trainer is on."""
    mpi_image: str | None = None
    """The node image of the pool's DeepSpeed and MPI runtimes (trainer.mpiImage), when trainer is on."""
    registry_mirror: dict[str, str] = Field(default_factory=dict)
    """Where the pool's pods pull their images through (images.registryMirror as a map, a single prefix under
    `*`); empty for upstream registries."""
    kubectl_image: str | None = None
    """The kubectl image of the pool's node check verdict and fabric check watcher (images.kubectl), when stated."""

    def worker_requests(self, gpus: int) -> dict[str, str]:
        """The cpu and memory a worker with `gpus` GPUs gets by default: the machine's vCPUs and memory
        less the system reserve, shared by GPUs (so any mix of workers that fits the GPUs fits the
        node). Empty when the catalog does not know the machine."""
        if self.vcpus is None or self.memory_gib is None:
            return {}
        share = Decimal(gpus) / Decimal(self.gpus_per_node)
        reserve_cpu = max(Decimal(SYSTEM_RESERVE_CPU_MIN), math.ceil(self.vcpus * SYSTEM_RESERVE_CPU))
        reserve_gib = max(Decimal(SYSTEM_RESERVE_MEMORY_MIN_GIB), self.memory_gib * SYSTEM_RESERVE_MEMORY)
        cpu = (self.vcpus - reserve_cpu) * share
        memory = (self.memory_gib - reserve_gib) * share * 2**30
        return {"cpu": _cores(cpu), "memory": _mebibytes(memory)}

    def machine(self) -> catalog.MachineType | None:
        """The pool's machine in the catalog, when its type is catalogued (an existing cluster's pool may
        name an AWS or a GCP type)."""
        if self.machine_type is None:
            return None
        providers: tuple[catalog.Provider, ...] = ("aws", "gcp") if self.provider == "existing" else (self.provider,)
        return next((m for p in providers if (m := catalog.lookup(p, self.machine_type))), None)

    @property
    def autoscaled(self) -> bool:
        """A managed node group whose size changes between minNodes and maxNodes: the Cluster
        Autoscaler's to scale."""
        return self.provisioner == "nodegroup" and self.min_nodes < self.max_nodes

    @property
    def kubernetes_arch(self) -> str:
        """The nodes' kubernetes.io/arch label."""
        return catalog.KUBERNETES_ARCH[self.arch]

    @property
    def cluster_autoscaler_makes_nodes(self) -> bool:
        """The Cluster Autoscaler adds the pool's nodes: an autoscaled node group, or one whose nodes come through
        ProvisioningRequests the autoscaler serves."""
        return self.autoscaled or (self.provisioner == "nodegroup" and self.provisioning_class is not None)

    def networks_in(self, namespace: str) -> list[PodNetwork]:
        """The pool's networks as a pod in `namespace` attaches them."""
        return [n for n in self.networks if n.namespace == namespace]

    def address_range(self, namespace: str) -> str | None:
        """NCCL_IB_ADDR_RANGE: the smallest subnet holding the ranges of every network a pod in `namespace`
        attaches (NCCL takes one range, and each rail has its own subnet); None when none is known or
        they mix IPv4 and IPv6."""
        ranges = [ipaddress.ip_network(n.ip_range, strict=False) for n in self.networks_in(namespace) if n.ip_range]
        if not ranges or len({r.version for r in ranges}) > 1:
            return None
        common = ranges[0]
        while not all(r.subnet_of(common) for r in ranges):  # type: ignore[arg-type]
            common = common.supernet()
        return str(common)

    def rail_use(self, namespace: str | None = None) -> RailUse | None:
        """RoCE / InfiniBand: the rails NCCL can use in a worker in `namespace` (default: attaching every network
        of the pool); None for other fabrics. A rail counts when the worker sees its RDMA device (an SR-IOV VF,
        or an HCA the shared device plugin exposes), NCCL_IB_HCA admits it and, on RoCE, the worker has an
        address on it (its RoCE v2 GID carries that address). InfiniBand needs no address, so through the
        shared device plugin a worker reaches every rail with no network attached."""
        if self.fabric not in ("roce", "infiniband"):
            return None
        total = self.rails or self.gpus_per_node
        networks = self.networks if namespace is None else self.networks_in(namespace)
        assumed = "" if self.rails else ", one per GPU assumed"
        bounds: list[tuple[int, str]] = []
        if self.fabric == "roce":
            bounds.append(
                (
                    len(networks),
                    f"workers attach {len(networks)} of the node's {total} rails{assumed}: attach one network per "
                    "rail (`rails`, or a network per rail in `networks`), since a RoCE rail needs the pod's address",
                )
            )
        vfs = sum(1 for n in networks if n.resource_name)
        if self.rdma_resource is None:
            bounds.append(
                (
                    vfs,
                    f"workers see {vfs} RDMA devices of the node's {total} rails{assumed} (an SR-IOV VF per network, "
                    "no RDMA shared device plugin): attach an SR-IOV network per rail",
                )
            )
        elif self.rdma_interfaces:
            seen = vfs + len(self.rdma_interfaces)
            bounds.append(
                (
                    seen,
                    f"workers see {seen} RDMA devices of the node's {total} rails{assumed} (the RDMA shared device "
                    f"plugin exposes the devices of {', '.join(self.rdma_interfaces)} only"
                    f"{f', beside {vfs} SR-IOV VFs' if vfs else ''}): list every rail's interface in "
                    "network.rdma.interfaces",
                )
            )
        if self.ib_hca.startswith("="):
            named = len(self.ib_hca[1:].split(","))
            bounds.append(
                (named, f"NCCL_IB_HCA={self.ib_hca} names {named} of the node's {total} rails{assumed}: name them all")
            )
        short = [(count, why) for count, why in bounds if count < total]
        if not short:
            return RailUse(total, total, not self.rails)
        usable, why = min(short, key=lambda bound: bound[0])
        return RailUse(usable, total, not self.rails, why)

    def rail_shortfall(self) -> int:
        """RoCE / InfiniBand: how many of a node's rails NCCL cannot use (attaching every network); 0 for other
        fabrics."""
        use = self.rail_use()
        return use.total - use.usable if use else 0

    def rdma_advice(self) -> list[str]:
        """What would make this RoCE / InfiniBand pool's RDMA faster or safer, one sentence each: rails NCCL
        cannot use, fewer rails than GPUs, and an NCCL_IB_HCA prefix that also matches storage and front-end
        ports."""
        use = self.rail_use()
        if use is None:
            return []
        advice = []
        if use.limit:
            advice.append(
                f"pool '{self.name}' ({self.fabric}) uses {use.usable} of its nodes' {use.total} rails: {use.limit}"
            )
        elif use.total < self.gpus_per_node:
            short = self.gpus_per_node - use.total
            advice.append(
                f"pool '{self.name}' ({self.fabric}) has {use.total} rail{'' if use.total == 1 else 's'} for "
                f"{self.gpus_per_node} GPUs per node (rails: {use.total}), so {short} GPUs share another's NIC"
            )
        if self.rdma_resource and not self.ib_hca.startswith(("=", "^")):
            advice.append(
                f"pool '{self.name}': NCCL_IB_HCA={self.ib_hca} is a prefix, which also matches storage and "
                "front-end ports the RDMA shared device plugin exposes: name the rails' devices "
                '(rails.devices: "mlx5_{i}", or rdmaDevice on each network) or set network.rdma.hca to an exact '
                "list (=mlx5_0,mlx5_3,...)"
            )
        return advice

    def summary(self, fabric: str = "") -> str:
        """One line naming the pool, its type, GPUs, fabric (with `fabric`'s details) and how it scales."""
        kind = f"{self.machine_type}, " if self.machine_type else ""
        model = f" {self.gpu_model}" if self.gpu_model else ""
        detail = f", {fabric}" if fabric else ""
        return f"{self.name} ({kind}{self.gpus_per_node}x{model} GPU, {self.fabric}{detail}, {self.scaling()})"

    def scaling(self) -> str:
        """How the pool's node count changes, in words."""
        size = f"{self.min_nodes}-{self.max_nodes} nodes"
        if self.provisioner == "karpenter":
            return f"{size} by Karpenter"
        if self.cluster_autoscaler_makes_nodes:
            requests = " (ProvisioningRequests)" if self.provisioning_class else ""
            return f"{size}, node group + Cluster Autoscaler{requests}"
        if self.provisioner == "nodegroup":
            return f"{self.max_nodes} nodes, fixed node group"
        if self.provisioner == "gke" and self.provisioning_class:
            return f"{size}, GKE queued provisioning"
        if self.provisioner == "gke":
            return f"{size}, GKE autoscaler"
        return f"up to {self.max_nodes} nodes"


def _cores(cpu: Decimal) -> str:
    """Whole cores when there is at least one, else millicores."""
    return str(int(cpu)) if cpu >= 1 else f"{max(1, int(cpu * 1000))}m"


def _mebibytes(memory: Decimal) -> str:
    """Whole GiB when there is at least one, else whole MiB."""
    if memory >= 2**30:
        return quantity.gibibytes(int(memory // 2**30))
    return f"{max(1, int(memory // 2**20))}Mi"


def taints_of(pools: list[Pool], *, startup: bool = False) -> list[Taint]:
    """Every distinct taint of these pools, in order: what a DaemonSet on all of them tolerates. With `startup`,
    the startup taints too: for the DaemonSets a node's check needs before it can run (driver, device plugins,
    networks)."""
    found: list[Taint] = []
    for pool in pools:
        found += [t for t in (*pool.taints, *(pool.startup_taints if startup else ())) if t not in found]
    return found
