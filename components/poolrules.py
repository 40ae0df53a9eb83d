"""The interface each provider's pool rules fill, and the few checks several providers share: how a pool that is
not one provider's refuses that provider's keys (an EKS provisioner, EFA through DRA, a Capacity Block kept warm,
GKE's accelerator network profile), where and in the words it always did.

Pool resolution (components/pools.py) decides what is the same everywhere; what a pool's provider alone knows (its
machine key, its defaults, its own checks, what it adds to a pool) comes from that provider's `ProviderRules`:
components/aws/pools.py, components/gcp/pools.py, components/existing/pools.py, looked up by provider name in
components/providers.py. The rule modules import this module and nothing above the pool layer, so imports point
down: pool -> providers -> {aws,gcp,existing}.pools -> poolrules -> models, catalog, errors. Pure: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from components import catalog
from components.errors import Issue
from components.models.network import NetworkConfig
from components.models.nodepool import Fabric, NodePoolSpec, Taint

Placement = Literal["cluster", "compact", "none"]
Provisioner = Literal["karpenter", "nodegroup", "gke"]


@dataclass(frozen=True, slots=True)
class Choice:
    """What a provider makes of what the pool's spec leaves open."""

    machine_fabric: Fabric
    """The machine's fastest fabric where the provider can build it; tcp when none is."""
    provisioner: Provisioner | None
    """What makes the pool's nodes; None on an existing cluster."""
    placement: Placement
    """The pool's placement: the spec's, else the provider's default."""


@dataclass(frozen=True, slots=True)
class Draft:
    """A pool part-way through resolution: its spec and what is decided of it, as a provider's checks read it."""

    spec: NodePoolSpec
    path: str
    """The pool's config path, e.g. nodePools[0]."""
    machine: catalog.MachineType | None
    gpu_model: str | None
    rack: int
    """The nodes one NVLink domain of the GPU model joins; 0 when NVLink stays inside the node."""
    machine_fabric: Fabric
    """The machine's fastest fabric where the provider can build it (Choice)."""
    fabric: Fabric
    """The pool's fabric: the spec's, else `machine_fabric`."""
    provisioner: Provisioner | None
    placement: Placement
    max_nodes: int


@dataclass(frozen=True, slots=True)
class Fit:
    """What a provider adds to a pool once its fabric fits: Pool fields of its own, node labels beside the stack's,
    and what stops the pool."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ProviderRules:
    """What one provider decides about its pools. Pool resolution calls these in this order; each returns issues in
    the order a user reads them, between the provider-neutral checks."""

    creates_pools: bool
    """The stack makes the pools' nodes (EKS, GKE); an existing cluster's nodes are found by their labels."""
    cluster_issues: Callable[[NetworkConfig, str | None], list[Issue]]
    """What stops the stack's network config on this provider at the cluster's Kubernetes version, once per stack."""
    typo: Callable[[NodePoolSpec, str, Collection[str]], Issue | None]
    """A machine type the catalog does not know and the stack does not vouch for: the one issue of the pool then."""
    machine: Callable[[NodePoolSpec, str], tuple[catalog.MachineType | None, list[Issue]]]
    """The catalog entry of the pool's type, and what is wrong with the keys that name it."""
    defaults: Callable[[NodePoolSpec, catalog.MachineType | None, int], Choice]
    """What the provider makes of the spec, given its machine and the nodes of its NVLink domain."""
    options: Callable[[Draft], list[Issue]]
    """How the pool's placement and capacity fit the provider."""
    scaling: Callable[[Draft], list[Issue]]
    """How the pool's nodes are made and kept fits the provider and its capacity."""
    fit: Callable[[Draft, NetworkConfig, str | None], Fit]
    """What the provider adds to the pool, and what stops it on the cluster's Kubernetes version."""
    taints: Callable[[NodePoolSpec, catalog.MachineType | None, bool], list[Taint]]
    """The pool's node taints; the flag says its nodes come through queued provisioning."""


def placement_issues(
    spec: NodePoolSpec, placement: str, path: str, *, provider: str, offers: str, allowed: tuple[str, ...]
) -> list[Issue]:
    """A placement other than those the provider `allowed` (what it `offers`, in words), or one that needs a zone
    the pool lacks."""
    if placement not in allowed:
        return [
            Issue(
                f"{path}.placement",
                f"'{placement}' does not apply here; {provider} offers {offers} ({' | '.join(allowed)})",
            )
        ]
    if placement != "none" and not spec.zone:
        return [Issue(f"{path}.zone", f"{placement} placement keeps the pool in one zone: set `zone`")]
    return []


def eks_provisioner_issue(path: str, instead: str) -> Issue:
    """`provisioner` on a pool EKS does not make, and what makes its nodes `instead`."""
    return Issue(f"{path}.provisioner", f"chooses how EKS makes a pool's nodes; {instead}")


def efa_dra_issues(network: NetworkConfig) -> list[Issue]:
    """EFA through DRA off EKS: its driver is the AWS EFA DRA driver."""
    if network.efa.mode != "dra":
        return []
    return [Issue("network.efa.mode", "dra installs the AWS EFA DRA driver on EKS; drop it, or use device-plugin")]


def capacity_block_issues(spec: NodePoolSpec, path: str) -> list[Issue]:
    """A Capacity Block pool that keeps nodes warm: its instances exist only while the block is active. Said on any
    provider that meets the type (the others refuse the type itself too)."""
    if spec.capacity.type == "capacity-block" and spec.min_nodes > 0:
        return [
            Issue(
                f"{path}.minNodes",
                "a Capacity Block's instances exist only while the block is active, so its pool starts empty: "
                "set minNodes: 0 (nodes come when jobs ask for them)",
            )
        ]
    return []


def profile_issues(spec: NodePoolSpec, fabric: str, path: str) -> list[Issue]:
    """acceleratorNetworkProfile: auto on a pool whose fabric is not GKE's rdma, on any provider."""
    if spec.accelerator_network_profile == "auto" and fabric != "rdma":
        return [
            Issue(f"{path}.acceleratorNetworkProfile", f"applies to GKE rdma pools; this pool's fabric is {fabric}")
        ]
    return []


def configured_taints(spec: NodePoolSpec, default: list[Taint]) -> list[Taint]:
    """The taints the pool states, else `default`."""
    return list(spec.taints) if spec.taints is not None else default
