"""Network topology of GPU nodes: the levels each provider labels, and where a job's pods must land."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from components.catalog import DomainSize, eks_network_layers, topology_domains
from components.models.base import Spec
from components.models.platform import TopologyLevelSpec

HOSTNAME_LABEL = "kubernetes.io/hostname"
HOST = "host"
KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_GROUP = "kueue.x-k8s.io/podset-group-name"
# GKE labels each node of A3 Mega and newer with its place in the data centre (block, sub-block, physical
# host); cluster-toolkit v1.95.0's examples/gke-a3-megagpu, gke-a3-ultragpu and gke-a4
# kueue-configuration.yaml.tftpl use exactly these levels, then kubernetes.io/hostname.
GCE_HOST = "gce-host"
NVLINK_LEVEL = "nvlink"
"""The level of rack-scale NVLink domains, between the network's finest level and the host."""
CLIQUE_LABEL = "nvidia.com/gpu.clique"
"""The node label naming a node's NVLink partition (`<cluster UUID>.<clique id>`): GPU Feature Discovery and the
NVIDIA DRA driver's kubelet plugin set it; every node of one NVLink domain carries the same value."""
_GKE = (
    ("block", "cloud.google.com/gce-topology-block"),
    ("subblock", "cloud.google.com/gce-topology-subblock"),
    (GCE_HOST, "cloud.google.com/gce-topology-host"),
)
# These machines take a whole physical host: each of its domains holds one node, as the hostname's do.
_ONE_NODE = {GCE_HOST}
# EKS (cloud-controller-manager) labels the network nodes above an instance, layer-1 the broadest
# (docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html); how many: catalog.eks_network_layers.
_EKS_LAYER = "topology.k8s.aws/network-node-layer-{n}"
# Kueue counts a node for a topology only when it carries every level's label, so a pool whose machines
# go unlabelled must get none: its jobs would never be admitted. EC2 instance topology covers these GPU
# and Trainium families; GKE labels the sub-blocks of A3 Mega and newer.
LABELLED_MACHINES = {
    "aws": (
        "p3dn.",
        "p4d.",
        "p4de.",
        "p5.",
        "p5e.",
        "p5en.",
        "p6-b200.",
        "p6-b300.",
        "p6e-gb200.",
        "trn1.",
        "trn1n.",
        "trn2.",
    ),
    "gcp": ("a3-megagpu-", "a3-ultragpu-", "a4-highgpu-", "a4x-highgpu-"),
}


class Level(Spec):
    """One topology level: the short name jobs use, and the node label naming its domains."""

    name: str
    """Short name, e.g. subblock."""
    node_label: str
    """Node label whose value names the node's domain at this level."""
    one_node: bool = False
    """Every domain of this level holds one node (the host, and GKE's physical host of a whole-host VM)."""


class Topology(Spec):
    """A cluster's network topology as placement sees it: levels from coarsest to the host."""

    name: str
    """Name of the Kueue Topology / Volcano discovery type."""
    levels: list[Level] = Field(min_length=1)
    """Coarsest first; the last is the host (kubernetes.io/hostname)."""

    def level(self, name: str) -> Level | None:
        """The level a job names, or None."""
        return next((level for level in self.levels if level.name == name), None)

    @property
    def names(self) -> list[str]:
        """The level names, coarsest first."""
        return [level.name for level in self.levels]

    @property
    def finest_shared(self) -> Level | None:
        """The finest level whose domains several nodes can share: where a multi-node job prefers to land."""
        return next((level for level in reversed(self.levels[:-1]) if not level.one_node), None)

    def tier(self, name: str) -> int:
        """Volcano's tier of a level above the host: 1 for the finest, counting up to the coarsest."""
        shared = self.levels[:-1]
        return len(shared) - [level.name for level in shared].index(name)


def provider_topology(
    provider: str, machine_type: str | None, declared: list[TopologyLevelSpec], *, nvlink: bool = False
) -> Topology | None:
    """The topology of a pool's nodes: from the provider's labels, or the levels an existing cluster declares;
    with `nvlink` (a rack-scale NVLink pool), the NVLink domain as the finest level above the host.

    None when the pool's machines carry no topology labels (or an existing cluster declares no levels).
    """
    found = _network_topology(provider, machine_type, declared)
    if found is None or not nvlink or any(level.node_label == CLIQUE_LABEL for level in found.levels):
        return found
    domain = Level(name=NVLINK_LEVEL, node_label=CLIQUE_LABEL)
    # Above every level of one node (the host, and GKE's physical host): a domain holds many machines.
    at = next(i for i, level in enumerate(found.levels) if level.one_node)
    return Topology(name=f"{found.name}-nvlink", levels=[*found.levels[:at], domain, *found.levels[at:]])


def _network_topology(provider: str, machine_type: str | None, declared: list[TopologyLevelSpec]) -> Topology | None:
    """The levels of the network above a pool's nodes, then the host."""
    if provider in LABELLED_MACHINES and not (machine_type or "").startswith(LABELLED_MACHINES[provider]):
        return None
    host = Level(name=HOST, node_label=HOSTNAME_LABEL, one_node=True)
    if provider == "gcp":
        levels = [Level(name=n, node_label=label, one_node=n in _ONE_NODE) for n, label in _GKE]
        return Topology(name="gke", levels=[*levels, host])
    if provider == "aws":
        layers = eks_network_layers(machine_type or "")
        levels = [Level(name=f"layer-{n}", node_label=_EKS_LAYER.format(n=n)) for n in range(1, layers + 1)]
        return Topology(name="eks" if layers == 3 else "eks-4-layer", levels=[*levels, host])
    if not declared:
        return None
    levels = [Level(name=level.name, node_label=level.node_label) for level in declared]
    return Topology(name="cluster", levels=[*levels, host])


_ONE = DomainSize(1, "one node per domain")
_ASSUMED_DECLARED = 16
"""Nodes of the finest level an existing cluster declares, assumed: the stack knows the level's label, not its size."""


def domain_sizes(
    topology: Topology, provider: str, machine_type: str | None, nvlink_nodes: int = 0
) -> dict[str, DomainSize]:
    """Level name -> the nodes one domain of it holds (the catalog's figures, the NVLink domain's, or an
    assumption where none is published), each coarser level a whole number of the finer one's domains."""
    known = topology_domains(provider, machine_type) if provider in ("aws", "gcp") else {}
    sizes: dict[str, DomainSize] = {}
    finer = 1
    shared = 0
    for level in reversed(topology.levels):
        if level.one_node:
            size = known.get(level.name, _ONE)
        elif level.node_label == CLIQUE_LABEL and nvlink_nodes:
            size = DomainSize(nvlink_nodes, "the pool's NVLink domain (nvlinkDomainNodes; an NVL72 rack holds 18)")
        elif level.name in known:
            size = known[level.name]
        else:
            nodes = _ASSUMED_DECLARED * 4**shared
            size = DomainSize(nodes, "the cluster declares this level's label, not how many nodes share a domain", True)
        if not level.one_node:
            shared += 1
        if size.nodes % finer:
            # A domain holds whole domains of the level below it, as on the fabric.
            whole = -(-size.nodes // finer) * finer
            size = DomainSize(whole, f"{size.source}; rounded up to whole domains of {finer}", size.assumed)
        sizes[level.name] = size
        finer = size.nodes
    return dict(reversed(sizes.items()))


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a job's pods land: all in one domain of a level (required), or preferably so."""

    mode: Literal["required", "preferred"]
    level: Level
    tier: int | None
    """Volcano's tier of the level (None for the host)."""

    def kueue_annotations(self) -> dict[str, str]:
        """The pod template annotation Kueue's topology-aware scheduling reads."""
        key = KUEUE_REQUIRED if self.mode == "required" else KUEUE_PREFERRED
        return {key: self.level.node_label}

    def volcano_network_topology(self) -> dict[str, object]:
        """A Volcano PodGroup's networkTopology: hard or soft, up to the level's tier."""
        return {"mode": "hard" if self.mode == "required" else "soft", "highestTierAllowed": self.tier or 1}


def placement(topology: Topology | None, mode: str | None, level: str | None, nodes: int) -> Placement | None:
    """A job's placement: the level it names, else one domain of the finest shared level for a multi-node job.

    None when the pool has no topology, or a single-node job names none. An unknown level is the
    caller's to report (`topology.level(name)` is None).
    """
    if topology is None:
        return None
    if level is None:
        found = topology.finest_shared if nodes > 1 else None
        if found is None:
            return None
        return Placement("preferred", found, topology.tier(found.name))
    chosen = topology.level(level)
    if chosen is None:
        return None
    tier = topology.tier(chosen.name) if chosen.name != HOST else None
    return Placement("required" if mode is None else mode, chosen, tier)  # type: ignore[arg-type]
