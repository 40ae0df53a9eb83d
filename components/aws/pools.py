"""What only EKS knows about a GPU pool: instance types, Karpenter or a managed node group, cluster placement groups,
Capacity Blocks, rack-scale UltraServers and EFA through DRA.

Pure, no Pulumi (components/aws/__init__.py loads pulumi_aws only when a component is used): the AWS
`ProviderRules` that pool resolution (components/pools.py) calls through components/providers.py. It belongs to the
pool layer and imports only what sits below it.
"""

from __future__ import annotations

from collections.abc import Collection

from components import catalog, unknown
from components.errors import Issue
from components.kubeversion import minor
from components.models.network import NetworkConfig
from components.models.nodepool import NodePoolSpec, Taint, default_taints
from components.poolrules import (
    Choice,
    Draft,
    Fit,
    Placement,
    ProviderRules,
    Provisioner,
    capacity_block_issues,
    configured_taints,
    placement_issues,
    profile_issues,
)

EFA_DRA_VERSION = "1.34"
"""The least EKS Kubernetes minor for the AWS EFA DRA driver (EKS user guide, "Manage EFA devices on Amazon EKS")."""
EKS_RACK_SCALE_VERSION = "1.33"
"""The least EKS Kubernetes minor for rack-scale NVLink pools (p6e-gb200): DRA, which ComputeDomains need (EKS user
guide, "Use P6e-GB200 UltraServers with Amazon EKS", ml-eks-nvidia-ultraserver)."""


def cluster_issues(network: NetworkConfig, kubernetes_version: str | None) -> list[Issue]:
    """What stops EFA through DRA on this cluster: a Kubernetes minor before 1.34."""
    if network.efa.mode != "dra":
        return []
    if kubernetes_version and minor(kubernetes_version) < minor(EFA_DRA_VERSION):
        return [
            Issue(
                "network.efa.mode",
                f"dra needs Kubernetes {EFA_DRA_VERSION} or later on EKS (cluster.kubernetesVersion is "
                f"{kubernetes_version}): raise it, or use mode device-plugin",
            )
        ]
    return []


def typo(spec: NodePoolSpec, path: str, allow_unknown: Collection[str]) -> Issue | None:
    """An instance type the catalog does not know and the stack does not vouch for."""
    return unknown.machine_type("aws", spec.instance_type, path, allow_unknown) if spec.instance_type else None


def machine(spec: NodePoolSpec, path: str) -> tuple[catalog.MachineType | None, list[Issue]]:
    """The catalog entry of the pool's instance type; an AWS pool names an `instanceType`, not a `machineType`."""
    issues: list[Issue] = []
    if spec.machine_type:
        issues.append(Issue(f"{path}.machineType", "is a GCP key; AWS pools name an `instanceType`"))
    if not spec.instance_type:
        issues.append(Issue(f"{path}.instanceType", "is required on AWS, e.g. p5.48xlarge"))
        return None, issues
    return catalog.lookup("aws", spec.instance_type), issues


def defaults(spec: NodePoolSpec, machine: catalog.MachineType | None, rack: int) -> Choice:
    """EFA where the type has it; Karpenter or a node group; a cluster placement group for on-demand and spot
    capacity in one zone."""
    return Choice(
        machine_fabric=machine.fabric if machine else "tcp",
        provisioner=spec.provisioner or _provisioner(spec, rack_scale=bool(rack)),
        placement=spec.placement or _placement(spec),
    )


def _provisioner(spec: NodePoolSpec, *, rack_scale: bool) -> Provisioner:
    """What makes an EKS pool's nodes unless the pool says: a node group for rack-scale NVLink pools (Karpenter
    cannot run their DRA driver), for pools that keep nodes warm and for pools whose capacity is provisioned through
    ProvisioningRequests (the Cluster Autoscaler serves them, Karpenter does not), Karpenter for the others."""
    warm = spec.min_nodes > 0 or spec.queued_provisioning.enabled
    return "nodegroup" if rack_scale or warm else "karpenter"


def _placement(spec: NodePoolSpec) -> Placement:
    # Reservations and capacity blocks carry their own placement; a placement group on top of
    # them fails with InsufficientInstanceCapacity, so they get none unless asked.
    if spec.zone is None or spec.capacity.type not in ("on-demand", "spot"):
        return "none"
    return "cluster"


def options(draft: Draft) -> list[Issue]:
    """An EFA pool's zone, a placement group's, and capacity AWS sells."""
    spec, path = draft.spec, draft.path
    issues: list[Issue] = []
    if draft.fabric == "efa" and not spec.zone:
        issues.append(Issue(f"{path}.zone", "an EFA pool lives in one availability zone: set `zone`"))
    issues += placement_issues(
        spec,
        draft.placement,
        path,
        provider="aws",
        offers="an AWS cluster placement group",
        allowed=("cluster", "none"),
    )
    if spec.capacity.type == "flex-start":
        issues.append(Issue(f"{path}.capacity.type", "flex-start is GKE's; on AWS use capacity-block or reservation"))
    return issues


def scaling(draft: Draft) -> list[Issue]:
    """Karpenter keeps no node warm, and a Capacity Block's pool starts empty."""
    issues: list[Issue] = []
    if draft.provisioner == "karpenter" and draft.spec.min_nodes > 0:
        issues.append(
            Issue(
                f"{draft.path}.minNodes",
                "Karpenter makes nodes when pods need them and keeps none warm: set minNodes: 0, "
                "or provisioner: nodegroup to keep minNodes nodes running",
            )
        )
    return issues + capacity_block_issues(draft.spec, draft.path)


def fit(draft: Draft, network: NetworkConfig, kubernetes_version: str | None) -> Fit:
    """What a rack-scale pool needs of EKS, and EFA through DRA on the pool's provisioner."""
    issues: list[Issue] = []
    if draft.rack:
        issues += _rack_scale_issues(draft.spec, draft.gpu_model, kubernetes_version, draft.path)
    if draft.fabric == "efa" and network.efa.mode == "dra" and draft.provisioner == "karpenter":
        issues.append(
            Issue(
                "network.efa.mode",
                f"dra: pool '{draft.spec.name}' is made by Karpenter, which the AWS EFA DRA driver does not support "
                "(EKS user guide, device-management-efa): set its provisioner: nodegroup, or use mode device-plugin",
            )
        )
    return Fit(issues=issues + profile_issues(draft.spec, draft.fabric, draft.path))


def _rack_scale_issues(
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
    if kubernetes_version and minor(kubernetes_version) < minor(EKS_RACK_SCALE_VERSION):
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


def taints(spec: NodePoolSpec, machine: catalog.MachineType | None, queued: bool) -> list[Taint]:
    """The taints the pool states, else the GPU taint."""
    return configured_taints(spec, default_taints("aws"))


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
"""EKS's rules for its pools."""
