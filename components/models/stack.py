"""The whole stack configuration, as Pulumi.<stack>.yaml holds it under `gpu-training:`."""

from __future__ import annotations

from pydantic import Field

from components.models.base import Spec
from components.models.cluster import ClusterSpec
from components.models.fleet import FleetSpec
from components.models.health import HealthSpec
from components.models.identity import ServiceAccountSpec
from components.models.images import ImagesSpec
from components.models.job import Launcher, TrainingJobSpec
from components.models.network import NetworkConfig, NetworkSpec
from components.models.nodepool import NodePoolSpec
from components.models.platform import (
    AddonsSpec,
    GpuOperatorSpec,
    MonitoringSpec,
    NamespaceSpec,
    SchedulerSpec,
    TrainerSpec,
    TrainingOperatorSpec,
)
from components.models.storage import StorageConfig

CONFIG_NAMESPACE = "gpu-training"
"""The Pulumi config namespace: keys are `gpu-training:<key>`."""


class StackConfig(Spec):
    """Everything one stack (one environment) declares."""

    cluster: ClusterSpec
    """The cluster: provider aws, gcp or existing. Required."""
    node_pools: list[NodePoolSpec] = Field(default_factory=list)
    """GPU node pools. Default: none."""
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    """Multus, NADs, RDMA. Default: Multus on, no networks."""
    gpu_operator: GpuOperatorSpec = Field(default_factory=GpuOperatorSpec)
    """NVIDIA GPU Operator. Default: enabled."""
    training_operator: TrainingOperatorSpec = Field(default_factory=TrainingOperatorSpec)
    """Kubeflow Training Operator and MPI Operator, the legacy path. Default: each where a job of the stack uses it."""
    trainer: TrainerSpec = Field(default_factory=TrainerSpec)
    """Kubeflow Trainer v2 and JobSet. Default: installed, unless the stack runs no scheduler."""
    default_launcher: Launcher | None = None
    """What a job that names no launcher becomes: trainjob | pytorch | mpi | tensorflow | indexed. Default: trainjob
    where the stack runs Trainer, else pytorch; `pulumi up` on a stack deployed before release 0.3.0 keeps the
    kind each such job runs as until this or the job's launcher is set."""
    scheduler: SchedulerSpec = Field(default_factory=SchedulerSpec)
    """Gang scheduler and queues. Default: Volcano, no queues."""
    storage: StorageConfig = Field(default_factory=StorageConfig)
    """Checkpoint and dataset volumes. Default: none."""
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    """Monitoring the cluster has. Default: no Prometheus Operator."""
    addons: AddonsSpec = Field(default_factory=AddonsSpec)
    """Who installs the add-ons: the stack, or another tool while the stack makes their objects. Default: the stack."""
    health: HealthSpec = Field(default_factory=HealthSpec)
    """Healthy GPU nodes: run-time fault detection and repair. Default: repair on, with the provider's agent."""
    images: ImagesSpec = Field(default_factory=ImagesSpec)
    """Where every image comes from: a registry mirror, and the checks' kubectl image. Default: upstream."""
    namespaces: list[NamespaceSpec] = Field(default_factory=list)
    """Namespaces to create with their GPU quotas; namespaces used elsewhere are created too.
    Default: none."""
    service_accounts: list[ServiceAccountSpec] = Field(default_factory=list)
    """ServiceAccounts the stack makes for its jobs, each with its cloud identity (EKS Pod Identity, GKE Workload
    Identity) or annotations. Default: none."""
    jobs: list[TrainingJobSpec] = Field(default_factory=list)
    """TrainingJobs (inline, or paths to YAML files relative to the stack file). Default: none."""
    fleet: FleetSpec | None = None
    """Makes this stack a fleet's manager (Kueue's MultiKueue): `cluster` holds the queues, the workers run the
    jobs, and `jobs` are dispatched to the workers that can run them (docs/fleet.md). Default: none (one
    cluster)."""

    @classmethod
    def config_keys(cls) -> tuple[str, ...]:
        """The config keys a stack file may set, camelCase."""
        return tuple(field.alias or name for name, field in cls.model_fields.items())

    @property
    def all_networks(self) -> list[NetworkSpec]:
        """Every NetworkAttachmentDefinition: network.networks, then the NADs each pool's rails make."""
        return [*self.network.networks, *(n for pool in self.node_pools for n in pool.rail_networks())]

    @property
    def runs_gpu_operator(self) -> bool:
        """Whether the stack installs the GPU Operator: as `gpuOperator.enabled` says, else everywhere
        but GKE, whose GPU pools come with GKE's own driver and device plugin."""
        enabled = self.gpu_operator.enabled
        return enabled if enabled is not None else self.cluster.provider != "gcp"

    @property
    def runs_gpu_driver(self) -> bool:
        """Whether the GPU Operator runs the containerized driver: as `gpuOperator.driver` says, else only on
        existing clusters (the EKS accelerated AMI and GKE's managed drivers ship their own)."""
        driver = self.gpu_operator.driver
        return self.runs_gpu_operator and (driver if driver is not None else self.cluster.provider == "existing")
