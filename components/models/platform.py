"""The operators on the cluster: GPU Operator, Training Operator, and the gang scheduler."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from components.models.base import DnsLabel, Spec


class GpuOperatorSpec(Spec):
    """The NVIDIA GPU Operator."""

    enabled: bool | None = None
    """Install the GPU Operator. Default: true, except on GKE, whose pools come with GKE's own
    driver and device plugin."""
    driver: bool | None = None
    """Run the containerized driver. Default: false on AWS (the accelerated AMI ships it) and
    GCP (GKE-managed drivers), true on existing clusters."""
    rdma: Literal["dmabuf", "peermem"] | bool | None = None
    """GPUDirect RDMA: dmabuf (the Linux kernel's DMA-BUF, with the open GPU kernel modules and the
    inbox NIC drivers; no MOFED) | peermem (the legacy nvidia-peermem module, which needs MOFED: the
    hosts' with useHostMofed, else the Network Operator's DOCA-OFED driver container) | true (dmabuf) |
    false (off). Default: dmabuf when a pool's fabric is infiniband or roce, else off."""
    use_host_mofed: bool = False
    """peermem: MOFED/DOCA-OFED is installed on the hosts (driver.rdma.useHostMofed), so no driver
    container brings it. Default: false."""


class MonitoringSpec(Spec):
    """What the cluster monitors with."""

    prometheus: bool = False
    """The Prometheus Operator runs on the cluster: add ServiceMonitors (DCGM exporter). Default: false."""


class PriorityClassSpec(Spec):
    """A PriorityClass jobs can name in scheduler.priorityClass."""

    name: DnsLabel
    """Name. Required."""
    value: int = Field(ge=-2147483648, le=1000000000)
    """Priority; higher preempts lower. Required."""
    preempting: bool = True
    """Whether pods of this class preempt lower ones. Default: true."""
    description: str = ""
    """What the class is for. Default: empty."""


class TrainingOperatorSpec(Spec):
    """The Kubeflow Training Operator and the MPI Operator."""

    enabled: bool = True
    """Install the Training Operator (PyTorchJob, TFJob). Default: true."""
    mpi: bool = True
    """Install MPI Operator v2beta1 for MPIJobs. Default: true."""


class QueueSpec(Spec):
    """A queue of GPU capacity that jobs submit to."""

    name: DnsLabel
    """Queue name; jobs refer to it as `scheduler.queue`. Required."""
    gpus: int = Field(ge=0)
    """GPUs the queue may use at once. Required."""
    weight: int = Field(default=1, ge=1)
    """Share of the cluster when queues compete (Volcano). Default: 1."""
    reclaimable: bool = True
    """Whether other queues may reclaim its idle share (Volcano). Default: true."""
    pools: list[DnsLabel] = Field(default_factory=list)
    """Pools whose GPUs the queue draws on (Kueue flavors). Default: every pool."""
    namespaces: list[DnsLabel] = Field(default_factory=list)
    """Namespaces that get a LocalQueue for it (Kueue). Default: every namespace the stack uses."""


class SchedulerSpec(Spec):
    """The gang scheduler, so that a multi-node job starts whole or not at all."""

    type: Literal["volcano", "kueue", "none"] = "volcano"
    """volcano | kueue | none. Default: volcano."""
    queues: list[QueueSpec] = Field(default_factory=list)
    """Queues. Default: none (Volcano's `default` queue)."""
    priority_classes: list[PriorityClassSpec] = Field(default_factory=list)
    """PriorityClasses to create. Default: none."""


class NamespaceSpec(Spec):
    """A namespace the platform creates, optionally with a GPU quota."""

    name: DnsLabel
    """Namespace name. Required."""
    gpu_quota: int | None = Field(default=None, ge=0)
    """ResourceQuota on requests.nvidia.com/gpu. Default: none."""
