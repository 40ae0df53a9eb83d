"""Fake nodes shaped like a stack's pools, for kwok to run: what a real node of the pool advertises and carries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.allocatable import allocatable
from components.nodecheck import RESULT_LABEL
from components.overhead import node_labels
from components.pool import Pool
from components.topology import CLIQUE_LABEL, domain_sizes
from components.wellknown import NODE_CHECK_KEY

POOL_ANNOTATION = "gpu-training/simulated-pool"
"""Which of the stack's pools a fake node stands for (an annotation: nothing schedules by it)."""
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
"""The annotation kwok is told to manage nodes by: only our fake nodes, never a real one."""
NODEPOOL_LABEL = "karpenter.sh/nodepool"
"""The label Karpenter puts on each node it makes: the NodePool's name, which is the pool's."""
UNFIXED_DEVICES = "64"
"""What a fake node advertises of a device plugin resource whose amount the stack does not fix."""
UNKNOWN_CPU, UNKNOWN_MEMORY = "64", "512Gi"
"""cpu and memory of a fake node whose machine the catalog does not know and whose pool states no allocatable: an
assumption the report names."""
PODS = "110"
CPU_NODE_CPU, CPU_NODE_MEMORY = "16", "64Gi"
"""A general-purpose node's size (an m5.4xlarge's order), for launchers and other CPU pods."""


def _labels(pool: Pool, name: str, index: int) -> dict[str, str]:
    # What the cloud labels the node with when it makes it, then what the pool says it carries, then what the
    # GPU Operator and the cloud's topology add once it runs.
    # (overhead.node_labels: what a joining node of the pool carries, the pool's own labels last.)
    zone = {"topology.kubernetes.io/zone": pool.zone} if pool.zone else {}
    labels = {"kubernetes.io/hostname": name, "type": "kwok", **zone, **node_labels(pool)}
    return labels | discovered_labels(pool, name, index, labels)


def discovered_labels(pool: Pool, name: str, index: int, labels: Mapping[str, str]) -> dict[str, str]:
    """The labels node `name` of `pool` gets beyond those it was made with (`labels`, which win): the GPU product
    from the GPU Operator's feature discovery, the NVLink clique, and the provider's network topology. The node is
    the pool's `index`-th, and fills its domains in order: each level's domain holds the nodes `domain_sizes` gives
    it (the catalog's figure for the machine, or an assumption the report names), so a job fits one or spans several
    as on a real fabric."""
    found: dict[str, str] = {}
    if pool.gpu_model:
        found["nvidia.com/gpu.product"] = pool.gpu_model.replace(" ", "-")
    if pool.nvlink_domain_nodes:
        # One NVLink domain per nvlinkDomainNodes nodes, labelled as GPU Feature Discovery and the DRA driver do
        # (`<cluster UUID>.<clique id>`).
        found[CLIQUE_LABEL] = f"{pool.name}-fabric.{index // pool.nvlink_domain_nodes}"
    if pool.topology:
        sizes = domain_sizes(pool.topology, pool.provider, pool.machine_type, pool.nvlink_domain_nodes)
        for level in pool.topology.levels:
            if level.one_node:
                found[level.node_label] = name  # a level of one node per domain is named after the node
            elif level.node_label not in found:
                found[level.node_label] = f"{pool.name}-{level.name}-{index // sizes[level.name].nodes}"
    return {key: value for key, value in found.items() if key not in labels}


def assumptions(pool: Pool) -> list[str]:
    """What simulate assumes of `pool`'s nodes for want of a published or stated figure: an unknown machine's cpu
    and memory, and topology domain sizes no source gives."""
    said = []
    offered = allocatable(pool)
    unknown = [f"{r} {v}" for r, v in (("cpu", UNKNOWN_CPU), ("memory", UNKNOWN_MEMORY)) if not offered.get(r)]
    if unknown:
        said.append(
            f"pool {pool.name}: a node's allocatable {' and '.join(unknown)} (its machine is unknown: state "
            "nodePools[].allocatable)"
        )
    if pool.topology:
        sizes = domain_sizes(pool.topology, pool.provider, pool.machine_type, pool.nvlink_domain_nodes)
        guessed = [f"{name} of {size.nodes} nodes ({size.source})" for name, size in sizes.items() if size.assumed]
        if guessed:
            said.append(f"pool {pool.name}: topology domains " + "; ".join(guessed))
    return said


def _node(
    name: str, labels: dict[str, str], taints: list[dict[str, Any]], resources: dict[str, str], pool: str = ""
) -> dict[str, Any]:
    annotations = {KWOK_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"}
    if pool:
        annotations[POOL_ANNOTATION] = pool
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {"taints": taints},
        "status": {"capacity": resources, "allocatable": resources},
    }


def cpu_nodes(count: int) -> list[dict[str, Any]]:
    """`count` untainted nodes without GPUs, for the pods that need none (MPI launchers)."""
    resources = {"cpu": CPU_NODE_CPU, "memory": CPU_NODE_MEMORY, "pods": PODS}
    return [
        _node(
            f"cpu-{i}",
            {"kubernetes.io/hostname": f"cpu-{i}", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
             "type": "kwok"},
            [],
            resources,
        )
        for i in range(count)
    ]  # fmt: skip


def advertised(pool: Pool) -> dict[str, str]:
    """What a node of `pool` advertises as allocatable: `components.allocatable`'s amounts, with a figure for what
    the stack leaves open (a device plugin's count, an unknown machine's cpu and memory) and the kubelet's pods."""
    offered = allocatable(pool)
    resources = {name: amount or UNFIXED_DEVICES for name, amount in offered.items()}
    resources["cpu"] = offered.get("cpu") or UNKNOWN_CPU
    resources["memory"] = offered.get("memory") or UNKNOWN_MEMORY
    resources["pods"] = PODS
    return resources


def pool_nodes(pool: Pool, count: int, *, checked: bool = True, first: int = 0) -> list[dict[str, Any]]:
    """`count` Node objects shaped like `pool`'s: its labels, taints and what a node advertises. A pool with a node
    check has its nodes as they are once it passed (`checked`), or as they join: under the startup taint. Named
    <pool>-<index> from index `first` (a pool that grows gets the next ones)."""
    resources = advertised(pool)
    joining = pool.startup_taints if not checked else []
    taints = [t.model_dump(exclude_none=True) for t in (*pool.taints, *joining)]
    nodes = []
    for index in range(first, first + count):
        labels = _labels(pool, f"{pool.name}-{index}", index)
        if pool.startup_taints:
            labels[NODE_CHECK_KEY] = "required"
            if checked:
                labels[RESULT_LABEL] = "passed"
        nodes.append(_node(f"{pool.name}-{index}", labels, taints, resources, pool.name))
    return nodes


def pool_of(node: dict[str, Any]) -> str | None:
    """The pool a fake node stands for: ours by its annotation, Karpenter's by its NodePool (named after the pool);
    None for a CPU node."""
    meta = node["metadata"]
    return meta.get("annotations", {}).get(POOL_ANNOTATION) or meta.get("labels", {}).get(NODEPOOL_LABEL)
