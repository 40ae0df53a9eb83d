"""The NVIDIA GPU Operator: driver, toolkit, device plugin, GPUDirect RDMA, DCGM exporter."""

from __future__ import annotations

from typing import Any

from components.addons.install import HelmRelease
from components.manifests.pod import tolerations
from components.pool import taints_of
from components.validation import Stack
from components.versions import GPU_OPERATOR

NAME = "gpu-operator"
NAMESPACE = "gpu-operator"
# GKE keeps the driver on the host here, and containers find it through this path.
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"


def enabled(stack: Stack) -> bool:
    """Whether the stack runs the GPU Operator (default: not on GKE, which brings its own driver)."""
    return stack.config.runs_gpu_operator


def driver(stack: Stack) -> bool:
    """Whether the operator runs the containerized driver: not where the node image ships it."""
    spec = stack.config.gpu_operator
    return spec.driver if spec.driver is not None else stack.config.cluster.provider == "existing"


def rdma(stack: Stack) -> bool:
    """Whether GPUDirect RDMA (nvidia-peermem) is on: by default when a pool runs InfiniBand or RoCE."""
    spec = stack.config.gpu_operator
    if spec.rdma is not None:
        return spec.rdma
    return stack.rdma


def release(stack: Stack) -> HelmRelease:
    """The GPU Operator release: tolerating every GPU pool's taints, NFD on (the only NFD)."""
    provider = stack.config.cluster.provider
    values: dict[str, Any] = {
        "driver": {
            "enabled": driver(stack),
            "rdma": {"enabled": rdma(stack), "useHostMofed": stack.config.gpu_operator.use_host_mofed},
        },
        # The EKS accelerated AMI ships the NVIDIA container toolkit with the driver.
        "toolkit": {"enabled": provider != "aws"},
        "nfd": {"enabled": True},
        "dcgmExporter": {"serviceMonitor": {"enabled": stack.config.monitoring.prometheus}},
        "daemonsets": {"tolerations": tolerations(taints_of(list(stack.pools.values())))},
    }
    if provider == "gcp":
        values["toolkit"]["installDir"] = GKE_DRIVER_DIR
        values["hostPaths"] = {"driverInstallDir": GKE_DRIVER_DIR}
        values["cdi"] = {"enabled": True}
    return HelmRelease(NAME, GPU_OPERATOR, NAMESPACE, values)
