"""Training Operator and MPI Operator: one owner for the MPIJob CRD, Volcano gang scheduling."""

from __future__ import annotations

import copy
from typing import Any

from components.addons import operators
from tests.addons.stacks import stack_file

TRAINING_DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "training-operator", "namespace": "kubeflow"},
    "spec": {"template": {"spec": {"containers": [{"name": "training-operator", "command": ["/manager"]}]}}},
}
MPI_DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "mpi-operator", "namespace": "mpi-operator"},
    "spec": {
        "template": {
            "spec": {
                "containers": [{"name": "mpi-operator", "args": ["-alsologtostderr", "--lock-namespace=mpi-operator"]}]
            }
        }
    },
}


def crd(name: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name}}


def args(deployment: dict[str, Any]) -> list[str]:
    return deployment["spec"]["template"]["spec"]["containers"][0].get("args", [])


def test_training_operator_leaves_mpijobs_to_the_mpi_operator_and_gangs_with_volcano() -> None:
    stack = stack_file("dev")
    install = operators.training_operator(stack)
    assert install.remotes[0].url.endswith("manifests/overlays/standalone?ref=v1.9.4")
    assert install.needs == ("volcano",)
    patch = operators.training_operator_patch(stack)
    assert patch(crd("mpijobs.kubeflow.org")) is None
    assert patch(crd("pytorchjobs.kubeflow.org")) is not None
    deployment = patch(copy.deepcopy(TRAINING_DEPLOYMENT))
    assert args(deployment) == ["--enable-scheme=pytorchjob", "--enable-scheme=tfjob", "--gang-scheduler-name=volcano"]
    assert args(patch(deployment)) == args(deployment), "patching twice changes nothing"


def test_without_the_mpi_operator_the_training_operator_keeps_its_mpijob_crd() -> None:
    stack = stack_file("dev", trainingOperator={"enabled": True, "mpi": False}, jobs=[], scheduler={"type": "none"})
    patch = operators.training_operator_patch(stack)
    assert patch(crd("mpijobs.kubeflow.org")) is not None
    assert args(patch(copy.deepcopy(TRAINING_DEPLOYMENT))) == []
    assert operators.mpi_operator(stack) is None


def test_mpi_operator_gangs_with_volcano_and_waits_for_the_training_operator() -> None:
    stack = stack_file("dev")
    install = operators.mpi_operator(stack)
    assert install.remotes[0].ref == "v0.8.0" and install.needs == ("volcano", "training-operator")
    patched = operators.mpi_operator_patch(stack)(copy.deepcopy(MPI_DEPLOYMENT))
    assert args(patched) == ["-alsologtostderr", "--lock-namespace=mpi-operator", "--gang-scheduling=volcano"]
    kueue = stack_file("gke")
    assert args(operators.mpi_operator_patch(kueue)(copy.deepcopy(MPI_DEPLOYMENT))) == args(MPI_DEPLOYMENT)
