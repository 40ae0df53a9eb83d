"""Tests for the PyTorchJob builder and the torchrun flags it runs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.manifests.gang import KUEUE_QUEUE_LABEL
from components.manifests.plan import plan
from components.manifests.pytorchjob import pytorchjob
from tests.support.factories import job, planned, pool
from tests.support.schemas import assert_valid


def replica_specs(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["pytorchReplicaSpecs"]


def pod_spec(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return replica_specs(obj)[role]["template"]["spec"]


def container(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return pod_spec(obj, role)["containers"][0]


def flag(args: list[str], name: str) -> str:
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"{name}=")]
    assert len(values) == 1, (name, args)
    return values[0]


def test_is_a_kubeflow_v1_pytorchjob_named_after_the_job() -> None:
    obj = pytorchjob(planned(name="llama-finetune", namespace="research"))
    assert (obj["apiVersion"], obj["kind"]) == ("kubeflow.org/v1", "PyTorchJob")
    assert (obj["metadata"]["name"], obj["metadata"]["namespace"]) == ("llama-finetune", "research")
    assert obj["metadata"]["labels"]["app.kubernetes.io/instance"] == "llama-finetune"


def test_one_node_is_a_master_only() -> None:
    replicas = replica_specs(pytorchjob(planned(nodes=1)))
    assert list(replicas) == ["Master"]
    assert replicas["Master"]["replicas"] == 1


def test_four_nodes_are_one_master_and_three_workers() -> None:
    replicas = replica_specs(pytorchjob(planned(nodes=4)))
    assert replicas["Master"]["replicas"] == 1
    assert replicas["Worker"]["replicas"] == 3


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(1, 16), gpus=st.integers(1, 8))
def test_replicas_add_up_to_the_nodes_and_torchrun_spans_them(nodes: int, gpus: int) -> None:
    obj = pytorchjob(plan(job(nodes=nodes, gpusPerNode=gpus), pool("tcp", maxNodes=16)))
    replicas = replica_specs(obj)
    assert sum(r["replicas"] for r in replicas.values()) == nodes
    assert obj["spec"]["nprocPerNode"] == str(gpus)
    for role in replicas:
        args = container(obj, role)["args"]
        assert flag(args, "--nnodes") == str(nodes)
        assert flag(args, "--nproc_per_node") == str(gpus)
        assert container(obj, role)["resources"]["limits"]["nvidia.com/gpu"] == str(gpus)


def test_torchrun_runs_the_program_after_its_flags() -> None:
    obj = pytorchjob(planned(nodes=4, command=["train.py", "--model_name=meta-llama/Llama-3.1-70B", "--batch_size=4"]))
    for role in ("Master", "Worker"):
        body = container(obj, role)
        assert body["command"] == ["torchrun"]
        assert body["args"] == [
            "--nnodes=4",
            "--nproc_per_node=8",
            "--rdzv_backend=c10d",
            "--rdzv_endpoint=$(MASTER_ADDR):$(MASTER_PORT)",
            "--max_restarts=3",
            "train.py",
            "--model_name=meta-llama/Llama-3.1-70B",
            "--batch_size=4",
        ]


def test_nproc_per_node_defaults_to_the_pools_gpus() -> None:
    obj = pytorchjob(planned(nodes=2))
    assert obj["spec"]["nprocPerNode"] == "8"
    assert flag(container(obj, "Master")["args"], "--nproc_per_node") == "8"


def test_nproc_per_node_is_a_string() -> None:
    assert isinstance(pytorchjob(planned(gpusPerNode=4))["spec"]["nprocPerNode"], str)


@pytest.mark.parametrize("python", ["python", "python3"])
def test_a_python_command_loses_its_interpreter(python: str) -> None:
    obj = pytorchjob(planned(command=[python, "train.py", "--epochs=3"]))
    args = container(obj, "Master")["args"]
    assert args[-2:] == ["train.py", "--epochs=3"]
    assert python not in args


def test_elastic_job_is_workers_only_with_an_elastic_policy() -> None:
    obj = pytorchjob(planned(nodes=3, elastic={"minNodes": 2, "maxNodes": 4, "maxRestarts": 10}))
    replicas = replica_specs(obj)
    assert list(replicas) == ["Worker"]
    assert replicas["Worker"]["replicas"] == 3
    policy = obj["spec"]["elasticPolicy"]
    assert (policy["minReplicas"], policy["maxReplicas"], policy["maxRestarts"]) == (2, 4, 10)
    assert policy["rdzvBackend"] == "c10d"


def test_elastic_job_starts_on_min_nodes_by_default() -> None:
    obj = pytorchjob(planned(nodes=None, elastic={"minNodes": 2, "maxNodes": 4}))
    assert replica_specs(obj)["Worker"]["replicas"] == 2


def test_elastic_torchrun_flags() -> None:
    obj = pytorchjob(planned(nodes=2, gpusPerNode=4, elastic={"minNodes": 1, "maxNodes": 4, "maxRestarts": 7}))
    assert container(obj, "Worker")["args"] == [
        "--nnodes=1:4",
        "--nproc_per_node=4",
        "--rdzv_backend=c10d",
        "--rdzv_endpoint=$(PET_RDZV_ENDPOINT)",
        "--max_restarts=7",
        "train.py",
        "--epochs=1",
    ]


def test_a_fixed_size_job_has_no_elastic_policy_and_restarts_in_place() -> None:
    obj = pytorchjob(planned(nodes=2))
    assert "elasticPolicy" not in obj["spec"]
    assert "--max_restarts=3" in container(obj, "Master")["args"]
    assert "--max_restarts=1" in container(pytorchjob(planned(nodes=2, maxRestarts=1)), "Master")["args"]


def test_backoff_limit_is_whole_job_retries_counted_as_the_operator_counts_restarts() -> None:
    # The Training Operator sums container restarts over the job's pods; one fault restarts every rank.
    assert pytorchjob(planned(nodes=2, backoffLimit=7))["spec"]["runPolicy"]["backoffLimit"] == 14
    assert pytorchjob(planned(nodes=4))["spec"]["runPolicy"]["backoffLimit"] == 12
    assert pytorchjob(planned(nodes=4, restartPolicy="Never"))["spec"]["runPolicy"]["backoffLimit"] == 3, (
        "with Never the operator counts no restarts"
    )


def test_a_failed_job_releases_its_gpus() -> None:
    policy = pytorchjob(planned(nodes=2))["spec"]["runPolicy"]
    assert policy["cleanPodPolicy"] == "Running"
    assert "ttlSecondsAfterFinished" not in policy, "Pulumi would recreate a job the operator deleted"


def test_the_nccl_watchdog_defaults_can_be_overridden() -> None:
    env = {e["name"]: e["value"] for e in container(pytorchjob(planned(nodes=2)), "Master")["env"] if "value" in e}
    assert env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"
    assert env["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "1"
    assert env["TORCH_NCCL_TRACE_BUFFER_SIZE"] == "20000"
    mine = pytorchjob(planned(nodes=2, env={"TORCH_NCCL_DUMP_ON_TIMEOUT": "0"}))
    assert {e["name"]: e.get("value") for e in container(mine, "Master")["env"]}["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "0"


def test_restart_policy_defaults_to_on_failure_and_can_be_never() -> None:
    assert replica_specs(pytorchjob(planned()))["Master"]["restartPolicy"] == "OnFailure"
    assert replica_specs(pytorchjob(planned(restartPolicy="Never")))["Master"]["restartPolicy"] == "Never"


def test_volcano_gangs_the_whole_job_in_its_queue() -> None:
    obj = pytorchjob(planned("tcp", "volcano", "research", nodes=4))
    assert obj["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 4, "queue": "research"}
    for role in ("Master", "Worker"):
        assert pod_spec(obj, role)["schedulerName"] == "volcano"
    assert KUEUE_QUEUE_LABEL not in obj["metadata"]["labels"]


def test_volcano_without_a_queue_uses_the_default_queue() -> None:
    policy = pytorchjob(planned("tcp", "volcano"))["spec"]["runPolicy"]["schedulingPolicy"]
    assert policy["queue"] == "default"


def test_volcano_gang_of_an_elastic_job_is_its_min_nodes() -> None:
    obj = pytorchjob(planned("tcp", "volcano", "research", nodes=3, elastic={"minNodes": 2, "maxNodes": 4}))
    assert obj["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] == 2


def test_kueue_labels_the_job_with_its_queue_and_sets_no_scheduling_policy() -> None:
    obj = pytorchjob(planned("tcp", "kueue", "research", nodes=2))
    assert obj["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "research"
    assert "schedulingPolicy" not in obj["spec"]["runPolicy"]
    for role in ("Master", "Worker"):
        assert "schedulerName" not in pod_spec(obj, role)


def test_the_jobs_own_queue_wins_over_the_stack_default() -> None:
    obj = pytorchjob(plan(job(scheduler={"queue": "urgent"}), pool("tcp"), "kueue", "research"))
    assert obj["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "urgent"


def test_without_a_scheduler_there_is_no_gang_and_no_queue() -> None:
    obj = pytorchjob(planned("tcp", "none", nodes=2))
    assert "schedulingPolicy" not in obj["spec"]["runPolicy"]
    assert KUEUE_QUEUE_LABEL not in obj["metadata"]["labels"]
    assert "schedulerName" not in pod_spec(obj, "Master")


def test_priority_class_reaches_the_gang_and_every_pod() -> None:
    obj = pytorchjob(plan(job(nodes=2, scheduler={"priorityClass": "high"}), pool("tcp"), "volcano", "research"))
    assert obj["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"] == "high"
    for role in ("Master", "Worker"):
        assert pod_spec(obj, role)["priorityClassName"] == "high"


def test_priority_class_reaches_the_pods_under_kueue() -> None:
    obj = pytorchjob(plan(job(nodes=2, scheduler={"priorityClass": "high"}), pool("tcp"), "kueue", "research"))
    for role in ("Master", "Worker"):
        assert pod_spec(obj, role)["priorityClassName"] == "high"


def test_no_priority_class_by_default() -> None:
    obj = pytorchjob(planned("tcp", "volcano", nodes=2))
    assert "priorityClass" not in obj["spec"]["runPolicy"]["schedulingPolicy"]
    assert "priorityClassName" not in pod_spec(obj, "Master")


def test_every_replica_runs_a_container_named_pytorch() -> None:
    obj = pytorchjob(planned(nodes=4))
    for role in ("Master", "Worker"):
        assert [c["name"] for c in pod_spec(obj, role)["containers"]] == ["pytorch"]
    elastic = pytorchjob(planned(nodes=2, elastic={"minNodes": 1, "maxNodes": 4}))
    assert container(elastic, "Worker")["name"] == "pytorch"


def test_roles_are_labelled_on_the_pods() -> None:
    obj = pytorchjob(planned(nodes=2))
    roles = {
        r: replica_specs(obj)[r]["template"]["metadata"]["labels"]["gpu-training/role"] for r in ("Master", "Worker")
    }
    assert roles == {"Master": "master", "Worker": "worker"}


@pytest.mark.parametrize("fabric", ["tcp", "roce", "infiniband", "efa"])
@pytest.mark.parametrize("scheduler", ["none", "volcano", "kueue"])
@pytest.mark.parametrize("elastic", [None, {"minNodes": 1, "maxNodes": 4, "maxRestarts": 5}])
def test_validates_against_the_pytorchjob_schema(fabric: str, scheduler: str, elastic: dict[str, int] | None) -> None:
    fields: dict[str, Any] = {
        "nodes": 2,
        "resources": {"cpu": "32", "memory": "512Gi"},
        "scheduler": {"priorityClass": "high"},
    }
    if elastic:
        fields["elastic"] = elastic
    queue = "research" if scheduler != "none" else None
    assert_valid(pytorchjob(plan(job(**fields), pool(fabric), scheduler, queue)))  # type: ignore[arg-type]
