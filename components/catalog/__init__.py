"""GPU instance types (AWS) and machine types (GCP) with the facts a training job is sized from.

The facts are data: aws.yaml, gcp.yaml and gpus.yaml beside this module, each row citing its sources and the day
they were checked, read once per process and checked by typed rows (datafile.py, clouds.py). This module is the
catalog's interface: look a machine up, list a cloud's machines, and the topology figures derived from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.catalog.clouds import GCP_LOCAL_SSD_GB, load
from components.catalog.gpus import nvlink_domain_nodes, nvlink_gbs
from components.catalog.kinds import KUBERNETES_ARCH, Arch, GpuDirect, Provider
from components.catalog.machine import MachineType

__all__ = [
    "AS_OF",
    "EKS_FOUR_LAYER_MACHINES",
    "GCP_LOCAL_SSD_GB",
    "KUBERNETES_ARCH",
    "Arch",
    "DomainSize",
    "GpuDirect",
    "MachineType",
    "Provider",
    "eks_network_layers",
    "lookup",
    "names",
    "nvlink_domain_nodes",
    "nvlink_gbs",
    "topology_domains",
    "ultraservers",
]

AS_OF = "2026-08-06"
"""The day of the catalog's newest machine-readable source ([VPC] in aws.yaml): types launched later are not in it."""

_CLOUDS = {provider: load(provider) for provider in ("aws", "gcp")}
_CATALOG: dict[str, dict[str, MachineType]] = {provider: cloud.machines for provider, cloud in _CLOUDS.items()}
_NAMES: dict[str, tuple[str, ...]] = {provider: tuple(sorted(table)) for provider, table in _CATALOG.items()}
_ULTRASERVERS: dict[str, dict[int, str]] = _CLOUDS["aws"].ultraservers
"""AWS UltraServers: the instances of one NVLink domain, bought together, by instances per UltraServer."""


def ultraservers(instance_type: str | None) -> dict[int, str]:
    """AWS: the UltraServers an instance type is sold in, by instances per UltraServer; empty for other types."""
    return dict(_ULTRASERVERS.get(instance_type or "", {}))


@dataclass(frozen=True, slots=True)
class DomainSize:
    """How many nodes one domain of a topology level holds, and where that figure comes from."""

    nodes: int
    """Nodes (machines) one domain holds at most."""
    source: str
    """Where the figure comes from or, when `assumed`, why there is no public one."""
    assumed: bool = False
    """No public figure: the number is ours, and `simulate` says so wherever it decides an outcome."""


# Domain sizes of the providers' topology levels (the level names of components/topology.py).
# GKE: Google's AI Hypercomputer "Terminology" page (cloud.google.com/ai-hypercomputer/docs/terminology, read 2026)
# defines a sub-block as the hosts and connectivity hardware of one rack and a block as a collection of sub-blocks,
# with no count, except for A4X and A4X Max, whose sub-block is their NVLink domain: 18 instances (72 GPUs). A3 Mega,
# A3 Ultra, A4 and A4X VMs each take a whole physical host, so a gce-host domain holds one node.
# EKS: "How Amazon EC2 topology works" (docs.aws.amazon.com/AWSEC2/latest/UserGuide/how-ec2-instance-topology-works
# .html) says several instances connect to one bottom-layer network node and that instances sharing a node are
# closer, but not how many share one at any layer.
_GKE_HOST = DomainSize(1, "a whole-host VM: one per physical host")
_GKE_NVL72_SUBBLOCK = DomainSize(18, "Google's Terminology page: an A4X / A4X Max sub-block is one NVLink domain of 18")
_ASSUMED_SUBBLOCK = 16
"""Nodes of an 8-GPU machine's GKE sub-block (one rack), assumed; Google publishes no figure."""
_ASSUMED_EKS_FINEST = 16
"""Instances under one bottom-layer EC2 network node, assumed; AWS publishes no figure."""
_ASSUMED_FANOUT = 4
"""Domains of a level inside one of the next coarser level, assumed where no figure is published."""
_GKE_RACK_SCALE = ("a4x-highgpu-", "a4x-maxgpu-")


EKS_FOUR_LAYER_MACHINES = ("p6-b200.", "p6-b300.")
"""The instance families EC2 instance topology places under four network layers, not three
(docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html)."""


def eks_network_layers(machine: str) -> int:
    """How many network-node layers EKS labels above an instance of `machine`."""
    return 4 if machine.startswith(EKS_FOUR_LAYER_MACHINES) else 3


def topology_domains(provider: str, machine_type: str | None) -> dict[str, DomainSize]:
    """Level name -> the nodes one domain of that level of the provider's topology holds for this machine type, with
    its source; a figure no source gives is marked assumed. Empty for a provider whose levels are not its own."""
    machine = machine_type or ""
    if provider == "gcp":
        subblock = (
            _GKE_NVL72_SUBBLOCK
            if machine.startswith(_GKE_RACK_SCALE)
            else DomainSize(_ASSUMED_SUBBLOCK, "Google gives no sub-block size for this machine (one rack)", True)
        )
        block = DomainSize(
            subblock.nodes * _ASSUMED_FANOUT,
            f"Google gives no block size; assumed {_ASSUMED_FANOUT} sub-blocks",
            assumed=True,
        )
        return {"block": block, "subblock": subblock, "gce-host": _GKE_HOST}
    if provider == "aws":
        layers = eks_network_layers(machine)
        why = "AWS gives no count of instances per network node"
        return {
            f"layer-{n}": DomainSize(_ASSUMED_EKS_FINEST * _ASSUMED_FANOUT ** (layers - n), why, assumed=True)
            for n in range(1, layers + 1)
        }
    return {}


def _table(provider: str) -> dict[str, MachineType]:
    """The catalog of one provider; an unknown provider is a programming error."""
    try:
        return _CATALOG[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r}; expected one of {sorted(_CATALOG)}") from None


def lookup(provider: Provider, name: str) -> MachineType | None:
    """The catalog entry for a type, or None when the type is not in the catalog."""
    return _table(provider).get(name)


def names(provider: Provider) -> tuple[str, ...]:
    """Every catalogued type name of a provider, sorted."""
    _table(provider)
    return _NAMES[provider]
