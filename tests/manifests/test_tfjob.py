"""Tests for the TFJob builder."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.manifests.gang import KUEUE_QUEUE_LABEL
from components.manifests.plan import plan
from components.manifests.tfjob import tfjob
from tests.support.factories import job, pool
from tests.support.schemas import assert_valid


def tf(fabric: str = "tcp", scheduler: str = "none", queue: str | None = None, **fields: Any) -> dict[str, Any]:
    return tfjob(plan(job(launcher="tensorflow", **fields), pool(fabric), scheduler, queue))  # type: ignore[arg-type]


def replicas(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["tfReplicaSpecs"]


def container(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return replicas(obj)[role]["template"]["spec"]["containers"][0]


def test_is_a_kubeflow_v1_tfjob() -> None:
    obj = tf(name="resnet-train")
    assert (obj["apiVersion"], obj["kind"], obj["metadata"]["name"]) == ("kubeflow.org/v1", "TFJob", "resnet-train")


def test_one_node_is_a_chief_only() -> None:
    assert {role: r["replicas"] for role, r in replicas(tf(nodes=1)).items()} == {"Chief": 1}


def test_four_nodes_are_a_chief_and_three_workers() -> None:
    assert {role: r["replicas"] for role, r in replicas(tf(nodes=4)).items()} == {"Chief": 1, "Worker": 3}


@settings(max_examples=30, deadline=None)
@given(nodes=st.integers(1, 16))
def test_chief_and_workers_add_up_to_the_nodes(nodes: int) -> None:
    obj = tfjob(plan(job(launcher="tensorflow", nodes=nodes), pool("tcp", maxNodes=16)))
    assert sum(r["replicas"] for r in replicas(obj).values()) == nodes
    assert replicas(obj)["Chief"]["replicas"] == 1


def test_containers_are_named_tensorflow() -> None:
    obj = tf(nodes=2)
    for role in ("Chief", "Worker"):
        assert [c["name"] for c in replicas(obj)[role]["template"]["spec"]["containers"]] == ["tensorflow"]


def test_every_replica_gets_its_gpus_as_limits_and_requests() -> None:
    obj = tf(nodes=2, gpusPerNode=4)
    for role in ("Chief", "Worker"):
        resources = container(obj, role)["resources"]
        assert resources["limits"]["nvidia.com/gpu"] == "4"
        assert resources["requests"]["nvidia.com/gpu"] == "4"


def test_the_command_is_run_as_given() -> None:
    obj = tf(nodes=2, command=["python", "train.py", "--strategy=multi_worker_mirrored"])
    for role in ("Chief", "Worker"):
        body = container(obj, role)
        assert body["command"] == ["python", "train.py", "--strategy=multi_worker_mirrored"]
        assert "args" not in body


def test_a_bare_script_gets_the_interpreter_and_no_launcher() -> None:
    body = container(tf(command=["train.py", "--epochs=3"]), "Chief")
    assert body["command"] == ["python", "train.py", "--epochs=3"]
    assert "torchrun" not in body["command"]


def test_roles_are_labelled() -> None:
    obj = tf(nodes=2)
    labels = {
        role: replicas(obj)[role]["template"]["metadata"]["labels"]["gpu-training/role"] for role in replicas(obj)
    }
    assert labels == {"Chief": "chief", "Worker": "worker"}


def test_volcano_gangs_every_replica() -> None:
    obj = tf("tcp", "volcano", "research", nodes=3)
    assert obj["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 3, "queue": "research"}
    for role in ("Chief", "Worker"):
        assert replicas(obj)[role]["template"]["spec"]["schedulerName"] == "volcano"


def test_kueue_labels_the_tfjob() -> None:
    obj = tf("tcp", "kueue", "research")
    assert obj["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "research"
    assert "schedulingPolicy" not in obj["spec"]["runPolicy"]


def test_backoff_and_restart_policy() -> None:
    obj = tf(backoffLimit=5, restartPolicy="Never")
    assert obj["spec"]["runPolicy"]["backoffLimit"] == 5
    assert replicas(obj)["Chief"]["restartPolicy"] == "Never"
    assert replicas(tf())["Chief"]["restartPolicy"] == "OnFailure"


@pytest.mark.parametrize("fabric", ["tcp", "roce", "efa"])
@pytest.mark.parametrize("scheduler", ["none", "volcano", "kueue"])
def test_validates_against_the_tfjob_schema(fabric: str, scheduler: str) -> None:
    queue = "research" if scheduler != "none" else None
    assert_valid(tf(fabric, scheduler, queue, nodes=3, resources={"cpu": "16", "memory": "128Gi"}))


def test_a_tfjob_counts_whole_job_retries_over_its_pods_and_cleans_up() -> None:
    policy = tfjob(plan(job(launcher="tensorflow", command=["train.py"], nodes=3), pool("tcp")))["spec"]["runPolicy"]
    assert policy["backoffLimit"] == 9, "the operator sums container restarts over the Chief and Workers"
    assert policy["cleanPodPolicy"] == "Running"
