"""Which fabric a pool can run: the fabrics its machine's NICs carry, and of those the ones its provider's pools can
build. A pool asking its nodes for a fabric they lack is refused (docs/jobs.md: "A pod asking for a resource the
nodes lack ... is refused"), naming the pool's fabric key, the machine, what it has, and the fix.

From the catalog's facts: every machine runs tcp; efa where it has EFA interfaces; its own GKE GPUDirect fabric
(tcpx, tcpxo, rdma) where it has GPU NICs; roce on the machines whose GPU NICs are RoCE ConnectX NICs (GKE's rdma
machines, reached through Multus on a cluster this stack does not make). No catalogued machine has an InfiniBand HCA:
EC2 instances talk over EFA, and Google's RDMA machines over RoCE. Of those, a provider builds: EFA on EKS and on
existing clusters; GPUDirect only on GKE, whose GPU NIC networks the GKE stack makes; roce and infiniband (Multus)
only on existing clusters.
"""

from __future__ import annotations

from components import catalog
from components.catalog import MachineType
from components.errors import Issue
from components.models.nodepool import GPUDIRECT_FABRICS, NodePoolSpec

_NICS = {"infiniband": "InfiniBand HCA", "roce": "RoCE NIC"}
_GPUDIRECT_MACHINES = {"tcpx": "a3-highgpu-8g", "tcpxo": "a3-megagpu-8g", "rdma": "a3-ultragpu-8g, a4-highgpu-8g"}


def machine_fabrics(machine: MachineType) -> tuple[str, ...]:
    """The fabrics the machine's NICs can carry, its default (fastest) first."""
    fabrics = [machine.fabric]
    if machine.gpudirect == "rdma":
        fabrics.append("roce")
    return tuple(dict.fromkeys([*fabrics, "tcp"]))


def buildable(machine: MachineType, provider: str) -> tuple[str, ...]:
    """The machine's fabrics that a pool on `provider` can run: GPUDirect only on GKE; EFA and Multus RDMA not there,
    and Multus RDMA only on existing clusters."""
    if provider == "gcp":
        return tuple(f for f in machine_fabrics(machine) if f not in ("efa", "roce", "infiniband"))
    barred = (*GPUDIRECT_FABRICS, "roce", "infiniband") if provider == "aws" else GPUDIRECT_FABRICS
    return tuple(f for f in machine_fabrics(machine) if f not in barred)


def issues(spec: NodePoolSpec, provider: str, fabric: str, machine: MachineType | None, path: str) -> list[Issue]:
    """What stops the pool's fabric on its machine and provider (empty when it can run)."""
    where = f"{path}.fabric"
    if fabric in GPUDIRECT_FABRICS:
        found = _gpudirect(spec, provider, fabric, machine)
        return [Issue(where, found)] if found else []
    if fabric == "efa":
        found = _efa(spec, provider, machine)
        return [Issue(where, found)] if found else []
    if fabric in ("infiniband", "roce"):
        found = _multus_rdma(spec, provider, fabric, machine)
        return [Issue(where, found)] if found else []
    return []


def _gke_fabrics(machine: MachineType | None) -> str:
    """What a GKE pool of this machine can use instead, in words."""
    if machine is not None and machine.gpudirect:
        return f"{machine.name} uses {machine.gpudirect} (GPUDirect, its default) or tcp"
    if machine is not None:
        return f"{machine.name} has no GPU NICs for GPUDirect: use tcp"
    return "GKE pools use tcp, or GPUDirect (tcpx, tcpxo, rdma) on a machine with GPU NICs"


def _gpudirect(spec: NodePoolSpec, provider: str, fabric: str, machine: MachineType | None) -> str | None:
    """A GPUDirect fabric is GKE's, and each is tied to the machine types that have its NICs."""
    if provider != "gcp":
        if machine is not None:
            fix = f"{machine.name} runs {' or '.join(buildable(machine, provider))}"
        else:
            fix = "use efa or tcp" if provider == "aws" else "on an existing cluster use roce or infiniband, or tcp"
        return f"{fabric} is GKE GPUDirect, which needs the GPU NIC networks a GKE stack makes; {fix}"
    if machine is None:
        return f"{fabric} needs a machine type in the catalog; {spec.machine_type} is not"
    if machine.gpudirect != fabric:
        return (
            f"pool '{spec.name}': {machine.name} cannot do {fabric} ({fabric} is for {_GPUDIRECT_MACHINES[fabric]}); "
            + (f"use {machine.gpudirect} or tcp" if machine.gpudirect else "use tcp")
        )
    return None


def _efa(spec: NodePoolSpec, provider: str, machine: MachineType | None) -> str | None:
    """EFA is AWS's, on instance types that have it."""
    if provider == "gcp":
        return f"EFA is an AWS fabric; {_gke_fabrics(machine)}"
    if machine is None and spec.instance_type:
        return f"EFA needs an instance type with EFA, and '{spec.instance_type}' is not in the catalog"
    if machine is None:
        return (
            f"efa: pool '{spec.name}' names no instance type, so its EFA interfaces are unknown: set instanceType to "
            "its nodes' EFA instance type (e.g. p5.48xlarge), or fabric tcp"
        )
    if not machine.has_efa:
        efa_types = ", ".join(
            n for n in catalog.names("aws") if (m := catalog.lookup("aws", n)) and m.efa_interfaces >= 4
        )
        return f"{machine.name} has no EFA; use an EFA instance type ({efa_types}) or fabric tcp"
    return None


def _multus_rdma(spec: NodePoolSpec, provider: str, fabric: str, machine: MachineType | None) -> str | None:
    """RoCE and InfiniBand through Multus: on an existing cluster whose machine has the NICs (any, when unnamed)."""
    if provider == "gcp":
        return f"{fabric} over Multus is not available on GKE; {_gke_fabrics(machine)}"
    if provider == "aws":
        what = f"{machine.name} is an EC2 instance type" if machine else f"pool '{spec.name}' runs on EC2"
        fits = " or ".join(buildable(machine, provider)) if machine else "efa (on an EFA instance type) or tcp"
        return (
            f"{fabric}: {what}, and EC2 instances have no InfiniBand or RoCE NICs (their GPUs talk over EFA or TCP): "
            f"set fabric: {fits}"
        )
    if machine is not None and fabric not in machine_fabrics(machine):
        return (
            f"{fabric}: {machine.name} has no {_NICS[fabric]}; its NICs carry {' and '.join(machine_fabrics(machine))}"
            f": set fabric: {' or '.join(buildable(machine, provider))}, or name the type its nodes really are"
        )
    return None
