"""The NVIDIA GPU Operator: driver, toolkit, device plugin, GPUDirect RDMA (DMA-BUF or peermem), the node's DCGM host
engine and its exporter."""

from __future__ import annotations

from typing import Any, Literal

from components.addons import monitoring
from components.addons.install import HelmRelease
from components.daemonsets import ADDON_DAEMONSETS
from components.manifests.pod import tolerations
from components.nodecheck import GKE_DRIVER_DIR
from components.observability import dcgm
from components.observability import pack as observability
from components.pool import taints_of
from components.stack import Stack
from components.versions import GPU_OPERATOR
from components.wellknown import GPU_OPERATOR_NAMESPACE as NAMESPACE

NAME = "gpu-operator"
RdmaMode = Literal["dmabuf", "peermem"]
DCGM: dict[str, Any] = {"enabled": True, "hostNetwork": True}
"""One DCGM host engine per node: the operator's standalone DCGM on the host's network, which its exporter
(DCGM_REMOTE_HOSTENGINE_INFO=nvidia-dcgm:5555, a node-local Service), NVSentinel's health monitor, the EKS node
monitoring agent and the node check (dcgmi clients of localhost:5555) all use, so that none starts another: DCGM's
profiling fields need a single engine on a node. The chart's defaults are enabled false (the exporter then embeds
an engine of its own) and hostNetwork false (NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/values.yaml
`dcgm`, templates/clusterpolicy.yaml; controllers/object_controls.go TransformDCGM, TransformDCGMExporter). The EKS
agent's own engine, its dcgm-server DaemonSet on hostPort 5555, tolerates no taint (eks-node-monitoring-agent
v1.7.0 charts/, dcgmAgent.tolerations []): it stays off tainted GPU nodes, and finds the port taken elsewhere."""
NFD_WORKER = "node-feature-discovery-worker"


def enabled(stack: Stack) -> bool:
    """Whether the stack runs the GPU Operator (default: not on GKE, which brings its own driver)."""
    return stack.config.runs_gpu_operator


def driver(stack: Stack) -> bool:
    """Whether the operator runs the containerized driver: not where the node image ships it."""
    return stack.config.runs_gpu_driver


def rdma(stack: Stack) -> RdmaMode | None:
    """How GPUDirect RDMA registers GPU memory with the NICs: dmabuf (by default when a pool runs
    InfiniBand or RoCE), peermem when asked for, None when off."""
    asked = stack.config.gpu_operator.rdma
    if asked is None:
        return "dmabuf" if stack.rdma else None
    if isinstance(asked, bool):
        return "dmabuf" if asked else None
    return asked


def nfd_worker_tolerations(stack: Stack, install: str) -> list[dict[str, str]]:
    """The NFD worker's tolerations from the chart of `install`: the chart's own, and every GPU pool's taints,
    the node check's startup taint among them."""
    (worker,) = [
        d for d in ADDON_DAEMONSETS if d.install == install and d.name.endswith("node-feature-discovery-worker")
    ]
    own = [dict(t) for t in worker.tolerations]
    return own + [t for t in tolerations(taints_of(list(stack.pools.values()), startup=True)) if t not in own]


def needs_mofed_container(stack: Stack) -> bool:
    """Whether nvidia-peermem needs the Network Operator's DOCA-OFED driver container: peermem without
    MOFED on the hosts. The driver DaemonSet waits for MOFED, so something must bring it."""
    return enabled(stack) and rdma(stack) == "peermem" and not stack.config.gpu_operator.use_host_mofed


def release(stack: Stack) -> HelmRelease:
    """The GPU Operator release: tolerating every GPU pool's taints, NFD on (the only NFD)."""
    provider = stack.config.cluster.provider
    pack = observability.resolve(stack.config)
    values: dict[str, Any] = {
        "driver": {
            "enabled": driver(stack),
            # Only peermem loads a module that waits for MOFED; DMA-BUF needs none.
            "rdma": {"enabled": rdma(stack) == "peermem", "useHostMofed": stack.config.gpu_operator.use_host_mofed},
        },
        # The EKS accelerated AMI ships the NVIDIA container toolkit with the driver.
        "toolkit": {"enabled": provider != "aws"},
        "nfd": {"enabled": True},
        # With a Prometheus Operator, the exporter reports the fields the pack's alerts and dashboards read.
        "dcgmExporter": (
            dcgm.exporter_values(service_monitor=True, labels=pack.labels)
            if pack.scrapes
            else {"serviceMonitor": {"enabled": False}}
        ),
        "daemonsets": {"tolerations": tolerations(taints_of(list(stack.pools.values()), startup=True))},
        # NFD's labels are what the operator deploys its operands by: its worker must run on a node under the node
        # check's startup taint, or the driver and toolkit never come and the check fails every node.
        "node-feature-discovery": {"worker": {"tolerations": nfd_worker_tolerations(stack, NAME)}},
    }
    values["dcgm"] = dict(DCGM)
    if rdma(stack) == "dmabuf" and driver(stack):
        # DMA-BUF needs the open GPU kernel modules (the proprietary ones do not export DMA-BUFs).
        values["driver"]["kernelModuleType"] = "open"
    if provider == "gcp":
        values["toolkit"]["installDir"] = GKE_DRIVER_DIR
        values["hostPaths"] = {"driverInstallDir": GKE_DRIVER_DIR}
        values["cdi"] = {"enabled": True}
    # Its operator makes the exporter's ServiceMonitor only if that CRD exists when it reconciles.
    needs = (monitoring.NAME,) if pack.install else ()
    return HelmRelease(NAME, GPU_OPERATOR, NAMESPACE, values, needs=needs)
