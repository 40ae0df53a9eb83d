"""A stack's node pools resolved against the catalog, the network config and their provider's rules.

Resolution here is the same for every provider; what one provider alone knows (its machine key, defaults,
placement, capacity, scaling and version rules) comes from its rules through components/providers.py."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from components import catalog, fabricfit, providers, provisioning
from components.errors import Issue
from components.models.network import NetworkConfig, plugin_interfaces
from components.models.nodepool import NODE_CHECK_TAINT, CapacitySpec, NodePoolSpec
from components.podnetworks import PodNetwork, exposed_interfaces, pod_networks, rail_fields, rdma_resource
from components.pool import SYSTEM_POOL, Pool, Provider
from components.poolrules import Draft, Fit, ProviderRules
from components.wellknown import GPU_PRESENT_LABEL, NODE_CHECK_KEY, POOL_LABEL


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
    rules = providers.rules(provider)
    lone = gpu_labels and not rules.creates_pools and len(pools) == 1
    # The shared device plugin has one selector for the whole cluster.
    plugin = plugin_interfaces(network.rdma, network.networks, [n for p in pools for n in p.rail_networks()])
    resolved: dict[str, Pool] = {}
    issues: list[Issue] = rules.cluster_issues(network, kubernetes_version)
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
            rules=rules,
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
    rules: ProviderRules,
    max_nodes: int,
    kubernetes_version: str | None = None,
    plugin_interfaces: list[str] | None = None,
    allow_unknown: Collection[str] = (),
) -> tuple[Pool | None, list[Issue]]:
    """The pool, or None and what stops it: the provider's rules and the neutral checks, in the order a user reads
    them. `plugin_interfaces`: the shared device plugin's ifNames across the stack (empty: it exposes every Mellanox
    device). `rules`: the provider's."""
    typo = rules.typo(spec, path, allow_unknown)
    if typo is not None:
        return None, [typo]  # every other fact of the pool is the catalog's: nothing else can be judged
    capacity = provisioning.capacity(spec, provider)
    if capacity != spec.capacity.type:
        spec = spec.model_copy(update={"capacity": CapacitySpec(type=capacity)})
    machine, issues = rules.machine(spec, path)
    gpus, found = _gpus(spec, machine, rules.creates_pools, path)
    issues += found + _allocatable_issues(spec, machine, rules.creates_pools, path)
    if spec.zone and region and not spec.zone.startswith(region):
        issues.append(Issue(f"{path}.zone", f"zone '{spec.zone}' is not in the cluster's region '{region}'"))
    draft = _draft(spec, rules, machine, path, max_nodes)
    unfit = fabricfit.issues(spec, provider, draft.fabric, machine, path)
    if unfit:
        return None, [*issues, *unfit]  # what follows from the fabric (RDMA devices, rails) would only echo it

    issues += rules.options(draft) + _selection_issues(spec, rules.creates_pools, path) + rules.scaling(draft)
    issues += _storage_issues(spec, machine, rules.creates_pools, path)
    provisioning_class, found = provisioning.resolve(spec, provider, draft.provisioner, path)
    fit = rules.fit(draft, network, kubernetes_version)
    issues += found + fit.issues + _nvlink_issues(draft)
    networks = pod_networks(spec, network, draft.fabric, path, issues)
    rails = rail_fields(spec, draft.fabric, networks, machine=machine, path=path, issues=issues)
    resource = rdma_resource(network, draft.fabric, networks, path, issues)
    if issues or gpus is None:
        return None, issues
    pool = _pool(
        draft,
        provider=provider,
        rules=rules,
        network=network,
        gpus=gpus,
        provisioning_class=provisioning_class,
        fit=fit,
        networks=networks,
        rdma_resource=resource,
        exposed=exposed_interfaces(spec, network, resource, plugin_interfaces),
    )
    return pool.model_copy(update=rails), []


def _draft(
    spec: NodePoolSpec, rules: ProviderRules, machine: catalog.MachineType | None, path: str, max_nodes: int
) -> Draft:
    """What the pool's GPU model, its NVLink rack and the provider's defaults make of the spec."""
    gpu_model = spec.gpu_model or (machine.gpu_model if machine else None)
    rack = catalog.nvlink_domain_nodes(gpu_model)
    choice = rules.defaults(spec, machine, rack)
    return Draft(
        spec=spec,
        path=path,
        machine=machine,
        gpu_model=gpu_model,
        rack=rack,
        machine_fabric=choice.machine_fabric,
        fabric=spec.fabric or choice.machine_fabric,
        provisioner=choice.provisioner,
        placement=choice.placement,
        max_nodes=max_nodes,
    )


def _pool(
    draft: Draft,
    *,
    provider: Provider,
    rules: ProviderRules,
    network: NetworkConfig,
    gpus: int,
    provisioning_class: str | None,
    fit: Fit,
    networks: list[PodNetwork],
    rdma_resource: str | None,
    exposed: list[str],
) -> Pool:
    """The resolved pool: what follows from its spec, machine and draft whatever the provider, and what the
    provider's fit adds."""
    spec, machine, fabric = draft.spec, draft.machine, draft.fabric
    return Pool(
        name=spec.name,
        provider=provider,
        machine_type=spec.instance_type or spec.machine_type,
        gpus_per_node=gpus,
        gpu_model=draft.gpu_model,
        accelerator_type=spec.accelerator_type or (machine.accelerator_type if machine else None),
        max_nodes=draft.max_nodes,
        min_nodes=spec.min_nodes,
        provisioner=draft.provisioner,
        local_storage=_local_storage(spec, machine, rules.creates_pools),
        capacity=spec.capacity.type,
        provisioning_retries=spec.queued_provisioning.retries,
        vcpus=machine.vcpus if machine else None,
        memory_gib=machine.memory_gib if machine else None,
        allocatable_cpu=spec.allocatable.cpu,
        allocatable_memory=spec.allocatable.memory,
        zone=spec.zone,
        placement=draft.placement,
        startup_taints=[NODE_CHECK_TAINT] if spec.node_check.enabled else [],
        node_selector={POOL_LABEL: spec.name} if rules.creates_pools else dict(spec.node_selector),
        fabric=fabric,
        machine_fabric=draft.machine_fabric,
        # A fabric this stack cannot build here (GPUDirect off GKE) has no bandwidth to account for.
        fabric_gbps=machine.fabric_gbps if machine and draft.machine_fabric == machine.fabric else 0,
        efa_interfaces=machine.efa_interfaces if fabric == "efa" and machine else 0,
        efa_gpudirect=bool(machine and machine.gpudirect_rdma) if fabric == "efa" else False,
        efa_dra=fabric == "efa" and network.efa.mode == "dra",
        ib_hca=network.rdma.hca,
        arch=machine.arch if machine else "x86_64",
        nvlink_domain_nodes=spec.nvlink_domain_nodes or draft.rack,
        provisioning_class=provisioning_class,
        taints=rules.taints(spec, machine, provisioning_class is not None),
        labels=_labels(spec, rules.creates_pools) | fit.labels,
        networks=networks,
        rdma_resource=rdma_resource,
        rdma_interfaces=exposed,
        **fit.fields,
    )


def _gpus(
    spec: NodePoolSpec, machine: catalog.MachineType | None, creates_pools: bool, path: str
) -> tuple[int | None, list[Issue]]:
    """The pool's GPUs per node: the catalog's for a known machine, else the spec's; and a count that contradicts
    the catalog or is missing."""
    gpus = spec.gpus_per_node
    if machine is not None:
        if gpus is not None and gpus != machine.gpus:
            return machine.gpus, [
                Issue(
                    f"{path}.gpusPerNode",
                    f"{machine.name} has {machine.gpus} GPUs per node, not {gpus}; drop gpusPerNode to derive it",
                )
            ]
        return machine.gpus, []
    if gpus is None:
        known = "a type in the catalog or " if creates_pools else ""
        return None, [Issue(f"{path}.gpusPerNode", f"is required: name {known}the GPUs per node of this pool")]
    return gpus, []


def _allocatable_issues(
    spec: NodePoolSpec, machine: catalog.MachineType | None, creates_pools: bool, path: str
) -> list[Issue]:
    """An allocatable figure stated for a catalogued machine of a pool this stack creates."""
    stated = [key for key in ("cpu", "memory") if getattr(spec.allocatable, key) is not None]
    if not (stated and machine is not None and creates_pools):
        return []
    return [
        Issue(
            f"{path}.allocatable",
            f"{machine.name}'s nodes advertise what the catalog and the provider's kubelet settings say: drop "
            f"allocatable.{' and allocatable.'.join(stated)} (it is for machines the catalog does not know)",
        )
    ]


def _selection_issues(spec: NodePoolSpec, creates_pools: bool, path: str) -> list[Issue]:
    """How jobs find the pool's nodes: by the pool label of a pool this stack creates (under a name other than the
    add-on pool's), by the node selector of an existing cluster's pool."""
    issues: list[Issue] = []
    if creates_pools and spec.name == SYSTEM_POOL:
        issues.append(Issue(f"{path}.name", f"'{SYSTEM_POOL}' is the add-on pool the cluster makes; choose another"))
    if not creates_pools and not spec.node_selector:
        issues.append(
            Issue(
                f"{path}.nodeSelector",
                "is required on an existing cluster with several pools (or without the GPU Operator): the labels "
                "of this pool's nodes, e.g. {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}",
            )
        )
    if creates_pools and spec.node_selector:
        issues.append(
            Issue(
                f"{path}.nodeSelector",
                f"is for existing clusters; this stack labels its pools {POOL_LABEL}={spec.name}",
            )
        )
    return issues


def _storage_issues(
    spec: NodePoolSpec, machine: catalog.MachineType | None, creates_pools: bool, path: str
) -> list[Issue]:
    """RAID0 over local disks the machine lacks, and local storage on nodes this stack does not make."""
    issues: list[Issue] = []
    if spec.local_storage == "raid0" and not (machine and machine.local_storage_gb):
        name = spec.instance_type or spec.machine_type or "this machine"
        issues.append(
            Issue(f"{path}.localStorage", f"{name} has no local disks in the catalog: set localStorage: none")
        )
    if spec.local_storage is not None and not creates_pools:
        issues.append(Issue(f"{path}.localStorage", "applies to pools this stack creates, not an existing cluster's"))
    return issues


def _local_storage(spec: NodePoolSpec, machine: catalog.MachineType | None, creates_pools: bool) -> bool:
    """Whether the machine's local disks hold the container runtime and pods' ephemeral storage (RAID0): as the pool
    says, else wherever the stack makes nodes with local disks."""
    local_disks = bool(machine and machine.local_storage_gb) and creates_pools
    return (spec.local_storage or ("raid0" if local_disks else "none")) == "raid0"


def _nvlink_issues(draft: Draft) -> list[Issue]:
    """An NVLink domain stated for a GPU whose NVLink stays inside the node, or larger than its rack."""
    spec, gpu_model, rack, path = draft.spec, draft.gpu_model, draft.rack, draft.path
    if spec.nvlink_domain_nodes is not None and not rack:
        return [
            Issue(
                f"{path}.nvlinkDomainNodes",
                f"applies to rack-scale NVLink pools (GB200, GB300); {gpu_model or 'this pool'}'s NVLink stays "
                "inside the node: drop it",
            )
        ]
    if spec.nvlink_domain_nodes is not None and spec.nvlink_domain_nodes > rack:
        return [
            Issue(
                f"{path}.nvlinkDomainNodes",
                f"{spec.nvlink_domain_nodes} nodes, but one {gpu_model} NVLink domain holds at most {rack}",
            )
        ]
    return []


def _labels(spec: NodePoolSpec, creates_pools: bool) -> dict[str, str]:
    """The node labels the pool's nodes carry: its own, and on pools this stack creates the pool label and, with the
    node check on, the label that says a node must pass it."""
    if not creates_pools:
        return dict(spec.labels)
    labels = {**spec.labels, POOL_LABEL: spec.name}
    if spec.node_check.enabled:
        labels[NODE_CHECK_KEY] = "required"  # existing clusters' nodes register with it (docs/health.md)
    return labels
