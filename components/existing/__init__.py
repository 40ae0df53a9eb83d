"""An existing Kubernetes cluster: nothing is created cloud-side."""

from components.existing.cluster import ExistingCluster

__all__ = ["ExistingCluster"]
