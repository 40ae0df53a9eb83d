"""What one node of a pool advertises to the scheduler: the only resources a pod on the pool may request.

`allocatable` is the one statement of it. The render-time check (components/podfit.py) holds every pod
template we emit for a pool against it, the Cluster Autoscaler's scale-from-zero tags are made from it
(components/aws/nodegroup.py), and `simulate` shapes its fake nodes by it (components/simulate/nodes.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal

from components import quantity
from components.fabric import EFA_RESOURCE
from components.memo import per_object
from components.pool import Pool

GPU_RESOURCE = "nvidia.com/gpu"
"""The GPUs a node advertises (NVIDIA's device plugin, from the GPU Operator or the cloud's installer)."""

# The kubelet's CPU reservation: 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% of every
# core past the fourth, in millicores per core of each band. The EKS AL2023 AMI's nodeadm sets it so
# (awslabs/amazon-eks-ami 81fec2e nodeadm/internal/kubelet/config.go getCPUMillicoresToReserve), Karpenter
# counts it so (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go kubeReservedResources),
# and GKE documents the same bands (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes).
_CPU_RESERVE_BANDS = ((1, 60), (1, 10), (2, 5), (math.inf, 2.5))
# What the kubelet keeps of memory whatever the node's pod count: kube-reserved is 255Mi + 11Mi per pod (nodeadm
# getMemoryMebibytesToReserve; Karpenter kubeReservedResources) and the hard eviction threshold 100Mi
# (nodeadm config.go evictionHard; Karpenter evictionThreshold). Only the per-pod term is left out, so the
# figure stays an upper bound.
_AWS_MEMORY_FLOOR_MIB = 255 + 100
# Karpenter takes this share of an instance type's memory as never visible to the OS (VM_MEMORY_OVERHEAD_PERCENT,
# default 0.075; karpenter-provider-aws v1.14.1 pkg/operator/options/options.go, types.go memory) and launches
# no instance for a pod that needs more than what remains.
KARPENTER_VM_MEMORY_OVERHEAD = Decimal("0.075")


def allocatable(pool: Pool) -> dict[str, str | None]:
    """Resource -> what one node of `pool` advertises as allocatable (a copy of `_allocatable`'s, made once per
    pool); see there."""
    return dict(_allocatable(pool))


@per_object
def _allocatable(pool: Pool) -> dict[str, str | None]:
    """Resource -> what one node of `pool` advertises as allocatable, as a quantity; None for a device plugin's
    resource whose amount the stack does not fix (the RDMA shared plugin's HCAs, SR-IOV VFs).

    A pod of the pool that requests more of a resource, or a resource not listed, never schedules: the scheduler
    finds no node, and Karpenter or the Cluster Autoscaler adds none. The amounts:

    - GPUs: the machine's, from NVIDIA's device plugin (the GPU Operator, or GKE's own installer).
    - EFA devices: every EFA interface of the machine, from the EFA device plugin (aws and existing clusters).
    - RDMA and SR-IOV resources: those of the plugins the stack's networks configure.
    - cpu and memory: what the pool states (`allocatable`), when it does; else:
    - cpu: the machine's vCPUs less the kubelet's reservation where the stack knows it (EKS, GKE): exact.
    - memory: an upper bound. On Karpenter pools, what Karpenter computes for the instance type less its VM
      overhead and the kubelet's fixed reservation (a pod asking more makes Karpenter launch nothing); on managed
      node groups, the machine less that reservation; elsewhere the machine's nominal memory. Real nodes
      advertise somewhat less, so a worker's default size (`Pool.worker_requests`) keeps a wider margin.
    - Huge pages: never. Karpenter's instance types have none (types.go computeCapacity; issues #3315, #6296),
      so a pod requesting them makes Karpenter launch nothing. Managed node groups run the same EKS AL2023 AMI,
      whose EFA installer runs `--minimal` but keeps efa-config (amazon-eks-ami templates/al2023/provisioners/
      install-efa.sh), which may set aside 2 MiB pages at boot (observed on EKS EFA nodes: 110 per vCPU + 1,
      awsome-distributed-training @7217859 3.test_cases/pytorch/mosaicml-composer/stable-diffusion/README.md);
      nothing here can establish that it does on every node, and the Cluster Autoscaler cannot see it before a
      node exists, so no pool counts on them, and no pod requests them.
    """
    amounts: dict[str, str | None] = {
        GPU_RESOURCE: str(pool.gpus_per_node),
        "cpu": _cpu(pool),
        "memory": _memory(pool),
    }
    if pool.efa_interfaces and pool.provider in ("aws", "existing") and not pool.efa_dra:  # DRA: ResourceSlices
        amounts[EFA_RESOURCE] = str(pool.efa_interfaces)
    if pool.rdma_resource:
        amounts[pool.rdma_resource] = None
    for network in pool.networks:
        if network.resource_name:
            amounts[network.resource_name] = None
    return amounts


def _cpu(pool: Pool) -> str | None:
    """The node's vCPUs as the kubelet advertises them, in millicores (as the pool states it, when it does); None when
    the machine is unknown."""
    if pool.allocatable_cpu:
        return pool.allocatable_cpu
    if not pool.vcpus:
        return None
    millicores = pool.vcpus * 1000
    if pool.provider == "existing":  # the cluster's own kubelet configuration, which the stack does not know
        return str(pool.vcpus)
    reserved, start = Decimal(0), 0.0
    for cores, per_core in _CPU_RESERVE_BANDS:
        end = min(start + cores, pool.vcpus)
        if end > start:
            reserved += Decimal(str(per_core)) * Decimal(str(end - start))
        start += cores
    return f"{millicores - math.floor(reserved)}m"


def _memory(pool: Pool) -> str | None:
    """The node's memory as the kubelet (and Karpenter) count it, at most, in MiB (as the pool states it, when it
    does); None when unknown."""
    if pool.allocatable_memory:
        return pool.allocatable_memory
    if not pool.memory_gib:
        return None
    mib = pool.memory_gib * 1024
    if pool.provisioner == "karpenter":
        mib -= math.ceil(mib * KARPENTER_VM_MEMORY_OVERHEAD)
    if pool.provider == "aws":
        mib -= _AWS_MEMORY_FLOOR_MIB
    return written(Decimal(mib) * 2**20)


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
            problems.append(f"requests {name}: {wanted}, more than a node of pool '{pool.name}' advertises ({have})")
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
    return {k: written(v) for k, v in total.items() if v}


def written(amount: Decimal) -> str:
    """An amount as a quantity a reader recognizes: whole GiB or MiB, millicores, or a plain number."""
    if amount == amount.to_integral_value():
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20)):
            if amount >= size and amount % size == 0:
                return f"{int(amount // size)}{suffix}"
        return str(int(amount))
    return f"{int(amount * 1000)}m"
