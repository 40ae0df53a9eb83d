"""Subjects for the rules: from Kubernetes objects, from a validated stack, and from a preview's resources."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from components import catalog
from components.fabric import EFA_RESOURCE
from components.pool import Pool
from components.repair import EKS_AGENT_ADDON
from components.rules.subject import Subject
from components.wellknown import POOL_LABEL

# Pulumi resource types of the clouds' GPU pools and file systems, as a preview names them.
AWS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AWS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_ADDON = "aws:eks/addon:Addon"
GKE_NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
"""The label GKE puts on every node of a node pool, with the pool's name."""
KARPENTER_POOL_LABEL = "karpenter.sh/nodepool"
"""The label Karpenter puts on the nodes it makes, with their NodePool's name."""
FILE_SYSTEMS = (
    "aws:efs/fileSystem:FileSystem",
    "aws:fsx/lustreFileSystem:LustreFileSystem",
    "gcp:filestore/instance:Instance",
    "gcp:lustre/instance:Instance",
    "aws:s3/bucket:Bucket",
    "gcp:storage/bucket:Bucket",
)
"""The Pulumi types of the file systems and buckets that hold checkpoints and data."""


def object_key(obj: Mapping[str, Any]) -> str:
    """`Kind/namespace/name` (`Kind/name` when cluster-scoped); a `generateName` prefix ends in `*`."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    name = meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "(unnamed)")
    namespace = meta.get("namespace")
    return f"{obj.get('kind')}/{namespace}/{name}" if namespace else f"{obj.get('kind')}/{name}"


def from_objects(
    objects: Iterable[Mapping[str, Any]], *, source: str | None = None, duplicates: Sequence[Sequence[str]] = ()
) -> list[Subject]:
    """A subject per Kubernetes object (a map with a string kind and metadata); from a file, with the keys its
    YAML document states twice (`duplicates`, per object, in order)."""
    out: list[Subject] = []
    for n, o in enumerate(objects):
        if isinstance(o, Mapping) and isinstance(o.get("kind"), str) and isinstance(o.get("metadata"), Mapping):
            doubled = tuple(duplicates[n]) if n < len(duplicates) else ()
            # A dict is read as it is (no rule changes a subject): a review's reads of an object before the rules
            # (the pods' fit, the DaemonSets' overhead) are then the rules' too.
            data = o if type(o) is dict else dict(o)
            out.append(Subject(object_key(o), o["kind"], data, source=source, duplicate_keys=doubled))
    return out


def _kubernetes_object(resource_type: str, props: dict[str, Any]) -> dict[str, Any]:
    """A preview's Kubernetes resource as its object; the kind and apiVersion, when its properties lack them,
    from the type (`kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob`, `kubernetes:core/v1:Pod`)."""
    _, api_version, kind = [*resource_type.split(":", 2), "", ""][:3]
    api_version = api_version.removeprefix("core/")
    return {**props, "kind": props.get("kind") or kind, "apiVersion": props.get("apiVersion") or api_version}


def from_pools(pools: Iterable[Pool], repairs: Mapping[str, str | None] | None = None) -> list[Subject]:
    """A NodePool subject per resolved pool: what the cloud side builds from it, or an existing cluster's; with
    `repairs`, what finds and repairs each pool's faults (None: nothing)."""
    return [
        Subject(
            f"NodePool/{p.name}",
            "NodePool",
            {
                "gpus": p.gpus_per_node,
                "taints": [t.model_dump() for t in p.taints],
                "efa": p.fabric == "efa",
                "placement_group": p.placement != "none",
                "reserved": p.capacity in ("reservation", "capacity-block"),
                "zones": 1 if p.zone else None,
                "existing": p.provider == "existing",
                "fabric": p.fabric,
                "machine_type": p.machine_type,
                "efa_interfaces": p.efa_interfaces,
                "gpu_nics": p.gpu_nics,
                "networks": len(p.networks),
                "selectors": _pool_selectors(p),
                "rdma_advice": p.rdma_advice(),
                "device_resources": _device_resources(p),
                "nvlink_domain_nodes": p.nvlink_domain_nodes,
                "provisioner": p.provisioner,
                **({"repair": repairs.get(p.name)} if repairs is not None else {}),
            },
        )
        for p in pools
    ]


def _device_resources(pool: Pool) -> list[str]:
    """The fabric device resources the pool's nodes advertise: EFA, the RDMA shared device plugin's, the
    SR-IOV pools of its networks."""
    found = [EFA_RESOURCE] if pool.fabric == "efa" else []
    found += [pool.rdma_resource] if pool.rdma_resource else []
    return found + [n.resource_name for n in pool.networks if n.resource_name]


def _pool_selectors(pool: Pool) -> list[dict[str, str]]:
    """The node selectors that pick the pool's nodes: the one jobs use, and the provisioner's own label."""
    found = [dict(pool.node_selector)] if pool.node_selector else []
    if pool.provider == "gcp":
        found.append({GKE_NODE_POOL_LABEL: pool.name})
    elif pool.provisioner == "karpenter":
        found.append({KARPENTER_POOL_LABEL: pool.name})
    return found


def _label_selectors(labels: Any, **own: Any) -> list[dict[str, str]]:
    """The selectors of a preview's pool: our pool label among its node labels, and its provider's own."""
    found = [{POOL_LABEL: labels[POOL_LABEL]}] if isinstance(labels, Mapping) and labels.get(POOL_LABEL) else []
    return found + [{k: v} for k, v in own.items() if isinstance(v, str) and v]


def from_resources(resources: Iterable[Any]) -> list[Subject]:
    """Subjects from a preview's resources (objects with resource_type, props, urn, name, opts)."""
    resources = list(resources)
    agent = _health_agent(resources)
    templates = {r.urn: r.props for r in resources if r.resource_type == AWS_LAUNCH_TEMPLATE}
    by_id = {r.props.get("id"): r.props for r in resources if r.resource_type == AWS_LAUNCH_TEMPLATE}
    out: list[Subject] = []
    for r in resources:
        props = dict(r.props)
        if r.resource_type.startswith("kubernetes:"):
            for subject in from_objects([_kubernetes_object(r.resource_type, props)]):
                out.append(Subject(subject.key, subject.kind, subject.data, r.urn))
                if subject.kind in ("PersistentVolumeClaim", "PersistentVolume"):
                    protected = bool(r.opts.protect)
                    out.append(
                        Subject(subject.key, "FileSystem", {"type": subject.kind, "protected": protected}, r.urn)
                    )
        elif r.resource_type == AWS_NODE_GROUP:
            template = _launch_template(props, r, templates, by_id)
            interfaces = template.get("networkInterfaces") or []
            efa = sum(isinstance(i, Mapping) and i.get("interfaceType") in ("efa", "efa-only") for i in interfaces)
            instance_type = template.get("instanceType") or next(iter(props.get("instanceTypes") or []), None)
            machine = catalog.lookup("aws", instance_type) if isinstance(instance_type, str) else None
            gpu_ami = str(props.get("amiType", "")).endswith("NVIDIA")
            out.append(
                Subject(
                    f"NodeGroup/{r.name}",
                    "NodePool",
                    {
                        "gpus": (machine.gpus if machine else 1) if gpu_ami else 0,
                        "taints": props.get("taints") or [],
                        "efa": bool(efa),
                        "placement_group": bool((template.get("placement") or {}).get("groupName")),
                        "reserved": bool(template.get("capacityReservationSpecification")),
                        "zones": len(props.get("subnetIds") or []) or None,
                        "fabric": "efa" if efa else "tcp",
                        "machine_type": instance_type,
                        "efa_interfaces": efa,
                        "nvlink_domain_nodes": machine.nvlink_domain_nodes if machine else 0,
                        "provisioner": "nodegroup",
                        "selectors": _label_selectors(props.get("labels")),
                        "repair": _node_group_repair(props, agent),
                    },
                    r.urn,
                )
            )
        elif r.resource_type == GKE_NODE_POOL:
            config = props.get("nodeConfig") or {}
            machine_type = config.get("machineType")
            machine = catalog.lookup("gcp", machine_type) if isinstance(machine_type, str) else None
            # GPUDirect needs the GPU NIC networks on the nodes: attached one by one, or made by GKE's
            # accelerator network profile. Without them the pool is tcp.
            network = props.get("networkConfig") or {}
            nics = network.get("additionalNodeNetworkConfigs") or network.get("acceleratorNetworkProfile") == "auto"
            fabric = machine.gpudirect if machine and machine.gpudirect and nics else "tcp"
            out.append(
                Subject(
                    f"NodePool/{r.name}",
                    "NodePool",
                    {
                        "gpus": sum(int(a.get("count", 0)) for a in config.get("guestAccelerators") or []),
                        "taints": config.get("taints") or [],
                        "efa": False,
                        "placement_group": True,
                        "zones": 1,
                        "fabric": fabric,
                        "machine_type": machine_type,
                        "gpu_nics": machine.gpu_nics if machine and fabric != "tcp" else 0,
                        "nvlink_domain_nodes": machine.nvlink_domain_nodes if machine else 0,
                        "selectors": _label_selectors(config.get("labels"), **{GKE_NODE_POOL_LABEL: props.get("name")}),
                        "repair": "GKE node auto-repair"
                        if (props.get("management") or {}).get("autoRepair")
                        else agent,
                    },
                    r.urn,
                )
            )
        elif r.resource_type in FILE_SYSTEMS:
            out.append(
                Subject(
                    f"{r.resource_type.rsplit(':', 1)[-1]}/{r.name}",
                    "FileSystem",
                    {"type": r.resource_type, "protected": bool(r.opts.protect)},
                    r.urn,
                )
            )
    return out


def _launch_template(props: dict[str, Any], resource: Any, templates: dict[str, Any], by_id: dict[Any, Any]) -> Any:
    wanted = (props.get("launchTemplate") or {}).get("id")
    if wanted in by_id:
        return by_id[wanted]
    # In a preview the id is unknown: the template is the one the node group depends on.
    for dependency in getattr(resource, "dependencies", []) or []:
        if dependency.urn in templates:
            return templates[dependency.urn]
    return {}


def _health_agent(resources: list[Any]) -> str | None:
    """The cluster-wide fault detector a preview makes: NVSentinel's Helm release, or the EKS node monitoring agent
    add-on (which alone only detects: a node group acts on it with its own repair config)."""
    for r in resources:
        if r.resource_type.endswith(":Release") and str(r.props.get("chart", "")).rstrip("/").endswith("nvsentinel"):
            return "NVSentinel"
    for r in resources:
        if r.resource_type == EKS_ADDON and r.props.get("addonName") == EKS_AGENT_ADDON:
            return EKS_AGENT_ADDON
    return None


def _node_group_repair(props: dict[str, Any], agent: str | None) -> str | None:
    """What repairs a managed node group's faults: its auto repair on the agent's conditions, or NVSentinel."""
    if agent == "NVSentinel":
        return agent
    enabled = bool((props.get("nodeRepairConfig") or {}).get("enabled"))
    if enabled and agent == EKS_AGENT_ADDON:
        return "EKS node auto repair on the node monitoring agent's conditions"
    return None


def _gke_repair(props: dict[str, Any], agent: str | None) -> str | None:
    """What repairs a GKE node pool's faults: its auto-repair, or NVSentinel."""
    return "GKE node auto-repair" if (props.get("management") or {}).get("autoRepair") else agent
