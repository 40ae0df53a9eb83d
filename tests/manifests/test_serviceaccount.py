"""A job's serviceAccount on every pod of every launcher (the MPIJob's launcher too, a TrainJob's through its
runtime patch), and a job waits for the ServiceAccount the stack makes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from components.manifests import trainingjob
from components.manifests.plan import JobPlan, plan
from components.manifests.references import references
from components.manifests.trainjob import MANAGER
from tests.support.factories import job, pool, with_trainer
from tests.support.schemas import assert_valid

LAUNCHERS = [
    ("pytorch", None),
    ("mpi", None),
    ("tensorflow", None),
    ("indexed", None),
    ("trainjob", "torch"),
    ("trainjob", "mpi"),
    ("trainjob", "deepspeed"),
]


def planned(launcher: str, runtime: str | None, **fields: Any) -> JobPlan:
    fields = {"launcher": launcher, **({"runtime": runtime} if runtime else {}), **fields}
    return plan(job(**fields), with_trainer(pool("roce")), "volcano", "research")


def pod_specs(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every pod spec an object makes: each replica's template, or each replicated job of a TrainJob's patch."""
    if obj["kind"] == "TrainJob":
        (patch,) = obj["spec"]["runtimePatches"]
        assert patch["manager"] == MANAGER
        for replicated in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]:
            yield replicated["template"]["spec"]["template"].get("spec", {})
        return
    replicas = obj["spec"].get("pytorchReplicaSpecs") or obj["spec"].get("mpiReplicaSpecs")
    replicas = replicas or obj["spec"].get("tfReplicaSpecs")
    if replicas is None:
        yield obj["spec"]["template"]["spec"]
        return
    for replica in replicas.values():
        yield replica["template"]["spec"]


@pytest.mark.parametrize(("launcher", "runtime"), LAUNCHERS)
def test_every_pod_of_every_launcher_runs_as_the_jobs_service_account(launcher: str, runtime: str | None) -> None:
    objects = trainingjob.objects(planned(launcher, runtime, serviceAccount="trainer"))
    workload = trainingjob.workload(objects)
    specs = list(pod_specs(workload))
    expected = {"pytorch": 2, "mpi": 2, "tensorflow": 2, "indexed": 1}.get(launcher, 1 if runtime == "torch" else 2)
    assert len(specs) == expected, "every replica: master and worker, launcher and worker, chief and worker"
    assert all(spec["serviceAccountName"] == "trainer" for spec in specs)
    assert_valid(*objects)


@pytest.mark.parametrize(("launcher", "runtime"), LAUNCHERS)
def test_without_a_service_account_no_pod_names_one(launcher: str, runtime: str | None) -> None:
    objects = trainingjob.objects(planned(launcher, runtime))
    assert all("serviceAccountName" not in spec for spec in pod_specs(trainingjob.workload(objects)))


def test_a_job_waits_for_its_service_account() -> None:
    assert "ServiceAccount/training/trainer" in references(planned("pytorch", None, serviceAccount="trainer"))
    assert not any(k.startswith("ServiceAccount/") for k in references(planned("pytorch", None)))
