"""The components the plugin serves, as the schema analyzer reads them. GENERATED: do not edit.

Made by `python provider/gpu_training_plugin/generate.py` from the Python components (their docstrings
and outputs) and config_types.py; tests/provider checks it is current.
"""

# ruff: noqa: E501
from typing import Any

import pulumi

import components.kubernetes.trainingjob
import components.platform

from . import adapt
from .config_types import StackConfig, TrainingJobArgs


class TrainingJob(components.kubernetes.trainingjob.TrainingJob):
    """A PyTorchJob, MPIJob, TFJob, TrainJob or Indexed Job with everything it needs, placed on a GPU pool."""

    world_size: pulumi.Output[int]
    """Processes across the job: nodes x GPUs per node."""
    objects: pulumi.Output[list[str]]
    """The objects created, as Kind/namespace/name."""
    workload: pulumi.Output[str]
    """The workload object (PyTorchJob, MPIJob, TFJob, TrainJob or Job), as Kind/namespace/name."""

    def __init__(self, name: str, args: TrainingJobArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """The TrainingJob component, from the schema's inputs."""
        fields, keywords = adapt.training_job(args, TrainingJobArgs)
        super().__init__(name, fields, opts=opts, **keywords)


class Platform(components.platform.Platform):
    "A GPU training platform: the cluster (EKS, GKE or existing), its GPU node pools, the add-ons, the platform\nobjects and the training jobs, from the same configuration as a stack file."

    cluster_name: pulumi.Output[str]
    """The cluster's name."""
    kubeconfig: pulumi.Output[str]
    """The cluster's kubeconfig (secret)."""
    scheduler: pulumi.Output[str]
    """The gang scheduler: volcano | kueue | none; a TrainingJob's `schedulerType`."""
    default_queue: pulumi.Output[str | None]
    """The queue of jobs that name none: the first declared; a TrainingJob's `defaultQueue`."""
    pools: pulumi.Output[dict[str, Any]]
    """Each pool resolved (GPUs, fabric, taints, selectors, runtimes), by name; an entry is a TrainingJob's `pool`."""
    storage: pulumi.Output[list[dict[str, Any]]]
    """The declared volumes as config (backend, bucket, use ...); a TrainingJob's `storage`, so a job of another
    program mounts a bucket's claim as this stack's jobs do."""
    runtimes: pulumi.Output[dict[str, dict[str, str]]]
    """Each pool's Kubeflow Trainer ClusterTrainingRuntimes by kind (torch -> <pool>-torch), when trainer is on."""
    platform_objects: pulumi.Output[list[str]]
    """The platform objects created, as Kind/namespace/name."""
    addons: pulumi.Output[list[str]]
    """The add-ons installed."""
    jobs: pulumi.Output[dict[str, Any]]
    """Each job's workload and world size, by namespace/name."""
    fabric_checks: pulumi.Output[dict[str, Any]]
    """Each pool's fabric check: its result, or why it has none."""

    def __init__(self, name: str, args: StackConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        """The Platform component, from the schema's inputs."""
        super().__init__(name, adapt.platform(args, StackConfig), opts)
