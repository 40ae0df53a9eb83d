"""What one node of a pool advertises to the scheduler: the only resources a pod on the pool may request."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from components import quantity
from components.fabric import EFA_RESOURCE
from components.pool import Pool

GPU_RESOURCE = "nvidia.com/gpu"
"""The GPUs a node advertises (NVIDIA's device plugin, from the GPU Operator or the cloud's installer)."""


def allocatable(pool: Pool) -> dict[str, str | None]:
    """Resource -> the amount one node of `pool` advertises, as a quantity, or None when its device plugin
    advertises an amount the stack does not fix (the RDMA shared plugin's HCAs, SR-IOV VFs).

    cpu and memory are the machine's, when the catalog knows it: an upper bound, since each provider's kubelet
    reserves its own share (our workers' default sizes leave a larger one, `Pool.worker_requests`). GPUs come
    from the GPU Operator or the cloud's driver installer, EFA devices from the EFA device plugin, RDMA and
    SR-IOV resources from the plugins the stack's networks configure. Huge pages are never advertised: no
    provisioner we drive reserves them at boot (Karpenter's instance types have none, karpenter-provider-aws
    v1.14.1 pkg/providers/instancetype/types.go computeCapacity), so a pod that requests them never schedules.
    """
    amounts: dict[str, str | None] = {
        GPU_RESOURCE: str(pool.gpus_per_node),
        "cpu": str(pool.vcpus) if pool.vcpus else None,
        "memory": f"{pool.memory_gib}Gi" if pool.memory_gib else None,
    }
    if pool.efa_interfaces and pool.provider in ("aws", "existing"):
        amounts[EFA_RESOURCE] = str(pool.efa_interfaces)
    if pool.rdma_resource:
        amounts[pool.rdma_resource] = None
    for network in pool.networks:
        if network.resource_name:
            amounts[network.resource_name] = None
    return amounts


def unadvertised(requests: Mapping[str, str], pool: Pool) -> list[str]:
    """Why a pod requesting `requests` (its containers' sum) cannot run on `pool`'s nodes; empty when it can."""
    offered = allocatable(pool)
    problems = []
    for name, wanted in requests.items():
        if name not in offered:
            problems.append(f"requests {name}: {wanted}, which no node of pool '{pool.name}' advertises")
            continue
        have = offered[name]
        if have is not None and quantity.parse(wanted) > quantity.parse(have):
            problems.append(f"requests {name}: {wanted}, more than a node of pool '{pool.name}' has ({have})")
    return problems


def pod_requests(spec: Mapping[str, object]) -> dict[str, str]:
    """What a pod spec requests of its node: its containers' and native sidecars' requests (else limits)
    summed, or an init container's when larger, as the scheduler counts them."""

    def of(container: Mapping[str, object]) -> dict[str, Decimal]:
        resources = container.get("resources")
        if not isinstance(resources, Mapping):
            return {}
        stated = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        return {k: quantity.parse(v) for k, v in stated.items()}

    total: dict[str, Decimal] = {}
    inits = [c for c in spec.get("initContainers") or [] if isinstance(c, Mapping)]
    containers = [c for c in spec.get("containers") or [] if isinstance(c, Mapping)]
    for container in [*containers, *(c for c in inits if c.get("restartPolicy") == "Always")]:
        for k, v in of(container).items():
            total[k] = total.get(k, Decimal(0)) + v
    for container in (c for c in inits if c.get("restartPolicy") != "Always"):
        for k, v in of(container).items():
            total[k] = max(total.get(k, Decimal(0)), v)
    return {k: quantity.canonical(v) for k, v in total.items() if v}
