"""Rack-scale NVLink (GB200 / GB300 NVL72): a multi-node job shares a ComputeDomain, fits its NVLink domain, and its
pool is made by something that runs DRA.

Without a ComputeDomain's IMEX channel, pods on two machines of one NVLink domain cannot map each other's memory and
NCCL's NVLS setup fails ("Cuda failure 801"); a job held to one domain with more pods than the domain has nodes never
starts; and Karpenter (and EKS Auto Mode) do not support DRA, which the channel claims need (EKS user guide,
ml-eks-nvidia-ultraserver).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components import catalog, nvlink
from components.manifests.pod import GPU_RESOURCE
from components.rules.attachment import constraints, selects
from components.rules.pods import resources, templates
from components.rules.podtemplate import PodTemplate
from components.rules.review import once
from components.rules.rule import Rule, Settings
from components.rules.subject import Subject
from components.rules.trainjobs import RUNTIME_KINDS

KARPENTER_NODEPOOL = "NodePool"
_INSTANCE_KEYS = ("node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family")


@once
def _rack_pools(subjects: list[Subject]) -> list[tuple[str, int, list[Mapping[str, Any]]]]:
    """The rack-scale pools among the subjects: name, nodes per NVLink domain, the selectors that pick their
    nodes."""
    found = []
    for s in subjects:
        domain = s.data.get("nvlink_domain_nodes") if s.kind == "NodePool" else None
        if isinstance(domain, int) and domain > 0:
            selectors = [x for x in s.data.get("selectors") or [] if isinstance(x, Mapping)]
            found.append((s.key.split("/", 1)[-1], domain, selectors))
    return found


def _gpu_templates(subject: Subject, subjects: list[Subject]) -> list[PodTemplate]:
    return [t for t in templates(subject.data, subjects) if any(GPU_RESOURCE in resources(c) for c in t.containers)]


def _pool_of(t: PodTemplate, pools: list[tuple[str, int, list[Mapping[str, Any]]]]) -> tuple[str, int] | None:
    allowed = constraints(t.spec)
    return next(
        ((name, domain) for name, domain, selectors in pools if any(selects(allowed, s) for s in selectors)), None
    )


def _channel_templates(subjects: list[Subject]) -> set[tuple[str, str]]:
    """(namespace, ResourceClaimTemplate) of every ComputeDomain's channel among the subjects."""
    found = set()
    for s in subjects:
        if s.kind != nvlink.KIND:
            continue
        meta = s.data.get("metadata") or {}
        name = (((s.data.get("spec") or {}).get("channel") or {}).get("resourceClaimTemplate") or {}).get("name")
        if name:
            found.add((str(meta.get("namespace") or "default"), str(name)))
    return found


def compute_domain(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """A job whose GPU pods span several machines of a rack-scale NVLink pool claims its ComputeDomain's IMEX
    channel in every one of them. A training runtime is judged through its TrainJobs: each claims its own
    ComputeDomain's channel in its runtime patch, which the shared runtime cannot name."""
    if subject.kind in RUNTIME_KINDS:
        return
    pools = _rack_pools(subjects)
    gpu = _gpu_templates(subject, subjects)
    if not pools or sum(t.replicas for t in gpu) < 2:
        return
    channels = _channel_templates(subjects)
    namespace = str((subject.data.get("metadata") or {}).get("namespace") or "default")
    for t in gpu:
        pool = _pool_of(t, pools)
        if pool is None:
            continue
        claimed = {
            str(c.get("resourceClaimTemplateName"))
            for c in t.spec.get("resourceClaims") or []
            if isinstance(c, Mapping) and c.get("resourceClaimTemplateName")
        }
        if not any((namespace, name) in channels for name in claimed):
            yield (
                f"{t.role} pods on rack-scale NVLink pool '{pool[0]}' claim no ComputeDomain's channel: across "
                "machines NCCL's NVLS setup fails (Cuda failure 801), or the job runs over the network"
            )


def domain_size(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """A job held to one NVLink domain (pod affinity on its clique, or Kueue's required topology of it) has no more
    GPU pods than the domain has nodes."""
    pools = _rack_pools(subjects)
    if not pools:
        return
    held = []
    for t in _gpu_templates(subject, subjects):
        affinity = ((t.spec.get("affinity") or {}).get("podAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        ) or []
        kueue = t.annotations.get("kueue.x-k8s.io/podset-required-topology") == nvlink.CLIQUE_LABEL
        if kueue or any(isinstance(a, Mapping) and a.get("topologyKey") == nvlink.CLIQUE_LABEL for a in affinity):
            held.append(t)
    pods = sum(t.replicas for t in held)
    for t in held:
        pool = _pool_of(t, pools)
        if pool is not None and pods > pool[1]:
            yield (
                f"{pods} GPU pods are held to one NVLink domain of pool '{pool[0]}', which joins {pool[1]} nodes: "
                "they never all start"
            )
            return


def karpenter_dra(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """Rack-scale NVLink machines (p6e-gb200, p6e-gb300) are not made by Karpenter: their jobs' IMEX channels are
    DRA claims, which Karpenter does not support."""
    data = subject.data
    if subject.kind == "NodePool" and data.get("provisioner") == "karpenter" and data.get("nvlink_domain_nodes"):
        yield f"pool {subject.key.split('/', 1)[-1]} is rack-scale NVLink, made by Karpenter"
        return
    if subject.kind != KARPENTER_NODEPOOL or not str(data.get("apiVersion", "")).startswith("karpenter.sh/"):
        return
    spec = ((data.get("spec") or {}).get("template") or {}).get("spec") or {}
    for requirement in spec.get("requirements") or []:
        if not isinstance(requirement, Mapping) or requirement.get("key") not in _INSTANCE_KEYS:
            continue
        if requirement.get("operator") != "In":
            continue
        rack = [v for v in requirement.get("values") or [] if _rack_scale_type(str(v))]
        if rack:
            yield f"Karpenter NodePool may launch {', '.join(rack)}, rack-scale NVLink machines"
            return


def _rack_scale_type(value: str) -> bool:
    """Whether an instance type (or family) is a rack-scale NVLink machine of the AWS catalog."""
    return any(
        (name == value or name.startswith(f"{value}.")) and (m := catalog.lookup("aws", name)) and m.nvlink_domain_nodes
        for name in catalog.names("aws")
    )


RULES: tuple[Rule, ...] = (
    Rule(
        "nvlink-compute-domain",
        "critical",
        "mandatory",
        (compute_domain.__doc__ or "").strip(),
        "run it as a TrainingJob on the pool (it gets its own ComputeDomain and claims the channel), or add a "
        "ComputeDomain and a resourceClaims entry naming its channel.resourceClaimTemplate.name",
        ("*",),
        compute_domain,
        gpu_only=True,
    ),
    Rule(
        "nvlink-domain-size",
        "high",
        "mandatory",
        (domain_size.__doc__ or "").strip(),
        "ask for at most the pool's nvlinkDomainNodes, or let the job span domains (a coarser topology.level)",
        ("*",),
        domain_size,
        gpu_only=True,
    ),
    Rule(
        "nvlink-karpenter",
        "high",
        "mandatory",
        (karpenter_dra.__doc__ or "").strip(),
        "make rack-scale pools with managed node groups (provisioner: nodegroup) on Capacity Blocks",
        ("NodePool",),
        karpenter_dra,
        gpu_only=False,
    ),
)
