"""Whether the GPU pods of a multi-node workload attach their nodes' GPU fabric.

A pod that does not still starts and trains: NCCL finds no fabric device and falls back to TCP sockets
over eth0 without an error, at a fraction of the bandwidth. The nodes' fabric comes from the pool the
pod selects (a stack's pools, a preview's node groups and node pools, Karpenter NodePools), else from
the machine type its node selector names; when neither tells, the rule says nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from components import catalog
from components.fabric import EFA_RESOURCE, GKE_INTERFACES_ANNOTATION, MULTUS_ANNOTATION
from components.gpudirect import DEFAULT_NETWORK
from components.models.nodepool import GPUDIRECT_FABRICS
from components.rules import devices as fabric_devices
from components.rules.pods import multi_node, resources, templates
from components.rules.podtemplate import GPU, PodTemplate, count
from components.rules.review import once
from components.rules.rule import Advice, Rule, Settings
from components.rules.subject import Subject
from components.wellknown import POOL_LABEL

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
"""The well-known node labels naming the instance (AWS) or machine (GKE) type."""
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
KARPENTER_POOL_LABEL = "karpenter.sh/nodepool"
RDMA_FABRICS = ("infiniband", "roce")
EFA_INTERFACE_TYPES = ("efa", "efa-only")
# The extra gVNIC of A3 Ultra / A4 (gvnic-1) carries no GPU traffic: it does not count as a GPU NIC.
_GVNIC_PREFIX = "gvnic-"


@dataclass(frozen=True, slots=True)
class Nodes:
    """What is known of the nodes a pod lands on: their GPU fabric and its devices per node."""

    fabric: str
    name: str
    """The pool or machine type, for messages."""
    gpus: int = 0
    """GPUs per node; 0 when unknown."""
    devices: int = 0
    """EFA devices (efa) or GPU NICs (GKE GPUDirect) per node; 0 when unknown."""
    networks: bool = True
    """InfiniBand / RoCE: pods attach Multus networks (a pool may hand out only the RDMA device)."""
    inferred: bool = False
    """Known from the machine type alone: the machine has the fabric, but whether its nodes were given it (EFA
    interfaces in the launch template, GPU NIC networks) is not known."""


def constraints(spec: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Per node label, the values a pod's nodeSelector and required node affinity allow."""
    selector = spec.get("nodeSelector")
    found = {str(k): frozenset([str(v)]) for k, v in selector.items()} if isinstance(selector, Mapping) else {}
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    terms = (affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    # Several terms are alternatives: no one of them binds the pod.
    if len(terms) == 1 and isinstance(terms[0], Mapping):
        for expression in terms[0].get("matchExpressions") or []:
            values = expression.get("values") if isinstance(expression, Mapping) else None
            if expression.get("operator") == "In" and isinstance(values, list) and values:
                key, allowed = str(expression.get("key")), frozenset(str(v) for v in values)
                found[key] = found[key] & allowed if key in found else allowed
    return found


def selects(constraints: Mapping[str, frozenset[str]], selector: Mapping[str, Any]) -> bool:
    """Whether a pod constrained so is held to nodes with this selector's labels."""
    return bool(selector) and all(str(v) in constraints.get(str(k), ()) for k, v in selector.items())


def _merge(found: list[Nodes]) -> Nodes | None:
    """The nodes a pod may land on, when they share one fabric (the fewest devices of them); else None."""
    if not found or len({n.fabric for n in found}) != 1:
        return None
    if len(found) == 1:
        return found[0]
    return Nodes(
        found[0].fabric,
        " or ".join(dict.fromkeys(n.name for n in found)),
        min(n.gpus for n in found),
        min(n.devices for n in found),
        all(n.networks for n in found),
        any(n.inferred for n in found),
    )


def _cloud_pools(subjects: Iterable[Subject]) -> Iterator[tuple[list[Any], Nodes]]:
    """The node pools of a stack or a preview, each with the selectors that pick its nodes."""
    for s in subjects:
        data = s.data
        fabric = data.get("fabric")
        if s.kind != "NodePool" or not isinstance(fabric, str):
            continue
        machine = data.get("machine_type")
        name = f"pool {s.key.split('/', 1)[-1]}" + (f" ({machine})" if machine else "")
        devices = data.get("efa_interfaces") if fabric == "efa" else data.get("gpu_nics")
        nodes = Nodes(fabric, name, count(data.get("gpus"), 0), count(devices, 0), bool(data.get("networks", True)))
        yield [x for x in data.get("selectors") or [] if isinstance(x, Mapping)], nodes


def _karpenter_pools(subjects: list[Subject]) -> Iterator[tuple[list[Any], Nodes]]:
    """Karpenter NodePools whose EC2NodeClass gives their nodes EFA interfaces."""
    classes = {
        (s.data.get("metadata") or {}).get("name"): s.data.get("spec") or {}
        for s in subjects
        if s.kind == "EC2NodeClass"
    }
    for s in subjects:
        if s.kind != "NodePool" or not str(s.data.get("apiVersion", "")).startswith("karpenter.sh/"):
            continue
        template = (s.data.get("spec") or {}).get("template") or {}
        spec = template.get("spec") or {}
        node_class = classes.get((spec.get("nodeClassRef") or {}).get("name")) or {}
        interfaces = node_class.get("networkInterfaces") or []
        efa = sum(isinstance(i, Mapping) and i.get("interfaceType") in EFA_INTERFACE_TYPES for i in interfaces)
        if not efa:
            continue
        types = next(
            (r.get("values") or [] for r in spec.get("requirements") or [] if r.get("key") in INSTANCE_TYPE_LABELS),
            [],
        )
        machines = [m for t in types if (m := catalog.lookup("aws", str(t)))]
        name = (s.data.get("metadata") or {}).get("name")
        labels = (template.get("metadata") or {}).get("labels") or {}
        selectors = [{KARPENTER_POOL_LABEL: name}, labels]
        if POOL_LABEL in labels:
            selectors.append({POOL_LABEL: labels[POOL_LABEL]})
        gpus = min((m.gpus for m in machines), default=0) if len(machines) == len(types) else 0
        title = f"pool {name}" + (f" ({', '.join(m.name for m in machines)})" if machines else "")
        yield selectors, Nodes("efa", title, gpus, efa)


def _machines(constraints: Mapping[str, frozenset[str]], gpus: int) -> Nodes | None:
    """The nodes the machine type or GKE accelerator a pod selects stands for, when the catalog knows it."""
    label = next((key for key in INSTANCE_TYPE_LABELS if key in constraints), None)
    if label is not None:
        machines = [catalog.lookup("aws", v) or catalog.lookup("gcp", v) for v in sorted(constraints[label])]
    elif GKE_ACCELERATOR_LABEL in constraints:
        # An accelerator comes in machines of 1 to 8 GPUs, and only the 8-GPU ones have GPU NICs: the
        # pod's own GPU count tells which it can land on.
        wanted = constraints[GKE_ACCELERATOR_LABEL]
        machines = [
            m
            for n in catalog.names("gcp")
            if (m := catalog.lookup("gcp", n)) and m.accelerator_type in wanted and m.gpus >= gpus
        ]
    else:
        return None
    if not machines or any(m is None for m in machines):
        return None
    return _merge(
        [
            Nodes(m.fabric, m.name, m.gpus, m.efa_interfaces if m.fabric == "efa" else m.gpu_nics, inferred=True)
            for m in machines
            if m is not None
        ]
    )


@once
def _pools(
    subjects: list[Subject], read: Callable[[list[Subject]], Iterator[tuple[list[Any], Nodes]]]
) -> list[tuple[list[Any], Nodes]]:
    """The pools `read` finds among the subjects, read once per review."""
    return list(read(subjects))


def nodes_of(t: PodTemplate, subjects: list[Subject]) -> Nodes | None:
    """The nodes a pod template lands on, as far as the subjects or the catalog tell; None when unknown."""
    wanted = constraints(t.spec)
    for source in (_pools(subjects, _cloud_pools), _pools(subjects, _karpenter_pools)):
        found = [nodes for selectors, nodes in source if any(selects(wanted, s) for s in selectors)]
        if found:
            return _merge(list(dict.fromkeys(found)))
    return _machines(wanted, t.gpus)


def _share(nodes: Nodes, gpus: int) -> int:
    """The devices a pod with `gpus` GPUs gets of its node's: all of them, or its GPUs' share."""
    if nodes.gpus and 0 < gpus < nodes.gpus:
        return math.ceil(nodes.devices * gpus / nodes.gpus)
    return nodes.devices


def _gpu_containers(t: PodTemplate) -> list[dict[str, Any]]:
    return [c for c in t.spec.get("containers", []) if count(resources(c).get(GPU), 0)]


def _efa(t: PodTemplate, nodes: Nodes) -> Iterator[str]:
    if t.spec.get("resourceClaims"):
        return  # the AWS EFA DRA driver: a resource claim attaches the EFA devices
    for c in _gpu_containers(t):
        where = f"{t.role}/{c.get('name')}"
        requested = resources(c)
        if EFA_RESOURCE in requested and requested[EFA_RESOURCE] is None:
            continue  # known only after the update (a preview)
        have = count(requested.get(EFA_RESOURCE), 0)
        want = _share(nodes, count(requested.get(GPU), 0))
        if not have:
            devices = f"the {want} EFA devices" if want else "the EFA devices"
            yield (
                f"{where}: requests no {EFA_RESOURCE}, so it attaches none of {devices} of {nodes.name} "
                "and NCCL falls back to TCP sockets"
            )
        elif have < want:
            yield f"{where}: attaches {have} of {want} EFA devices of {nodes.name}; NCCL uses only those"


def _pods(t: PodTemplate) -> str:
    """How messages name a template's pods: by role, or plainly for a workload of one template."""
    return "pods" if t.role == "pod" else f"{t.role} pods"


def _unknown(t: PodTemplate, annotation: str) -> bool:
    """Whether a preview knows the annotation's value only after the update."""
    return annotation in t.annotations and not isinstance(t.annotations[annotation], str)


def _rdma(t: PodTemplate, nodes: Nodes, devices: tuple[frozenset[str], bool]) -> Iterator[str]:
    if nodes.networks and not t.multus_networks() and not _unknown(t, MULTUS_ANNOTATION):
        yield (
            f"{_pods(t)} attach no {nodes.fabric} network of {nodes.name} (no {MULTUS_ANNOTATION} annotation); "
            "NCCL finds no RDMA interface and falls back to TCP sockets"
        )
    for c in _gpu_containers(t):
        where = f"{t.role}/{c.get('name')}"
        disabled = t.env(c).get("NCCL_IB_DISABLE")
        if disabled == "1":
            yield f"{where}: NCCL_IB_DISABLE=1 turns the {nodes.fabric} fabric off; NCCL uses TCP sockets"
        # With NCCL_IB_DISABLE=0, rdma-devices already reports a missing device.
        elif disabled != "0" and fabric_devices.requests_device(resources(c), *devices) is False:
            yield f"{where}: requests no RDMA device resource, so NCCL sees no HCA and falls back to TCP sockets"


def _gpudirect(t: PodTemplate, nodes: Nodes) -> Iterator[str]:
    if t.spec.get("resourceClaims") or _unknown(t, GKE_INTERFACES_ANNOTATION):
        return  # GKE DRANET: resource claims attach the GPU NICs; or a preview knows the annotation only later
    want = _share(nodes, t.gpus)
    nics = f"{want} GPU NICs ({nodes.fabric})" if want else f"GPU NICs ({nodes.fabric})"
    listed = t.gke_interfaces()
    if GKE_INTERFACES_ANNOTATION not in t.annotations:
        yield (
            f"{_pods(t)} attach none of the {nics} of {nodes.name}: no {GKE_INTERFACES_ANNOTATION} annotation "
            "or DRA resource claim, so NCCL falls back to TCP over eth0"
        )
        return
    if listed is None:
        yield f"{_pods(t)}: {GKE_INTERFACES_ANNOTATION} is not a JSON list, so GKE attaches none of the {nics}"
        return
    networks = {n for _, n in listed if n and n != DEFAULT_NETWORK and not n.startswith(_GVNIC_PREFIX)}
    if not networks:
        yield (
            f"{_pods(t)} attach none of the {nics} of {nodes.name}: {GKE_INTERFACES_ANNOTATION} lists only "
            "eth0, so NCCL falls back to TCP over eth0"
        )
    elif len(networks) < want:
        yield f"{_pods(t)} attach {len(networks)} of {nics} of {nodes.name}; NCCL uses only those"


def fabric_attached(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """GPU pods of multi-node jobs attach their nodes' GPU fabric (EFA, InfiniBand/RoCE, GKE GPUDirect), not TCP."""
    if not multi_node(subject.data, subjects):
        return
    for t in templates(subject.data, subjects):
        if not t.gpus or t.partial or t.spec.get("hostNetwork"):
            continue  # a host-network pod sees every NIC of its node; a TrainJob's alone its runtime's fabric
        nodes = nodes_of(t, subjects)
        if nodes is None or nodes.fabric == "tcp":
            continue
        found: list[str] = [
            f"{t.role}/{c.get('name')}: NCCL_NET=Socket makes NCCL use TCP sockets, not {nodes.fabric}"
            for c in _gpu_containers(t)
            if t.env(c).get("NCCL_NET", "").lower() == "socket"
        ]
        if nodes.fabric == "efa":
            found += _efa(t, nodes)
        elif nodes.fabric in RDMA_FABRICS:
            found += _rdma(t, nodes, fabric_devices.known(subjects))
        elif nodes.fabric in GPUDIRECT_FABRICS:
            found += _gpudirect(t, nodes)
        # Known from the machine type alone, the nodes may have been built without their fabric: advice.
        yield from (Advice(f"{m}, if its nodes were built with it") for m in found) if nodes.inferred else found


RULES: tuple[Rule, ...] = (
    Rule(
        "fabric-attached",
        "critical",
        "mandatory",
        (fabric_attached.__doc__ or "").strip(),
        "attach the pool's fabric as a TrainingJob on the pool does: request every EFA device "
        f"({EFA_RESOURCE}); InfiniBand/RoCE: list the networks in {MULTUS_ANNOTATION} and request the RDMA "
        f"device; GKE GPUDirect: list every GPU NIC network in {GKE_INTERFACES_ANNOTATION} (or claim them with DRA)",
        ("*",),
        fabric_attached,
        gpu_only=True,
    ),
)
