"""The NVIDIA DRA driver, ComputeDomain part only: IMEX channels for the jobs of rack-scale NVLink pools.

Keys and defaults are the chart's (kubernetes-sigs/dra-driver-nvidia-gpu v0.5.0 deployments/helm/
dra-driver-nvidia-gpu/values.yaml). Installed only on stacks with a GB200 / GB300 pool. Hosts must not run their
own `nvidia-imex` service beside it (NVIDIA/cloud-native-docs#453; docs/fabrics.md says so).
"""

from __future__ import annotations

from typing import Any

from components.addons import gpu_operator
from components.addons.install import HelmRelease
from components.manifests.pod import tolerations
from components.pool import Pool, taints_of
from components.stack import Stack
from components.versions import DRA_DRIVER
from components.wellknown import DRA_DRIVER_NAMESPACE as NAMESPACE

NAME = "nvidia-dra-driver-gpu"
# Where the kubelet plugin finds the driver's libraries and tools: the GPU Operator's containerized driver, GKE's
# managed driver, or the host's own (EKS accelerated AMI, hosts that bring theirs). NVIDIA's DRA driver install
# guide (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/dra-intro-install.html) and its GKE notes.
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia"
HOST_DRIVER_ROOT = "/"


def rack_scale_pools(stack: Stack) -> list[Pool]:
    """The pools whose NVLink joins several nodes."""
    return [pool for pool in stack.pools.values() if pool.nvlink_domain_nodes > 0]


def driver_root(stack: Stack) -> str:
    """Where the NVIDIA driver lives on the stack's GPU nodes."""
    if stack.config.runs_gpu_driver:
        return OPERATOR_DRIVER_ROOT
    return GKE_DRIVER_ROOT if stack.config.cluster.provider == "gcp" else HOST_DRIVER_ROOT


def labels_cliques(stack: Stack) -> bool:
    """Whether the kubelet plugin writes the nodes' nvidia.com/gpu.clique label: only where GPU Feature Discovery
    (the GPU Operator's) does not, since two owners fight over it and the plugin removes the label when it stops
    (kubernetes-sigs/dra-driver-nvidia-gpu chart 0.5.0-dev values.yaml `gpuCliqueLabelEnabled`, default false;
    cmd/compute-domain-kubelet-plugin/computedomain.go Stop and RemoveGPUCliqueLabel)."""
    return not gpu_operator.enabled(stack)


def release(stack: Stack) -> HelmRelease | None:
    """The DRA driver with ComputeDomains on and GPU allocation off, its kubelet plugin on the rack-scale pools'
    nodes (labelling them with their NVLink clique where nothing else does); None when the stack has no rack-scale
    pool."""
    pools = rack_scale_pools(stack)
    if not pools:
        return None
    terms = [
        {"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in pool.node_selector.items()]}
        for pool in pools
        if pool.node_selector
    ]
    plugin: dict[str, Any] = {
        # The plugin prepares channels before a node's check has passed, as the GPU Operator's DaemonSets do.
        "tolerations": tolerations(taints_of(pools, startup=True)),
        "containers": {"computeDomains": {"gpuCliqueLabelEnabled": labels_cliques(stack)}},
    }
    if terms:
        # The chart's default affinity looks for NFD's or the GPU Operator's labels, which GKE and EKS nodes
        # without the Operator lack: the pools' own selectors find their nodes on every provider.
        plugin["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    values: dict[str, Any] = {
        "nvidiaDriverRoot": driver_root(stack),
        "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}},
        "kubeletPlugin": plugin,
    }
    needs = (gpu_operator.NAME,) if gpu_operator.enabled(stack) else ()
    return HelmRelease(NAME, DRA_DRIVER, NAMESPACE, values, needs=needs)
