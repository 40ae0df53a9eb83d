"""What a pool of an existing cluster may say: its nodes are there already, found by their labels, so nothing about
making them (machine key, placement, capacity, provisioner) applies.

Pure, no Pulumi (components/existing/__init__.py loads the component only when it is used): the existing cluster's
`ProviderRules` that pool resolution (components/pools.py) calls through components/providers.py. It belongs to the
pool layer and imports only what sits below it.
"""

from __future__ import annotations

from collections.abc import Collection

from components import catalog
from components.errors import Issue
from components.models.network import NetworkConfig
from components.models.nodepool import GPUDIRECT_FABRICS, NodePoolSpec, Taint, default_taints
from components.poolrules import (
    Choice,
    Draft,
    Fit,
    ProviderRules,
    capacity_block_issues,
    configured_taints,
    efa_dra_issues,
    eks_provisioner_issue,
    placement_issues,
    profile_issues,
)


def cluster_issues(network: NetworkConfig, kubernetes_version: str | None) -> list[Issue]:
    """EFA through DRA, which is EKS's."""
    return efa_dra_issues(network)


def typo(spec: NodePoolSpec, path: str, allow_unknown: Collection[str]) -> Issue | None:
    """None: an existing cluster's pool may name any type, catalogued or not."""
    return None


def machine(spec: NodePoolSpec, path: str) -> tuple[catalog.MachineType | None, list[Issue]]:
    """The catalog entry of the type the pool names, an AWS instance type or a GCP machine type, if any."""
    if spec.instance_type:
        return catalog.lookup("aws", spec.instance_type), []
    if spec.machine_type:
        return catalog.lookup("gcp", spec.machine_type), []
    return None, []


def defaults(spec: NodePoolSpec, machine: catalog.MachineType | None, rack: int) -> Choice:
    """The machine's fastest fabric but GPUDirect, which needs the GPU NIC networks a GKE stack makes; nothing makes
    the nodes here; no placement."""
    fabric = machine.fabric if machine and machine.fabric not in GPUDIRECT_FABRICS else "tcp"
    return Choice(machine_fabric=fabric, provisioner=None, placement=spec.placement or "none")


def options(draft: Draft) -> list[Issue]:
    """No placement and no capacity type: the pool is not created here."""
    spec, path = draft.spec, draft.path
    issues = placement_issues(
        spec,
        draft.placement,
        path,
        provider="existing",
        offers="nothing: pools of an existing cluster are not created here",
        allowed=("none",),
    )
    if spec.capacity.type != "on-demand":
        issues.append(
            Issue(f"{path}.capacity.type", "capacity applies to pools this stack creates, not an existing cluster's")
        )
    return issues


def scaling(draft: Draft) -> list[Issue]:
    """No provisioner: an existing cluster's nodes are not made here."""
    issues: list[Issue] = []
    if draft.spec.provisioner is not None:
        issues.append(eks_provisioner_issue(draft.path, "an existing cluster's nodes are not made here"))
    return issues + capacity_block_issues(draft.spec, draft.path)


def fit(draft: Draft, network: NetworkConfig, kubernetes_version: str | None) -> Fit:
    """Nothing of its own to add."""
    return Fit(issues=profile_issues(draft.spec, draft.fabric, draft.path))


def taints(spec: NodePoolSpec, machine: catalog.MachineType | None, queued: bool) -> list[Taint]:
    """The taints the pool states, else the GPU taint."""
    return configured_taints(spec, default_taints("existing"))


RULES = ProviderRules(
    creates_pools=False,
    cluster_issues=cluster_issues,
    typo=typo,
    machine=machine,
    defaults=defaults,
    options=options,
    scaling=scaling,
    fit=fit,
    taints=taints,
)
"""An existing cluster's rules for its pools."""
