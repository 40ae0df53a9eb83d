"""Kubeflow Trainer v2 (TrainJob, training runtimes) and the JobSet controller it runs jobs on."""

from __future__ import annotations

from components.addons.install import HelmRelease
from components.addons.scheduler import VOLCANO_NAME
from components.stack import Stack
from components.versions import TRAINER
from components.wellknown import TRAINER_INSTALL as NAME
from components.wellknown import TRAINER_NAMESPACE as NAMESPACE


def release(stack: Stack) -> HelmRelease | None:
    """The Trainer chart with its CRDs and JobSet, when trainer is on; no built-in runtimes."""
    if not stack.config.trainer.enabled:
        return None
    values = {
        "crds": {"enabled": True},
        "jobset": {"install": True},
        # The platform writes each pool's ClusterTrainingRuntimes itself.
        "runtimes": {"defaultEnabled": False},
    }
    # Trainer's Volcano plugin watches PodGroups only if their CRD exists when the manager starts.
    needs = (VOLCANO_NAME,) if stack.scheduler == "volcano" else ()
    return HelmRelease(NAME, TRAINER, NAMESPACE, values, needs=needs)
