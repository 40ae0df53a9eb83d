"""Typed configuration: the stack, its pools, networks, storage, operators and TrainingJobs."""

from components.models.base import Spec
from components.models.cluster import AwsClusterSpec, ClusterSpec, ExistingClusterSpec, GcpClusterSpec
from components.models.fleet import FleetSpec, WorkerSpec
from components.models.images import ImagesSpec
from components.models.job import (
    CheckpointSpec,
    DeepSpeedSpec,
    ElasticSpec,
    JobSchedulerSpec,
    Launcher,
    ResourcesSpec,
    Runtime,
    ScratchSpec,
    TopologySpec,
    TrainingJobSpec,
    VolumeMountSpec,
)
from components.models.network import IpamSpec, NetworkConfig, NetworkSpec, RdmaSpec
from components.models.nodepool import CapacitySpec, Fabric, NodePoolSpec, Taint
from components.models.platform import (
    AddonsSpec,
    GpuOperatorSpec,
    NamespaceSpec,
    QueueSpec,
    SchedulerSpec,
    SchedulerTopologySpec,
    TopologyLevelSpec,
    TrainerSpec,
    TrainingOperatorSpec,
)
from components.models.stack import CONFIG_NAMESPACE, StackConfig
from components.models.storage import StorageConfig, VolumeSpec

__all__ = [
    "CONFIG_NAMESPACE",
    "AddonsSpec",
    "AwsClusterSpec",
    "CapacitySpec",
    "CheckpointSpec",
    "ClusterSpec",
    "DeepSpeedSpec",
    "ElasticSpec",
    "ExistingClusterSpec",
    "Fabric",
    "FleetSpec",
    "GcpClusterSpec",
    "GpuOperatorSpec",
    "ImagesSpec",
    "IpamSpec",
    "JobSchedulerSpec",
    "Launcher",
    "NamespaceSpec",
    "NetworkConfig",
    "NetworkSpec",
    "NodePoolSpec",
    "QueueSpec",
    "RdmaSpec",
    "ResourcesSpec",
    "Runtime",
    "SchedulerSpec",
    "SchedulerTopologySpec",
    "ScratchSpec",
    "Spec",
    "StackConfig",
    "StorageConfig",
    "Taint",
    "TopologyLevelSpec",
    "TopologySpec",
    "TrainerSpec",
    "TrainingJobSpec",
    "TrainingOperatorSpec",
    "VolumeMountSpec",
    "VolumeSpec",
    "WorkerSpec",
]
