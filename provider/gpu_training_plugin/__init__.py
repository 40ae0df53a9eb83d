"""The gpu-training component plugin: TrainingJob and Platform for every Pulumi language."""

from components.release import version

from .fronts import Platform, TrainingJob

COMPONENTS = [TrainingJob, Platform]
"""What the plugin serves."""


__all__ = ["COMPONENTS", "Platform", "TrainingJob", "version"]
