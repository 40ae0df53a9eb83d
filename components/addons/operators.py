"""The Kubeflow Training Operator (PyTorchJob, TFJob) and the MPI Operator (MPIJob v2beta1)."""

from __future__ import annotations

from typing import Any

from components.addons.install import RemoteInstall
from components.addons.scheduler import VOLCANO_NAME
from components.images import rewrite
from components.stack import Stack
from components.versions import MPI_OPERATOR, TRAINING_OPERATOR
from components.wellknown import MPI_OPERATOR_INSTALL as MPI_NAME
from components.wellknown import TRAINING_OPERATOR_INSTALL as TRAINING_NAME

# The Training Operator v1 serves MPIJob v1 under the same CRD name (mpijobs.kubeflow.org) as the
# MPI Operator's v2beta1; only one of them may own it.
MPIJOB_CRD = "mpijobs.kubeflow.org"
TRAINING_SCHEMES = ("pytorchjob", "tfjob")
PYTORCH_INIT_IMAGE = "alpine:3.10"
"""The init container the Training Operator v1.9.4 adds to PyTorchJob workers, waiting for the master's name to
resolve (pkg/config/config.go PyTorchInitContainerImageDefault; flag --pytorch-init-container-image)."""


def _needs(stack: Stack) -> tuple[str, ...]:
    return (VOLCANO_NAME,) if stack.scheduler == "volcano" else ()


def training_operator(stack: Stack) -> RemoteInstall | None:
    """The Training Operator's standalone overlay, applied server-side (its CRDs exceed the
    client-side annotation limit), gang-scheduling with Volcano when that is the scheduler."""
    if not stack.config.training_operator.enabled:
        return None
    patches = []
    if stack.config.training_operator.mpi:
        patches.append(f"the {MPIJOB_CRD} CRD is left to the MPI Operator; only {', '.join(TRAINING_SCHEMES)} run")
    if stack.scheduler == "volcano":
        patches.append("--gang-scheduler-name=volcano")
    if stack.config.images.mirror:
        patches.append("every image through images.registryMirror, the PyTorchJob workers' init container too")
    return RemoteInstall(TRAINING_NAME, (TRAINING_OPERATOR,), tuple(patches), needs=_needs(stack))


def training_operator_patch(stack: Stack):
    """The function that patches each upstream object of the Training Operator (None drops it)."""
    mpi = stack.config.training_operator.mpi
    gang = stack.scheduler == "volcano"
    mirror = stack.config.images.mirror

    def patch(obj: dict[str, Any]) -> dict[str, Any] | None:
        if mpi and obj.get("kind") == "CustomResourceDefinition" and obj["metadata"]["name"] == MPIJOB_CRD:
            return None
        if obj.get("kind") == "Deployment":
            args = [f"--enable-scheme={s}" for s in TRAINING_SCHEMES] if mpi else []
            if gang:
                args.append("--gang-scheduler-name=volcano")
            if mirror and (image := rewrite(mirror, PYTORCH_INIT_IMAGE)) != PYTORCH_INIT_IMAGE:
                # The operator starts this image itself, in the workers it makes: only its flag moves it.
                args.append(f"--pytorch-init-container-image={image}")
            _add_args(obj, "training-operator", args)
        return obj

    return patch


def mpi_operator(stack: Stack) -> RemoteInstall | None:
    """The MPI Operator (v2beta1), gang-scheduling with Volcano when that is the scheduler."""
    if not stack.config.training_operator.mpi:
        return None
    patches = ("--gang-scheduling=volcano",) if stack.scheduler == "volcano" else ()
    needs = (*_needs(stack), TRAINING_NAME) if stack.config.training_operator.enabled else _needs(stack)
    return RemoteInstall(MPI_NAME, (MPI_OPERATOR,), patches, needs=needs)


def mpi_operator_patch(stack: Stack):
    """The function that patches each upstream object of the MPI Operator."""
    gang = stack.scheduler == "volcano"

    def patch(obj: dict[str, Any]) -> dict[str, Any] | None:
        if gang and obj.get("kind") == "Deployment":
            _add_args(obj, "mpi-operator", ["--gang-scheduling=volcano"])
        return obj

    return patch


def _add_args(deployment: dict[str, Any], container: str, args: list[str]) -> None:
    """Set flags on a container: ours replace any upstream value of the same single-valued flag."""
    single = {a.split("=", 1)[0] for a in args if not a.startswith("--enable-scheme=")}
    for spec in deployment["spec"]["template"]["spec"]["containers"]:
        if spec.get("name") == container:
            kept = [a for a in spec.get("args", []) if a.split("=", 1)[0] not in single and a not in args]
            spec["args"] = kept + args
