"""The NVIDIA GPU Operator: driver, toolkit, device plugin, GPUDirect RDMA (DMA-BUF or peermem), DCGM exporter."""

from __future__ import annotations

from typing import Any, Literal

from components import repair
from components.addons import monitoring
from components.addons.install import HelmRelease
from components.manifests.pod import tolerations
from components.nodecheck import GKE_DRIVER_DIR
from components.observability import dcgm
from components.observability import pack as observability
from components.pool import taints_of
from components.validation import Stack
from components.versions import GPU_OPERATOR

NAME = "gpu-operator"
NAMESPACE = "gpu-operator"
RdmaMode = Literal["dmabuf", "peermem"]


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
    }
    if repair.nvsentinel(stack.config):
        # NVSentinel's GPU health monitor reads the standalone DCGM host engine (its nvidia-dcgm Service); the
        # exporter then uses it too instead of its embedded one. The EKS node monitoring agent brings its own.
        values["dcgm"] = {"enabled": True}
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
