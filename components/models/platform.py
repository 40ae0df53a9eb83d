"""The operators on the cluster: GPU Operator, Training Operator, and the gang scheduler."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from components.models.base import Count, DnsLabel, ImageRef, Spec, at
from components.versions import TRAINER_MPI_IMAGE


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
    """With rdma: peermem only: MOFED/DOCA-OFED is installed on the hosts, and the GPU Operator builds
    nvidia-peermem against it (driver.rdma.useHostMofed), so no driver container brings it. Anywhere else it
    would do nothing (DMA-BUF needs no MOFED), so it is an error: `rdma: true` here means DMA-BUF, not the
    chart's driver.rdma.enabled. Default: false."""

    @model_validator(mode="after")
    def _host_mofed_needs_peermem(self) -> GpuOperatorSpec:
        # GPU Operator v26.7.0 reads useHostMofed only when driver.rdma.enabled, i.e. for nvidia-peermem
        # (api/nvidia/v1/clusterpolicy_types.go IsHostMOFED; controllers/object_controls.go).
        if not self.use_host_mofed or self.rdma == "peermem":
            return self
        mode = {
            None: "rdma is unset, so pools that run infiniband or roce use DMA-BUF, which needs no MOFED",
            True: "rdma: true here means DMA-BUF, which needs no MOFED (not the chart's driver.rdma.enabled, which "
            "is nvidia-peermem)",
            "dmabuf": "rdma: dmabuf needs no MOFED",
            False: "rdma: false turns GPUDirect RDMA off",
        }[self.rdma]
        raise at(
            "useHostMofed",
            f"has no effect: the hosts' MOFED only matters to nvidia-peermem (rdma: peermem), and {mode}. To build "
            "nvidia-peermem against the hosts' MOFED, set rdma: peermem; to keep DMA-BUF (NVIDIA's recommendation), "
            "drop useHostMofed",
        )


class AddonsSpec(Spec):
    """How the add-ons (the Helm releases and remote installs `render` lists) get onto the cluster."""

    install: bool = True
    """Install them: false when the platform team installs them another way (Argo CD, Flux). Default: true."""


class GrafanaSpec(Spec):
    """How Grafana finds the pack's dashboards: its dashboard sidecar loads ConfigMaps that carry a label."""

    label: str = Field(default="grafana_dashboard", min_length=1, max_length=63)
    """The label key the sidecar looks for (kube-prometheus-stack's `grafana.sidecar.dashboards.label`).
    Default: grafana_dashboard."""
    label_value: str = Field(default="1", max_length=63)
    """Its value (`grafana.sidecar.dashboards.labelValue`). Default: "1"."""
    namespace: DnsLabel | None = None
    """Where the dashboards' ConfigMaps go: a namespace the sidecar searches, which must exist. Default:
    `monitoring.namespace`."""


class MonitoringSpec(Spec):
    """What the cluster monitors with, and the observability pack: GPU, queue and job dashboards, and the alerts
    for GPU faults that must page."""

    prometheus: bool = False
    """A Prometheus Operator of yours runs on the cluster: add the ServiceMonitors (DCGM exporter, Kueue,
    Volcano), and the pack's alerts and dashboards for it. Default: false."""
    install: bool = False
    """Install kube-prometheus-stack (Prometheus Operator, Prometheus, Alertmanager, Grafana, kube-state-metrics)
    in `namespace`, set up for the pack. Default: false."""
    namespace: DnsLabel = "monitoring"
    """The namespace kube-prometheus-stack is installed in, and the dashboards' ConfigMaps go to. Default:
    monitoring."""
    dashboards: bool | None = None
    """Grafana dashboards as ConfigMaps: GPUs (DCGM), queues (Kueue or Volcano) and training jobs. Default: on
    with a Prometheus Operator (`install` or `prometheus`)."""
    alerts: bool | None = None
    """PrometheusRules for the GPU faults that must page (XIDs, ECC, row remaps, NVLink, a GPU off the bus,
    thermal throttling) and idle GPUs in running training jobs. Default: on with a Prometheus Operator where the
    GPU Operator's DCGM exporter runs (not on GKE's managed DCGM, which does not export those fields)."""
    idle_gpu_minutes: Count = Field(default=30, ge=5, le=1440)
    """How long a running training job's GPU may sit idle (under 1% utilization) before its alert fires.
    Default: 30."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels on every ServiceMonitor and PrometheusRule of the pack, for a Prometheus that selects them by label
    (e.g. `release: prometheus`). Default: none (the kube-prometheus-stack `install` brings selects them all)."""
    grafana: GrafanaSpec = Field(default_factory=GrafanaSpec)
    """How Grafana finds the dashboards. Default: kube-prometheus-stack's sidecar label `grafana_dashboard: "1"`."""
    managed_dcgm: bool | None = None
    """GKE: GKE's managed DCGM metrics, collected by Managed Service for Prometheus into Cloud Monitoring (the
    cluster's monitoring config). It needs GKE-managed GPU drivers, so not with the GPU Operator. Default: on for
    GKE clusters whose GPU nodes use GKE's drivers, off elsewhere."""


class PriorityClassSpec(Spec):
    """A PriorityClass jobs can name in scheduler.priorityClass."""

    name: DnsLabel
    """Name. Required."""
    value: Count = Field(ge=-2147483648, le=1000000000)
    """Priority; higher preempts lower. Required."""
    preempting: bool = True
    """Whether pods of this class preempt lower ones. Default: true."""
    description: str = ""
    """What the class is for. Default: empty."""


class TrainingOperatorSpec(Spec):
    """The Kubeflow Training Operator and the MPI Operator."""

    enabled: bool | None = None
    """Install the Training Operator v1 (PyTorchJob, TFJob), the legacy path. Default: on when a job of the stack
    is a PyTorchJob or TFJob, or the stack installed it before; set it for job stacks that submit them."""
    mpi: bool | None = None
    """Install MPI Operator v2beta1 for MPIJobs, the legacy path. Default: on when a job of the stack is an MPIJob,
    or the stack installed it before; set it for job stacks that submit them."""


class TrainerSpec(Spec):
    """Kubeflow Trainer v2 (TrainJob, training runtimes) and JobSet, which it runs on."""

    enabled: bool | None = None
    """Install Kubeflow Trainer v2 and JobSet, and make each GPU pool's ClusterTrainingRuntimes: jobs that name
    no launcher are TrainJobs on them. Default: on, unless `scheduler.type` is none (a cluster run as it is)."""
    mpi_image: ImageRef = Field(default=TRAINER_MPI_IMAGE, min_length=1)
    """The image the nodes of the pools' DeepSpeed and MPI runtimes run: Trainer v2.3 starts them from the
    runtime, not the TrainJob, so a job with another image gets a runtime of its own. It runs sshd as the
    upstream deepspeed-runtime image does (user 1000, /home/mpiuser/.sshd_config, port 2222).
    Default: Trainer's deepspeed-runtime image of the pinned release."""


class QueueSpec(Spec):
    """A queue of GPU capacity that jobs submit to."""

    name: DnsLabel
    """Queue name; jobs refer to it as `scheduler.queue`. Required."""
    gpus: Count = Field(ge=0)
    """GPUs the queue may use at once. Required."""
    weight: Count = Field(default=1, ge=1, le=65535)
    """Share of the cluster when queues compete (the Volcano Queue's weight, at most 65535 in its CRD
    scheduling.volcano.sh/v1beta1 Queue; the Kueue ClusterQueue's fair-sharing weight within its cohort).
    Default: 1."""
    reclaimable: bool = True
    """Whether other queues may reclaim its idle share (Volcano). Default: true."""
    pools: list[DnsLabel] = Field(default_factory=list)
    """Pools whose GPUs the queue draws on (Kueue flavors). Default: every pool."""
    namespaces: list[DnsLabel] = Field(default_factory=list)
    """Namespaces that get a LocalQueue for it (Kueue). Default: every namespace the stack uses."""
    cohort: DnsLabel | None = None
    """Kueue cohort: queues of one cohort borrow each other's idle GPUs, and reclaim what they lent.
    A cohort of its own keeps a queue apart. Default: `gpu-training`, one cohort for every queue of the stack."""
    borrowing_limit: Count | None = Field(default=None, ge=0)
    """GPUs the queue may borrow from its cohort beyond `gpus`, on each of its pools (Kueue).
    Default: none set, so up to what the cohort has idle."""
    lending_limit: Count | None = Field(default=None, ge=0)
    """GPUs of its own quota, on each of its pools, that the queue lends to its cohort while idle (Kueue).
    Default: none set, so all of them."""


class TopologyLevelSpec(Spec):
    """One level of the cluster's network topology, a node label whose value names the domain."""

    name: DnsLabel
    """Short name jobs use in `topology.level`, e.g. rack. Required."""
    node_label: str = Field(min_length=1)
    """The node label, e.g. example.com/rack. Required."""


class SchedulerTopologySpec(Spec):
    """Topology-aware placement: jobs land on nodes close together in the network."""

    enabled: bool = False
    """Place jobs by network topology (a Kueue Topology, or Volcano HyperNodes). Default: false."""
    levels: list[TopologyLevelSpec] = Field(default_factory=list)
    """Existing clusters: the topology's levels, coarsest first; kubernetes.io/hostname is added as the
    finest level `host`. Default: none (on AWS and GCP the levels come from the provider)."""

    @model_validator(mode="after")
    def _distinct(self) -> SchedulerTopologySpec:
        names = [level.name for level in self.levels]
        labels = [level.node_label for level in self.levels]
        for index, level in enumerate(self.levels):
            if level.name == "host" or level.node_label == "kubernetes.io/hostname":
                raise at(f"levels[{index}]", "'host' (kubernetes.io/hostname) is the finest level, added by itself")
            if names.index(level.name) != index or labels.index(level.node_label) != index:
                raise at(f"levels[{index}]", f"level '{level.name}' ({level.node_label}) is declared twice")
        return self


class SchedulerSpec(Spec):
    """The gang scheduler, so that a multi-node job starts whole or not at all."""

    type: Literal["volcano", "kueue", "none"] = "volcano"
    """volcano | kueue | none. Default: volcano."""
    queues: list[QueueSpec] = Field(default_factory=list)
    """Queues. Default: none (Volcano's `default` queue)."""
    priority_classes: list[PriorityClassSpec] = Field(default_factory=list)
    """PriorityClasses to create. Default: none."""
    topology: SchedulerTopologySpec = Field(default_factory=SchedulerTopologySpec)
    """Topology-aware placement. Default: off."""


class NamespaceSpec(Spec):
    """A namespace the platform creates, optionally with a GPU quota."""

    name: DnsLabel
    """Namespace name. Required."""
    gpu_quota: Count | None = Field(default=None, ge=0)
    """ResourceQuota on requests.nvidia.com/gpu. Default: none."""
