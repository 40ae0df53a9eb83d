"""What only GKE knows about a GPU pool: machine types, version floors of GPUDirect, the accelerator network profile
and DRANET, compact placement and the 1x72 sub-block, DWS flex-start, and the taints GKE puts on nodes.

Pure, no Pulumi (components/gcp/__init__.py loads pulumi_gcp only when a component is used): the GKE
`ProviderRules` that pool resolution (components/pools.py) calls through components/providers.py. It belongs to the
pool layer and imports only what sits below it.
"""

from __future__ import annotations

from collections.abc import Collection

from components import catalog, provisioning, unknown
from components.errors import Issue
from components.kubeversion import minor, version_numbers
from components.models.network import NetworkConfig
from components.models.nodepool import GPUDIRECT_FABRICS, NodePoolSpec, Taint, default_taints
from components.poolrules import (
    Choice,
    Draft,
    Fit,
    Placement,
    ProviderRules,
    capacity_block_issues,
    configured_taints,
    efa_dra_issues,
    eks_provisioner_issue,
    placement_issues,
    profile_issues,
)

GKE_ARM_TAINT = Taint(key="kubernetes.io/arch", value="arm64", effect="NoSchedule")
"""The taint GKE puts on every Arm node of a Standard cluster (GKE, "Prepare an Arm workload for deployment"): a
pod runs there only if it tolerates it, so jobs and node agents on arm64 pools carry its toleration."""
GKE_SUBBLOCK_NODES = 18
"""The machines of one GKE "1x72" sub-block (an NVL72 rack of 4-GPU machines), which one node pool with the 1x72
workload policy fills at most (cluster-toolkit v1.95.0 examples/gke-a4x-max-bm/README.md: "18 nodes or less")."""
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


def gke_at_least(version: str, least: str) -> bool:
    """Whether GKE `version` is `least` or later. A minor alone ("1.32") is what GKE makes of it, the newest
    patch of that minor it offers, which is past every least patch of the minor (GKE API, Cluster
    initialClusterVersion: "1.X" picks the highest valid patch+gke.N patch in the 1.X version)."""
    if len(version_numbers(version)) == 2:
        return minor(version) >= minor(least)
    return version_numbers(version) >= version_numbers(least)


def gke_least_version(machine: catalog.MachineType, version: str) -> str | None:
    """The least GKE version `machine`'s GPUDirect runs on at the minor of `version`: its own minor's, or the
    oldest one when that minor is older than every listed one; None when the minor has no least patch."""
    least = machine.gke_least_versions
    if not least:
        return None
    same = [v for v in least if minor(v) == minor(version)]
    if same:
        return same[0]
    return least[0] if minor(version) < minor(least[0]) else None


def cluster_issues(network: NetworkConfig, kubernetes_version: str | None) -> list[Issue]:
    """EFA through DRA, which is EKS's."""
    return efa_dra_issues(network)


def typo(spec: NodePoolSpec, path: str, allow_unknown: Collection[str]) -> Issue | None:
    """A machine type the catalog does not know and the stack does not vouch for."""
    return unknown.machine_type("gcp", spec.machine_type, path, allow_unknown) if spec.machine_type else None


def machine(spec: NodePoolSpec, path: str) -> tuple[catalog.MachineType | None, list[Issue]]:
    """The catalog entry of the pool's machine type; a GKE pool names a `machineType`, and its GPU type when the
    catalog does not know the machine."""
    issues: list[Issue] = []
    if spec.instance_type:
        issues.append(Issue(f"{path}.instanceType", "is an AWS key; GKE pools name a `machineType`"))
    if not spec.machine_type:
        issues.append(Issue(f"{path}.machineType", "is required on GCP, e.g. a3-highgpu-8g"))
        return None, issues
    found = catalog.lookup("gcp", spec.machine_type)
    if found is None and not spec.accelerator_type:
        issues.append(
            Issue(
                f"{path}.acceleratorType",
                f"is required: {spec.machine_type} is not in the catalog, so name its GPU type (e.g. nvidia-l4)",
            )
        )
    return found, issues


def defaults(spec: NodePoolSpec, machine: catalog.MachineType | None, rack: int) -> Choice:
    """The machine's fastest fabric, GPUDirect included (the stack makes its GPU NIC networks); GKE's node pool;
    compact placement in one zone, and the 1x72 workload policy for a rack-scale pool."""
    return Choice(
        machine_fabric=machine.fabric if machine else "tcp",
        provisioner="gke",
        placement=spec.placement or _placement(spec, rack_scale=bool(rack)),
    )


def _placement(spec: NodePoolSpec, *, rack_scale: bool) -> Placement:
    capacity = spec.capacity.type
    # A GKE rack-scale pool's compact placement is the 1x72 workload policy that keeps it in one NVLink domain; it
    # applies to reserved capacity too (cluster-toolkit's gke-a4x and gke-a4x-max-bm use it with reservations).
    if rack_scale and spec.zone is not None and capacity != "flex-start":
        return "compact"
    # Reserved capacity carries its own placement, and flex-start takes no compact placement.
    if spec.zone is None or capacity not in ("on-demand", "spot"):
        return "none"
    return "compact"


def options(draft: Draft) -> list[Issue]:
    """Compact placement in one zone, and capacity GKE sells: no Capacity Blocks, flex-start from zero nodes and
    without compact placement."""
    spec, path = draft.spec, draft.path
    issues = placement_issues(
        spec, draft.placement, path, provider="gcp", offers="GKE compact placement", allowed=("compact", "none")
    )
    capacity = spec.capacity.type
    if capacity == "capacity-block":
        issues.append(Issue(f"{path}.capacity.type", "capacity-block is AWS's; on GKE use reservation or flex-start"))
    if capacity == "flex-start":
        if spec.min_nodes:
            issues.append(Issue(f"{path}.minNodes", "a flex-start pool scales from zero: set minNodes: 0"))
        if draft.placement == "compact":
            issues.append(Issue(f"{path}.placement", "flex-start capacity takes no compact placement: set none"))
    return issues


def scaling(draft: Draft) -> list[Issue]:
    """GKE's autoscaler makes the nodes: no EKS provisioner."""
    issues: list[Issue] = []
    if draft.spec.provisioner is not None:
        issues.append(eks_provisioner_issue(draft.path, "GKE pools scale with GKE's autoscaler"))
    return issues + capacity_block_issues(draft.spec, draft.path)


def fit(draft: Draft, network: NetworkConfig, kubernetes_version: str | None) -> Fit:
    """A rack-scale pool's sub-block; GPUDirect on the cluster's GKE version; whether GKE's accelerator network
    profile makes the RDMA networks (DRANET), or bare metal's are attached here; and the GPU NICs that follow."""
    issues = _subblock_issues(draft) if draft.rack else []
    dranet, found = _accelerator_network_profile(draft, kubernetes_version)
    issues += found + profile_issues(draft.spec, draft.fabric, draft.path)
    machine, fabric = draft.machine, draft.fabric
    roce_metal = bool(fabric == "rdma" and machine and machine.bare_metal)
    managed_networks = dranet and not roce_metal
    nics = machine if machine is not None and fabric in GPUDIRECT_FABRICS else None
    labels: dict[str, str] = {}
    if dranet:
        labels[GKE_NETWORKING_DRA_LABEL] = "true"
        if roce_metal:
            labels |= GKE_UNIFIED_CNI_LABELS
    fields = {
        "gpu_nics": nics.gpu_nics if nics else 0,
        # GKE's accelerator network profile makes a DRANET pool's host network too; bare metal's is attached here.
        "extra_gvnics": nics.extra_gvnics if nics and not managed_networks else 0,
        "dranet": dranet,
        "roce_metal": roce_metal,
    }
    return Fit(fields=fields, labels=labels, issues=issues)


def _subblock_issues(draft: Draft) -> list[Issue]:
    """A GKE rack-scale pool (A4X, A4X Max) is placed in one "1x72" sub-block by its workload policy (compact
    placement here): the pool lives in one zone and holds at most one sub-block of machines."""
    if draft.placement != "compact" or draft.max_nodes <= GKE_SUBBLOCK_NODES:
        return []
    return [
        Issue(
            f"{draft.path}.maxNodes",
            f"{draft.max_nodes} nodes, but a {draft.spec.machine_type} pool with the 1x72 workload policy fills one "
            f"sub-block of {GKE_SUBBLOCK_NODES} machines: set maxNodes to {GKE_SUBBLOCK_NODES} or fewer and "
            "declare one pool per sub-block",
        )
    ]


def _accelerator_network_profile(draft: Draft, kubernetes_version: str | None) -> tuple[bool, list[Issue]]:
    """Whether GKE makes the pool's RDMA networks (DRA); and what stops the fabric on this cluster version."""
    spec, fabric, machine, path = draft.spec, draft.fabric, draft.machine, draft.path
    issues = _version_issues(spec, fabric, machine, kubernetes_version) if kubernetes_version else []
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
    managed = chosen == "auto" and fabric == "rdma"
    if managed and kubernetes_version and not gke_at_least(kubernetes_version, MANAGED_RDMA_LEAST):
        issues.append(
            Issue(
                f"{path}.acceleratorNetworkProfile",
                f"auto needs GKE {MANAGED_RDMA_LEAST} or later: raise cluster.kubernetesVersion, or set none",
            )
        )
    return managed, issues


def _version_issues(spec: NodePoolSpec, fabric: str, machine: catalog.MachineType | None, version: str) -> list[Issue]:
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
        minor_only = ".".join(least.split(".")[:2])
        issues.append(
            Issue(
                "cluster.kubernetesVersion",
                f"pool '{spec.name}' runs {fabric} on {machine.name}, which GKE {version} does not support: use "
                f'{least} or later, or the minor alone ("{minor_only}" or newer), which GKE takes to its newest patch',
            )
        )
    return issues


def taints(spec: NodePoolSpec, machine: catalog.MachineType | None, queued: bool) -> list[Taint]:
    """The pool's taints (default: the GPU taint GKE sets), and those GKE puts there whatever the pool says: its Arm
    taint on Arm nodes, its queued-provisioning taint on a `queued` pool's nodes."""
    found = configured_taints(spec, default_taints("gcp"))
    if machine is not None and machine.arch == "arm64" and GKE_ARM_TAINT not in found:
        found.append(GKE_ARM_TAINT)
    if queued and provisioning.GKE_QUEUED_TAINT not in found:
        found.append(provisioning.GKE_QUEUED_TAINT)
    return found


RULES = ProviderRules(
    creates_pools=True,
    cluster_issues=cluster_issues,
    typo=typo,
    machine=machine,
    defaults=defaults,
    options=options,
    scaling=scaling,
    fit=fit,
    taints=taints,
)
"""GKE's rules for its pools."""
