"""A node pool resolved against the catalog and the network config: what a job placed on it needs."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from pydantic import Field

from components import catalog, fabricfit, provisioning, quantity, unknown
from components.errors import Issue
from components.models.base import Spec
from components.models.network import RAIL_TYPES, NetworkConfig, NetworkSpec, nad_parents, plugin_interfaces, wrong_type
from components.models.nodepool import (
    GPUDIRECT_FABRICS,
    NODE_CHECK_KEY,
    NODE_CHECK_TAINT,
    CapacitySpec,
    Fabric,
    NodePoolSpec,
    Taint,
    default_taints,
)
from components.topology import Topology

POOL_LABEL = "gpu-training/pool"
"""The node label that pools this stack creates carry, and that jobs select on."""

Provider = Literal["aws", "gcp", "existing"]
GPU_PRESENT_LABEL = {"nvidia.com/gpu.present": "true"}
"""The label GPU Feature Discovery (run by the GPU Operator) puts on every node with an NVIDIA GPU."""
SYSTEM_POOL = "system"
"""The name of the untainted pool EKS and GKE stacks make for add-ons."""
GKE_ARM_TAINT = Taint(key="kubernetes.io/arch", value="arm64", effect="NoSchedule")
"""The taint GKE puts on every Arm node of a Standard cluster (GKE, "Prepare an Arm workload for deployment"): a
pod runs there only if it tolerates it, so jobs and node agents on arm64 pools carry its toleration."""
GKE_SUBBLOCK_NODES = 18
"""The machines of one GKE "1x72" sub-block (an NVL72 rack of 4-GPU machines), which one node pool with the 1x72
workload policy fills at most (cluster-toolkit v1.95.0 examples/gke-a4x-max-bm/README.md: "18 nodes or less")."""

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


class PodNetwork(Spec):
    """A secondary network a pod on the pool attaches, with the interface name it sees."""

    name: str
    """The NetworkAttachmentDefinition."""
    namespace: str
    """Its namespace."""
    interface: str
    """The interface inside the pod, e.g. net1."""
    resource_name: str | None = None
    """The SR-IOV resource a pod requests for it, if any."""
    ip_range: str | None = None
    """The network's IPAM range (CIDR), which NCCL picks the RoCE GID of the interface by."""
    rdma_device: str | None = None
    """The RDMA device behind it (e.g. mlx5_0), which NCCL_IB_HCA names, when known."""


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
    provisioner: Literal["karpenter", "nodegroup", "gke"] | None = None
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
    placement: Literal["cluster", "compact", "none"] = "none"
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


def resolve_pools(
    pools: list[NodePoolSpec],
    provider: Provider,
    region: str | None,
    network: NetworkConfig,
    demand: Mapping[str, int] | None = None,
    *,
    gpu_labels: bool = False,
    kubernetes_version: str | None = None,
    allow_unknown: Collection[str] = (),
) -> tuple[dict[str, Pool], list[Issue]]:
    """Every pool resolved, and the issues that stop one from resolving.

    `demand` is the most nodes a job asks of each pool, which a pool without maxNodes is sized to.
    `gpu_labels`: GPU Feature Discovery labels the nodes, so a lone pool on an existing cluster can be
    found by GPU_PRESENT_LABEL. `kubernetes_version` is the cluster's version (a minor, or on GKE an exact
    version), which GKE fabrics depend on. `allow_unknown`: machine types not in the catalog that the stack
    vouches for (cluster.allowUnknown).
    """
    lone = gpu_labels and provider == "existing" and len(pools) == 1
    # The shared device plugin has one selector for the whole cluster.
    plugin = plugin_interfaces(network.rdma, network.networks, [n for p in pools for n in p.rail_networks()])
    resolved: dict[str, Pool] = {}
    issues: list[Issue] = _efa_dra_issues(network, provider, kubernetes_version)
    for index, spec in enumerate(pools):
        path = f"nodePools[{index}]"
        if spec.name in resolved:
            issues.append(Issue(f"{path}.name", f"pool '{spec.name}' is declared twice; pool names are unique"))
            continue
        most = spec.max_nodes or max(spec.min_nodes, (demand or {}).get(spec.name, 0), 1)
        found_by = spec
        if lone and not spec.node_selector:
            found_by = spec.model_copy(update={"node_selector": dict(GPU_PRESENT_LABEL)})
        pool, found = _resolve(
            found_by,
            provider,
            region,
            network,
            path,
            max_nodes=most,
            kubernetes_version=kubernetes_version,
            plugin_interfaces=plugin,
            allow_unknown=allow_unknown,
        )
        issues.extend(found)
        if pool is not None:
            resolved[spec.name] = pool
    return resolved, issues


def _resolve(
    spec: NodePoolSpec,
    provider: Provider,
    region: str | None,
    network: NetworkConfig,
    path: str,
    *,
    max_nodes: int,
    kubernetes_version: str | None = None,
    plugin_interfaces: list[str] | None = None,
    allow_unknown: Collection[str] = (),
) -> tuple[Pool | None, list[Issue]]:
    """The pool, or None and what stops it. `plugin_interfaces`: the shared device plugin's ifNames
    across the stack (empty: it exposes every Mellanox device)."""
    own_type = {"aws": spec.instance_type, "gcp": spec.machine_type}.get(provider)
    typo = unknown.machine_type(provider, own_type, path, allow_unknown) if own_type else None
    if typo is not None:
        return None, [typo]  # every other fact of the pool is the catalog's: nothing else can be judged
    issues: list[Issue] = []
    if provisioning.capacity(spec, provider) != spec.capacity.type:
        spec = spec.model_copy(update={"capacity": CapacitySpec(type=provisioning.capacity(spec, provider))})
    machine = _machine(spec, provider, path, issues)
    gpus = spec.gpus_per_node
    if machine is not None:
        if gpus is not None and gpus != machine.gpus:
            issues.append(
                Issue(
                    f"{path}.gpusPerNode",
                    f"{machine.name} has {machine.gpus} GPUs per node, not {gpus}; drop gpusPerNode to derive it",
                )
            )
        gpus = machine.gpus
    elif gpus is None:
        known = "a type in the catalog or " if provider != "existing" else ""
        issues.append(Issue(f"{path}.gpusPerNode", f"is required: name {known}the GPUs per node of this pool"))

    stated = [key for key in ("cpu", "memory") if getattr(spec.allocatable, key) is not None]
    if stated and machine is not None and provider != "existing":
        issues.append(
            Issue(
                f"{path}.allocatable",
                f"{machine.name}'s nodes advertise what the catalog and the provider's kubelet settings say: drop "
                f"allocatable.{' and allocatable.'.join(stated)} (it is for machines the catalog does not know)",
            )
        )

    zone = spec.zone
    if zone and region and not zone.startswith(region):
        issues.append(Issue(f"{path}.zone", f"zone '{zone}' is not in the cluster's region '{region}'"))

    machine_fabric = _default_fabric(machine, provider)
    fabric = spec.fabric or machine_fabric
    gpu_model = spec.gpu_model or (machine.gpu_model if machine else None)
    rack = catalog.nvlink_domain_nodes(gpu_model)
    provisioner = {"aws": spec.provisioner or _eks_provisioner(spec, rack_scale=bool(rack)), "gcp": "gke"}.get(provider)
    local_disks = bool(machine and machine.local_storage_gb) and provider != "existing"
    local_storage = (spec.local_storage or ("raid0" if local_disks else "none")) == "raid0"
    gpu_model = spec.gpu_model or (machine.gpu_model if machine else None)
    rack = catalog.nvlink_domain_nodes(gpu_model)
    placement = spec.placement or _default_placement(provider, zone, spec.capacity.type, rack_scale=bool(rack))
    unfit = fabricfit.issues(spec, provider, fabric, machine, path)
    if unfit:
        return None, [*issues, *unfit]  # what follows from the fabric (RDMA devices, rails) would only echo it
    issues.extend(
        _check_provider_options(spec, provider, fabric=fabric, placement=placement, machine=machine, path=path)
    )
    issues.extend(_check_scaling(spec, provider, provisioner, machine, path))
    provisioning_class, found = provisioning.resolve(spec, provider, provisioner, path)
    issues.extend(found)
    if provider == "aws" and rack:
        issues.extend(_check_eks_rack_scale(spec, gpu_model, kubernetes_version, path))
    if fabric == "efa" and network.efa.mode == "dra" and provisioner == "karpenter":
        issues.append(
            Issue(
                "network.efa.mode",
                f"dra: pool '{spec.name}' is made by Karpenter, which the AWS EFA DRA driver does not support (EKS "
                "user guide, device-management-efa): set its provisioner: nodegroup, or use mode device-plugin",
            )
        )
    if provider == "gcp" and rack:
        issues.extend(_check_gke_rack(spec, placement, max_nodes, path))
    dranet, found = _accelerator_network_profile(spec, fabric, machine, kubernetes_version, path)
    issues.extend(found)
    roce_metal = bool(provider == "gcp" and fabric == "rdma" and machine and machine.bare_metal)
    managed_networks = dranet and not roce_metal
    domain_nodes = spec.nvlink_domain_nodes or rack
    if spec.nvlink_domain_nodes is not None and not rack:
        issues.append(
            Issue(
                f"{path}.nvlinkDomainNodes",
                f"applies to rack-scale NVLink pools (GB200, GB300); {gpu_model or 'this pool'}'s NVLink stays "
                "inside the node: drop it",
            )
        )
    elif spec.nvlink_domain_nodes is not None and spec.nvlink_domain_nodes > rack:
        issues.append(
            Issue(
                f"{path}.nvlinkDomainNodes",
                f"{spec.nvlink_domain_nodes} nodes, but one {gpu_model} NVLink domain holds at most {rack}",
            )
        )

    pod_networks = _pod_networks(spec, network, fabric, path, issues)
    rail_fields = _rail_fields(spec, fabric, pod_networks, machine=machine, path=path, issues=issues)
    rdma_resource = (
        network.rdma.resource_name if fabric in ("infiniband", "roce") and network.rdma.shared_device_plugin else None
    )
    if fabric in ("infiniband", "roce") and rdma_resource is None and not any(n.resource_name for n in pod_networks):
        issues.append(
            Issue(
                f"{path}.fabric",
                f"a {fabric} pod needs an RDMA device: enable network.rdma.sharedDevicePlugin "
                "or attach an sriov / ib-sriov network",
            )
        )

    if issues or gpus is None:
        return None, issues
    exposed: list[str] = []
    if rdma_resource and plugin_interfaces:
        # Of a selector made from every NAD's parent, this pool's nodes surely have only its own NADs' parents.
        own = nad_parents([n for n in network.networks if n.name in spec.networks], spec.rail_networks())
        exposed = list(plugin_interfaces) if network.rdma.interfaces else own or list(plugin_interfaces)
    owned = provider != "existing"
    labels = {**spec.labels, POOL_LABEL: spec.name} if owned else dict(spec.labels)
    checked = spec.node_check.enabled
    if checked and owned:
        labels[NODE_CHECK_KEY] = "required"  # existing clusters' nodes register with it (docs/health.md)
    if dranet:
        labels[GKE_NETWORKING_DRA_LABEL] = "true"
        if roce_metal:
            labels |= GKE_UNIFIED_CNI_LABELS
    return Pool(
        name=spec.name,
        provider=provider,
        machine_type=spec.instance_type or spec.machine_type,
        gpus_per_node=gpus,
        gpu_model=gpu_model,
        accelerator_type=spec.accelerator_type or (machine.accelerator_type if machine else None),
        max_nodes=max_nodes,
        min_nodes=spec.min_nodes,
        provisioner=provisioner,  # type: ignore[arg-type]
        local_storage=local_storage,
        capacity=spec.capacity.type,
        provisioning_class=provisioning_class,
        provisioning_retries=spec.queued_provisioning.retries,
        vcpus=machine.vcpus if machine else None,
        memory_gib=machine.memory_gib if machine else None,
        allocatable_cpu=spec.allocatable.cpu,
        allocatable_memory=spec.allocatable.memory,
        zone=zone,
        placement=placement,
        taints=_taints(spec, provider, machine, queued=provisioning_class is not None),
        startup_taints=[NODE_CHECK_TAINT] if checked else [],
        labels=labels,
        node_selector={POOL_LABEL: spec.name} if owned else dict(spec.node_selector),
        fabric=fabric,
        machine_fabric=machine_fabric,
        # A fabric this stack cannot build here (GPUDirect off GKE) has no bandwidth to account for.
        fabric_gbps=machine.fabric_gbps if machine and machine_fabric == machine.fabric else 0,
        gpu_nics=machine.gpu_nics if fabric in GPUDIRECT_FABRICS and machine else 0,
        # GKE's accelerator network profile makes a DRANET pool's host network too; bare metal's is attached here.
        extra_gvnics=machine.extra_gvnics if fabric in GPUDIRECT_FABRICS and machine and not managed_networks else 0,
        dranet=dranet,
        roce_metal=roce_metal,
        efa_interfaces=machine.efa_interfaces if fabric == "efa" and machine else 0,
        efa_gpudirect=bool(machine and machine.gpudirect_rdma) if fabric == "efa" else False,
        efa_dra=fabric == "efa" and network.efa.mode == "dra",
        networks=pod_networks,
        rdma_resource=rdma_resource,
        rdma_interfaces=exposed,
        ib_hca=network.rdma.hca,
        arch=machine.arch if machine else "x86_64",
        nvlink_domain_nodes=domain_nodes,
    ).model_copy(update=rail_fields), []


EFA_DRA_VERSION = "1.34"
"""The least EKS Kubernetes minor for the AWS EFA DRA driver (EKS user guide, "Manage EFA devices on Amazon EKS")."""


def _efa_dra_issues(network: NetworkConfig, provider: Provider, kubernetes_version: str | None) -> list[Issue]:
    """What stops EFA through DRA on this cluster: a provider other than EKS, or a Kubernetes minor before 1.34."""
    if network.efa.mode != "dra":
        return []
    if provider != "aws":
        return [Issue("network.efa.mode", "dra installs the AWS EFA DRA driver on EKS; drop it, or use device-plugin")]
    if kubernetes_version and _minor(kubernetes_version) < _minor(EFA_DRA_VERSION):
        return [
            Issue(
                "network.efa.mode",
                f"dra needs Kubernetes {EFA_DRA_VERSION} or later on EKS (cluster.kubernetesVersion is "
                f"{kubernetes_version}): raise it, or use mode device-plugin",
            )
        ]
    return []


EKS_RACK_SCALE_VERSION = "1.33"
"""The least EKS Kubernetes minor for rack-scale NVLink pools (p6e-gb200): DRA, which ComputeDomains need (EKS user
guide, "Use P6e-GB200 UltraServers with Amazon EKS", ml-eks-nvidia-ultraserver)."""


def _eks_provisioner(spec: NodePoolSpec, *, rack_scale: bool) -> str:
    """What makes an EKS pool's nodes unless the pool says: a node group for rack-scale NVLink pools (Karpenter
    cannot run their DRA driver), for pools that keep nodes warm and for pools whose capacity is provisioned through
    ProvisioningRequests (the Cluster Autoscaler serves them, Karpenter does not), Karpenter for the others."""
    warm = spec.min_nodes > 0 or spec.queued_provisioning.enabled
    return "nodegroup" if rack_scale or warm else "karpenter"


def _check_eks_rack_scale(
    spec: NodePoolSpec, gpu_model: str | None, kubernetes_version: str | None, path: str
) -> list[Issue]:
    """What EKS asks of a rack-scale NVLink pool (EKS user guide, ml-eks-nvidia-ultraserver): DRA for its
    ComputeDomains, so a managed node group on Kubernetes 1.33 or later, and Capacity Blocks, the only way the
    UltraServers are sold."""
    issues: list[Issue] = []
    what = spec.instance_type or gpu_model or "this pool"
    if spec.provisioner == "karpenter":
        issues.append(
            Issue(
                f"{path}.provisioner",
                f"{what} joins NVLink across nodes through ComputeDomains, which need DRA, and Karpenter (like EKS "
                "Auto Mode) does not support DRA (EKS user guide, ml-eks-nvidia-ultraserver): use provisioner: "
                "nodegroup, the default for these pools",
            )
        )
    if spec.capacity.type != "capacity-block":
        issues.append(
            Issue(
                f"{path}.capacity.type",
                f"{what} is sold only as UltraServers through Capacity Blocks (no on-demand, spot or reservation): "
                "set capacity: {type: capacity-block, reservationId: <the block's cr- id>}",
            )
        )
    if kubernetes_version and _minor(kubernetes_version) < _minor(EKS_RACK_SCALE_VERSION):
        issues.append(
            Issue(
                "cluster.kubernetesVersion",
                f"pool '{spec.name}' ({what}) needs DRA for its ComputeDomains: use Kubernetes "
                f"{EKS_RACK_SCALE_VERSION} or later",
            )
        )
    sizes = catalog.ultraservers(spec.instance_type)
    if sizes and spec.nvlink_domain_nodes is not None and spec.nvlink_domain_nodes not in sizes:
        offered = ", ".join(f"{nodes} ({name})" for nodes, name in sorted(sizes.items()))
        issues.append(
            Issue(
                f"{path}.nvlinkDomainNodes",
                f"{spec.nvlink_domain_nodes} nodes is no UltraServer of {what}; AWS sells {offered} instances",
            )
        )
    return issues


def _machine(spec: NodePoolSpec, provider: Provider, path: str, issues: list[Issue]) -> catalog.MachineType | None:
    """The catalog entry of the pool's type, checking the type key fits the provider."""
    if provider == "aws":
        if spec.machine_type:
            issues.append(Issue(f"{path}.machineType", "is a GCP key; AWS pools name an `instanceType`"))
        if not spec.instance_type:
            issues.append(Issue(f"{path}.instanceType", "is required on AWS, e.g. p5.48xlarge"))
            return None
        return catalog.lookup("aws", spec.instance_type)
    if provider == "gcp":
        if spec.instance_type:
            issues.append(Issue(f"{path}.instanceType", "is an AWS key; GKE pools name a `machineType`"))
        if not spec.machine_type:
            issues.append(Issue(f"{path}.machineType", "is required on GCP, e.g. a3-highgpu-8g"))
            return None
        machine = catalog.lookup("gcp", spec.machine_type)
        if machine is None and not spec.accelerator_type:
            issues.append(
                Issue(
                    f"{path}.acceleratorType",
                    f"is required: {spec.machine_type} is not in the catalog, so name its GPU type (e.g. nvidia-l4)",
                )
            )
        return machine
    if spec.instance_type:
        return catalog.lookup("aws", spec.instance_type)
    if spec.machine_type:
        return catalog.lookup("gcp", spec.machine_type)
    return None


def _default_fabric(machine: catalog.MachineType | None, provider: Provider) -> Fabric:
    """The machine's fastest fabric where this stack can build it: GPUDirect needs the GPU NIC
    networks a GKE stack makes, so an existing cluster's pool of a GPUDirect machine gets tcp."""
    if machine is None:
        return "tcp"
    if machine.fabric in GPUDIRECT_FABRICS and provider != "gcp":
        return "tcp"
    return machine.fabric


def _taints(
    spec: NodePoolSpec, provider: Provider, machine: catalog.MachineType | None, *, queued: bool = False
) -> list[Taint]:
    """The pool's node taints: those configured (default: the GPU taint), and those GKE puts there whatever the pool
    says: its Arm taint on Arm nodes, its queued-provisioning taint on a `queued` pool's nodes."""
    taints = list(spec.taints) if spec.taints is not None else default_taints(provider)
    if provider == "gcp" and machine is not None and machine.arch == "arm64" and GKE_ARM_TAINT not in taints:
        taints.append(GKE_ARM_TAINT)
    if provider == "gcp" and queued and provisioning.GKE_QUEUED_TAINT not in taints:
        taints.append(provisioning.GKE_QUEUED_TAINT)
    return taints


def _check_gke_rack(spec: NodePoolSpec, placement: str, max_nodes: int, path: str) -> list[Issue]:
    """A GKE rack-scale pool (A4X, A4X Max) is placed in one "1x72" sub-block by its workload policy (compact
    placement here): the pool lives in one zone and holds at most one sub-block of machines."""
    issues: list[Issue] = []
    if placement != "compact":
        return issues
    if max_nodes > GKE_SUBBLOCK_NODES:
        issues.append(
            Issue(
                f"{path}.maxNodes",
                f"{max_nodes} nodes, but a {spec.machine_type} pool with the 1x72 workload policy fills one "
                f"sub-block of {GKE_SUBBLOCK_NODES} machines: set maxNodes to {GKE_SUBBLOCK_NODES} or fewer and "
                "declare one pool per sub-block",
            )
        )
    return issues


def _default_placement(
    provider: Provider, zone: str | None, capacity: str, *, rack_scale: bool = False
) -> Literal["cluster", "compact", "none"]:
    # A GKE rack-scale pool's compact placement is the 1x72 workload policy that keeps it in one NVLink domain; it
    # applies to reserved capacity too (cluster-toolkit's gke-a4x and gke-a4x-max-bm use it with reservations).
    if provider == "gcp" and rack_scale and zone is not None and capacity != "flex-start":
        return "compact"
    # Reservations and capacity blocks carry their own placement; a placement group on top of
    # them fails with InsufficientInstanceCapacity, so they get none unless asked.
    if zone is None or capacity not in ("on-demand", "spot"):
        return "none"  # flex-start, too, takes no compact placement
    return {"aws": "cluster", "gcp": "compact"}.get(provider, "none")  # type: ignore[return-value]


def _check_provider_options(
    spec: NodePoolSpec,
    provider: Provider,
    *,
    fabric: str,
    placement: str,
    machine: catalog.MachineType | None,
    path: str,
) -> list[Issue]:
    issues: list[Issue] = []
    if fabric == "efa" and provider == "aws" and not spec.zone:
        issues.append(Issue(f"{path}.zone", "an EFA pool lives in one availability zone: set `zone`"))
    allowed = {"aws": ("cluster", "none"), "gcp": ("compact", "none"), "existing": ("none",)}[provider]
    if placement not in allowed:
        what = {
            "aws": "an AWS cluster placement group",
            "gcp": "GKE compact placement",
            "existing": "nothing: pools of an existing cluster are not created here",
        }[provider]
        issues.append(
            Issue(
                f"{path}.placement",
                f"'{placement}' does not apply here; {provider} offers {what} ({' | '.join(allowed)})",
            )
        )
    elif placement != "none" and not spec.zone:
        issues.append(Issue(f"{path}.zone", f"{placement} placement keeps the pool in one zone: set `zone`"))
    capacity = spec.capacity.type
    if provider == "existing" and capacity != "on-demand":
        issues.append(
            Issue(f"{path}.capacity.type", "capacity applies to pools this stack creates, not an existing cluster's")
        )
    if provider == "gcp" and capacity == "capacity-block":
        issues.append(Issue(f"{path}.capacity.type", "capacity-block is AWS's; on GKE use reservation or flex-start"))
    if provider == "aws" and capacity == "flex-start":
        issues.append(Issue(f"{path}.capacity.type", "flex-start is GKE's; on AWS use capacity-block or reservation"))
    if provider == "gcp" and capacity == "flex-start":
        if spec.min_nodes:
            issues.append(Issue(f"{path}.minNodes", "a flex-start pool scales from zero: set minNodes: 0"))
        if placement == "compact":
            issues.append(Issue(f"{path}.placement", "flex-start capacity takes no compact placement: set none"))
    if provider != "existing" and spec.name == SYSTEM_POOL:
        issues.append(Issue(f"{path}.name", f"'{SYSTEM_POOL}' is the add-on pool the cluster makes; choose another"))
    if provider == "existing" and not spec.node_selector:
        issues.append(
            Issue(
                f"{path}.nodeSelector",
                "is required on an existing cluster with several pools (or without the GPU Operator): the labels "
                "of this pool's nodes, e.g. {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}",
            )
        )
    if provider != "existing" and spec.node_selector:
        issues.append(
            Issue(
                f"{path}.nodeSelector",
                f"is for existing clusters; this stack labels its pools {POOL_LABEL}={spec.name}",
            )
        )
    return issues


GKE_NETWORKING_DRA_LABEL = "cloud.google.com/gke-networking-dra-driver"
"""The node label that runs GKE's managed DRANET driver (its networking-dra-driver DaemonSet) on a pool's nodes:
without it no node publishes its RDMA NICs, and no pod claiming them is ever scheduled. Google's "Allocate network
resources by using GKE managed DRANET" says to add it when creating the node pool, beside the accelerator network
profile; cluster-toolkit @1047080 modules/compute/gke-node-pool/main.tf sets it on every pool with enable_dranet,
bare metal (examples/gke-a4x-max-bm) too."""
GKE_UNIFIED_CNI_LABELS = {"cloud.google.com/gke-dpv2-unified-cni": "cni-migration"}
"""What bare-metal RDMA nodes carry besides (cluster-toolkit v1.95.0 examples/gke-a4x-max-bm)."""
MANAGED_RDMA_VERSION = "1.35"
"""The first GKE minor whose every version has the accelerator network profile."""
MANAGED_RDMA_LEAST = "1.34.1-gke.1829001"
"""The first GKE version with the accelerator network profile (cluster-toolkit v1.95.0
modules/compute/gke-node-pool/gpu_direct.tf, dranet_min_version)."""
NATIVE_SIDECAR_VERSION = "1.29"
"""The first minor where sidecar containers are on by default: TCPX and TCPXO run their RxDM as one."""


def version_numbers(version: str) -> tuple[int, ...]:
    """A Kubernetes minor ("1.35") or GKE version ("1.35.1-gke.1396000") as numbers that compare in order."""
    return tuple(int(part) for part in re.findall(r"[0-9]+", version))


def _minor(version: str) -> tuple[int, ...]:
    return version_numbers(version)[:2]


def gke_at_least(version: str, least: str) -> bool:
    """Whether GKE `version` is `least` or later. A minor alone ("1.32") is what GKE makes of it, the newest
    patch of that minor it offers, which is past every least patch of the minor (GKE API, Cluster
    initialClusterVersion: "1.X" picks the highest valid patch+gke.N patch in the 1.X version)."""
    if len(version_numbers(version)) == 2:
        return _minor(version) >= _minor(least)
    return version_numbers(version) >= version_numbers(least)


def gke_least_version(machine: catalog.MachineType, version: str) -> str | None:
    """The least GKE version `machine`'s GPUDirect runs on at the minor of `version`: its own minor's, or the
    oldest one when that minor is older than every listed one; None when the minor has no least patch."""
    least = machine.gke_least_versions
    if not least:
        return None
    same = [v for v in least if _minor(v) == _minor(version)]
    if same:
        return same[0]
    return least[0] if _minor(version) < _minor(least[0]) else None


def _accelerator_network_profile(
    spec: NodePoolSpec, fabric: str, machine: catalog.MachineType | None, kubernetes_version: str | None, path: str
) -> tuple[bool, list[Issue]]:
    """Whether GKE makes the pool's RDMA networks (DRA); and what stops the fabric on this cluster version."""
    issues = _gke_version_issues(spec, fabric, machine, kubernetes_version) if kubernetes_version else []
    chosen = spec.accelerator_network_profile
    if fabric == "rdma" and machine is not None and machine.bare_metal:
        # Bare metal's RDMA NICs are physical functions on the zone's metal RoCE profile, which this stack attaches;
        # pods claim them through DRANET (cluster-toolkit examples/gke-a4x-max-bm). No profile choice applies.
        if chosen is not None:
            issues.append(
                Issue(
                    f"{path}.acceleratorNetworkProfile",
                    f"{machine.name} is bare metal: its RDMA NICs are on the zone's vpc-roce-metal network, which "
                    "this stack attaches, and pods claim them through GKE's DRANET; drop acceleratorNetworkProfile",
                )
            )
        return True, issues
    if chosen is None:
        managed = (
            fabric == "rdma"
            and kubernetes_version is not None
            and gke_at_least(kubernetes_version, MANAGED_RDMA_VERSION)
        )
        return managed, issues
    if chosen == "auto" and fabric != "rdma":
        issues.append(
            Issue(f"{path}.acceleratorNetworkProfile", f"applies to GKE rdma pools; this pool's fabric is {fabric}")
        )
    elif chosen == "auto" and kubernetes_version and not gke_at_least(kubernetes_version, MANAGED_RDMA_LEAST):
        issues.append(
            Issue(
                f"{path}.acceleratorNetworkProfile",
                f"auto needs GKE {MANAGED_RDMA_LEAST} or later: raise cluster.kubernetesVersion, or set none",
            )
        )
    return chosen == "auto" and fabric == "rdma", issues


def _gke_version_issues(
    spec: NodePoolSpec, fabric: str, machine: catalog.MachineType | None, version: str
) -> list[Issue]:
    """What stops the pool's GPUDirect fabric on GKE `version`: a native sidecar, or the machine's least patch."""
    issues: list[Issue] = []
    if fabric in ("tcpx", "tcpxo") and not gke_at_least(version, NATIVE_SIDECAR_VERSION):
        issues.append(
            Issue(
                "cluster.kubernetesVersion",
                f"pool '{spec.name}' runs {fabric}, whose RxDM daemon is a native sidecar: "
                f"use Kubernetes {NATIVE_SIDECAR_VERSION} or later",
            )
        )
    if machine is None or fabric != machine.gpudirect:
        return issues
    least = gke_least_version(machine, version)
    if least is not None and not gke_at_least(version, least):
        minor = ".".join(least.split(".")[:2])
        issues.append(
            Issue(
                "cluster.kubernetesVersion",
                f"pool '{spec.name}' runs {fabric} on {machine.name}, which GKE {version} does not support: use "
                f'{least} or later, or the minor alone ("{minor}" or newer), which GKE takes to its newest patch',
            )
        )
    return issues


def _check_scaling(
    spec: NodePoolSpec,
    provider: Provider,
    provisioner: str | None,
    machine: catalog.MachineType | None,
    path: str,
) -> list[Issue]:
    """How the pool scales and what its disks hold fit the provider, its capacity and its machine."""
    issues: list[Issue] = []
    if spec.provisioner is not None and provider != "aws":
        issues.append(
            Issue(
                f"{path}.provisioner",
                "chooses how EKS makes a pool's nodes; "
                + (
                    "GKE pools scale with GKE's autoscaler"
                    if provider == "gcp"
                    else "an existing cluster's nodes are not made here"
                ),
            )
        )
    if provisioner == "karpenter" and spec.min_nodes > 0:
        issues.append(
            Issue(
                f"{path}.minNodes",
                "Karpenter makes nodes when pods need them and keeps none warm: set minNodes: 0, "
                "or provisioner: nodegroup to keep minNodes nodes running",
            )
        )
    if spec.capacity.type == "capacity-block" and spec.min_nodes > 0:
        issues.append(
            Issue(
                f"{path}.minNodes",
                "a Capacity Block's instances exist only while the block is active, so its pool starts empty: "
                "set minNodes: 0 (nodes come when jobs ask for them)",
            )
        )
    if spec.local_storage == "raid0" and not (machine and machine.local_storage_gb):
        name = spec.instance_type or spec.machine_type or "this machine"
        issues.append(
            Issue(f"{path}.localStorage", f"{name} has no local disks in the catalog: set localStorage: none")
        )
    if spec.local_storage is not None and provider == "existing":
        issues.append(Issue(f"{path}.localStorage", "applies to pools this stack creates, not an existing cluster's"))
    return issues


def _pod_networks(
    spec: NodePoolSpec, network: NetworkConfig, fabric: str, path: str, issues: list[Issue]
) -> list[PodNetwork]:
    """The networks a pod on the pool attaches: those it lists, or the NADs its rails make."""
    out: list[PodNetwork] = []
    rails = spec.rail_networks()
    if (spec.networks or rails) and not network.multus.enabled:
        key = "networks" if spec.networks else "rails"
        issues.append(Issue(f"{path}.{key}", "attaching networks needs Multus: set network.multus.enabled: true"))
    for position, name in enumerate(spec.networks):
        declared = [n for n in network.networks if n.name == name]
        if not declared:
            known = ", ".join(sorted({n.name for n in network.networks})) or "none"
            issues.append(
                Issue(
                    f"{path}.networks[{position}]",
                    f"network '{name}' is not declared in network.networks (declared: {known})",
                )
            )
        for nad in declared:
            if fabric in RAIL_TYPES and nad.type in ("macvlan", "ipoib") and nad.type not in RAIL_TYPES[fabric]:
                issues.append(Issue(f"{path}.networks[{position}]", f"'{name}': {wrong_type(nad.type, fabric)}"))
            out.append(_pod_network(nad, position))
    for position, nad in enumerate(rails):
        if any((n.namespace, n.name) == (nad.namespace, nad.name) for n in network.networks):
            issues.append(
                Issue(
                    f"{path}.rails",
                    f"makes NAD {nad.namespace}/{nad.name}, which network.networks declares too: rename that network",
                )
            )
        out.append(_pod_network(nad, position))
    seen: dict[tuple[str, str], str] = {}
    for net in out:
        other = seen.setdefault((net.namespace, net.interface), net.name)
        if other != net.name:
            issues.append(
                Issue(f"{path}.networks", f"networks '{other}' and '{net.name}' both use interface {net.interface}")
            )
    if fabric == "tcp" and out:
        issues.append(Issue(f"{path}.fabric", "a tcp pool attaches no RDMA networks; set fabric: roce or infiniband"))
    return out


def _pod_network(nad: NetworkSpec, position: int) -> PodNetwork:
    return PodNetwork(
        name=nad.name,
        namespace=nad.namespace,
        interface=nad.interface or f"net{position + 1}",
        resource_name=nad.resource_name,
        ip_range=nad.ipam.range if nad.ipam else None,
        rdma_device=nad.hca,
    )


def _rail_fields(
    spec: NodePoolSpec,
    fabric: str,
    networks: list[PodNetwork],
    *,
    machine: catalog.MachineType | None,
    path: str,
    issues: list[Issue],
) -> dict[str, Any]:
    """What a RoCE / InfiniBand pool's rails set on it: their count and speed, the bandwidth they add up
    to, NCCL_IB_HCA naming exactly their devices, and the traffic class and service level."""
    rails = spec.rails
    if fabric not in RAIL_TYPES:
        if rails is None:
            return {}
        if fabric not in GPUDIRECT_FABRICS:
            issues.append(
                Issue(f"{path}.rails", f"rails are the RDMA NICs of roce and infiniband pools; this one is {fabric}")
            )
        elif rails.devices or rails.speed_gbps:
            key = "devices" if rails.devices else "speedGbps"
            issues.append(Issue(f"{path}.rails.{key}", f"GKE names and sizes a {fabric} pool's GPU NICs itself"))
        elif machine and machine.gpu_nics and rails.count != machine.gpu_nics:
            issues.append(Issue(f"{path}.rails", f"{machine.name} has {machine.gpu_nics} GPU NICs, not {rails.count}"))
        return {}
    fields: dict[str, Any] = {"ib_tc": spec.traffic_class, "ib_sl": spec.service_level}
    devices = rails.devices if rails and rails.devices else None
    if devices is None and networks and all(n.rdma_device for n in networks):
        devices = [n.rdma_device for n in networks if n.rdma_device]
    if devices:
        fields["ib_hca"] = "=" + ",".join(dict.fromkeys(devices))
    if rails:
        fields |= {"rails": rails.count, "rail_gbps": rails.speed_gbps}
        if rails.speed_gbps:
            fields["fabric_gbps"] = rails.count * rails.speed_gbps
    return fields


def taints_of(pools: list[Pool], *, startup: bool = False) -> list[Taint]:
    """Every distinct taint of these pools, in order: what a DaemonSet on all of them tolerates. With `startup`,
    the startup taints too: for the DaemonSets a node's check needs before it can run (driver, device plugins,
    networks)."""
    found: list[Taint] = []
    for pool in pools:
        found += [t for t in (*pool.taints, *(pool.startup_taints if startup else ())) if t not in found]
    return found
