"""Kubeflow Trainer v2: installed only when on, after Volcano, owning TrainJob, runtimes and JobSet objects."""

from __future__ import annotations

from components.addons import trainer
from components.addons.plan import plan
from components.stack import Stack
from tests.addons.stacks import stack_file, trainer_topology


def without_trainer() -> Stack:
    """dev with Trainer off (and so without its TrainJobs)."""
    return stack_file("dev", trainer={"enabled": False}, jobs=[])


def test_trainer_installs_only_when_enabled() -> None:
    assert trainer.release(without_trainer()) is None
    assert trainer.NAME not in plan(without_trainer()).names
    release = trainer.release(trainer_topology())
    assert (release.name, release.namespace) == ("kubeflow-trainer", "kubeflow-system")
    assert (release.chart.chart, release.chart.version) == ("oci://ghcr.io/kubeflow/charts/kubeflow-trainer", "2.3.0")


def test_trainer_brings_its_crds_and_jobset_but_no_builtin_runtimes() -> None:
    assert trainer.release(trainer_topology()).values == {
        "crds": {"enabled": True},
        "jobset": {"install": True},
        "runtimes": {"defaultEnabled": False},
    }


def test_trainer_waits_for_volcano_only_when_volcano_schedules() -> None:
    assert trainer.release(trainer_topology()).needs == ("volcano",)
    kueue = stack_file("gke", trainer={"enabled": True})
    assert kueue.scheduler == "kueue" and trainer.release(kueue).needs == ()
    names = [r.name for r in plan(trainer_topology()).releases]
    assert names.index("volcano") < names.index("kubeflow-trainer")


def test_trainer_objects_wait_for_the_trainer_install() -> None:
    addons = plan(trainer_topology())
    objects = [
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"},
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime"},
        {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet"},
    ]
    assert [addons.owner(obj) for obj in objects] == ["kubeflow-trainer"] * 3
    assert plan(without_trainer()).owner(objects[0]) is None, "no owner when the stack does not install it"
