"""Tests for the indexed launcher: an Indexed Job, its headless Service and its Volcano PodGroup."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.manifests import indexedjob
from components.manifests.gang import KUEUE_QUEUE_LABEL
from components.manifests.plan import JobPlan, plan
from components.manifests.trainingjob import objects, workload
from tests.support.factories import job, pool
from tests.support.schemas import assert_valid

GROUP_ANNOTATION = "scheduling.k8s.io/group-name"


def indexed(fabric: str = "tcp", scheduler: str = "none", queue: str | None = None, **fields: Any) -> JobPlan:
    return plan(job(launcher="indexed", **fields), pool(fabric), scheduler, queue)  # type: ignore[arg-type]


def by_kind(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    kinds = [o["kind"] for o in objs]
    assert len(kinds) == len(set(kinds)), kinds
    return {o["kind"]: o for o in objs}


def pod(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["template"]


def trainer(obj: dict[str, Any]) -> dict[str, Any]:
    return pod(obj)["spec"]["containers"][0]


def env_of(body: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e for e in body["env"]}


def test_is_an_indexed_batch_job_with_one_pod_per_node() -> None:
    obj = indexedjob.job(indexed(nodes=4))
    assert (obj["apiVersion"], obj["kind"]) == ("batch/v1", "Job")
    spec = obj["spec"]
    assert spec["completionMode"] == "Indexed"
    assert (spec["completions"], spec["parallelism"]) == (4, 4)


@settings(max_examples=30, deadline=None)
@given(nodes=st.integers(1, 16), gpus=st.integers(1, 8))
def test_completions_parallelism_and_torchrun_follow_the_nodes(nodes: int, gpus: int) -> None:
    p = plan(job(launcher="indexed", nodes=nodes, gpusPerNode=gpus), pool("tcp", maxNodes=16))
    obj = indexedjob.job(p)
    assert obj["spec"]["completions"] == obj["spec"]["parallelism"] == nodes
    args = trainer(obj)["args"]
    assert f"--nnodes={nodes}" in args
    assert f"--nproc_per_node={gpus}" in args
    assert trainer(obj)["resources"]["limits"]["nvidia.com/gpu"] == str(gpus)


def test_pods_live_under_the_headless_service() -> None:
    p = indexed(name="llm-finetune")
    service = indexedjob.service(p)
    assert pod(indexedjob.job(p))["spec"]["subdomain"] == service["metadata"]["name"]
    assert service["metadata"]["namespace"] == "training"


def test_service_is_headless_and_publishes_pods_before_they_are_ready() -> None:
    spec = indexedjob.service(indexed())["spec"]
    assert spec["clusterIP"] == "None"
    assert spec["publishNotReadyAddresses"] is True


def test_service_selects_exactly_the_jobs_pods() -> None:
    p = indexed(name="llm-finetune")
    selector = indexedjob.service(p)["spec"]["selector"]
    labels = pod(indexedjob.job(p))["metadata"]["labels"]
    assert selector
    assert selector.items() <= labels.items()
    other = pod(indexedjob.job(indexed(name="other-job")))["metadata"]["labels"]
    assert not selector.items() <= other.items()


def test_service_exposes_the_rendezvous_port() -> None:
    p = indexed(port=29500)
    assert indexedjob.service(p)["spec"]["ports"][0]["port"] == 29500
    assert trainer(indexedjob.job(p))["ports"] == [{"name": "rdzv", "containerPort": 29500, "protocol": "TCP"}]


def test_torchrun_takes_its_rank_from_the_completion_index() -> None:
    body = trainer(indexedjob.job(indexed(name="llm-finetune", nodes=4)))
    assert body["name"] == "trainer"
    assert body["command"] == ["torchrun"]
    assert body["args"] == [
        "--nnodes=4",
        "--nproc_per_node=8",
        "--node_rank=$(JOB_COMPLETION_INDEX)",
        "--rdzv_backend=c10d",
        "--rdzv_endpoint=llm-finetune-0.llm-finetune:29400",
        "--max_restarts=3",
        "train.py",
        "--epochs=1",
    ]


def test_rendezvous_is_pod_zero_of_the_service_on_the_jobs_port() -> None:
    p = indexed(name="llm-finetune", port=30000)
    service = indexedjob.service(p)["metadata"]["name"]
    args = trainer(indexedjob.job(p))["args"]
    assert f"--rdzv_endpoint=llm-finetune-0.{service}:30000" in args
    env = env_of(trainer(indexedjob.job(p)))
    assert env["MASTER_ADDR"]["value"] == f"llm-finetune-0.{service}"
    assert env["MASTER_PORT"]["value"] == "30000"


def test_completion_index_comes_from_the_pod_annotation() -> None:
    env = env_of(trainer(indexedjob.job(indexed())))
    assert env["JOB_COMPLETION_INDEX"] == {
        "name": "JOB_COMPLETION_INDEX",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}},
    }


def test_env_names_are_unique() -> None:
    names = [e["name"] for e in trainer(indexedjob.job(indexed("roce", env={"HF_HOME": "/data"})))["env"]]
    assert len(names) == len(set(names))


def test_a_python_command_loses_its_interpreter() -> None:
    args = trainer(indexedjob.job(indexed(command=["python", "train.py"])))["args"]
    assert args[-1] == "train.py"
    assert "python" not in args


def test_restart_policy_is_never_by_default() -> None:
    assert pod(indexedjob.job(indexed()))["spec"]["restartPolicy"] == "Never"
    assert pod(indexedjob.job(indexed(restartPolicy="OnFailure")))["spec"]["restartPolicy"] == "OnFailure"


def test_backoff_limit_counts_whole_job_retries_of_every_pod() -> None:
    # A fault fails every index (the other ranks lose their collective), and each failed pod counts.
    assert indexedjob.job(indexed(nodes=2))["spec"]["backoffLimit"] == 6
    assert indexedjob.job(indexed(nodes=4, backoffLimit=1))["spec"]["backoffLimit"] == 4
    assert indexedjob.job(indexed(backoffLimit=0))["spec"]["backoffLimit"] == 0


def test_evictions_and_preemptions_do_not_count_against_the_retries() -> None:
    spec = indexedjob.job(indexed())["spec"]
    assert spec["podFailurePolicy"] == {
        "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
    }
    on_failure = indexedjob.job(indexed(restartPolicy="OnFailure"))["spec"]
    assert "podFailurePolicy" not in on_failure, "Kubernetes takes a pod failure policy only with restartPolicy Never"


def test_torchrun_restarts_in_place_before_the_pods_fail() -> None:
    assert "--max_restarts=3" in trainer(indexedjob.job(indexed()))["args"]
    assert "--max_restarts=0" in trainer(indexedjob.job(indexed(maxRestarts=0)))["args"]


def test_a_time_to_live_is_only_set_when_asked() -> None:
    assert "ttlSecondsAfterFinished" not in indexedjob.job(indexed())["spec"]
    assert indexedjob.job(indexed(ttlSecondsAfterFinished=3600))["spec"]["ttlSecondsAfterFinished"] == 3600


def test_volcano_gangs_the_pods_in_a_podgroup_of_every_node() -> None:
    objs = objects(indexed("tcp", "volcano", "research", nodes=4))
    kinds = by_kind(objs)
    group = kinds["PodGroup"]
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"]["minMember"] == 4
    assert group["spec"]["queue"] == "research"
    assert group["metadata"]["namespace"] == kinds["Job"]["metadata"]["namespace"]
    template = pod(kinds["Job"])
    assert template["metadata"]["annotations"][GROUP_ANNOTATION] == group["metadata"]["name"]
    assert template["spec"]["schedulerName"] == "volcano"


def test_podgroup_carries_the_priority_class() -> None:
    p = plan(job(launcher="indexed", scheduler={"priorityClass": "high"}), pool("tcp"), "volcano", "research")
    group = by_kind(objects(p))["PodGroup"]
    assert group["spec"]["priorityClassName"] == "high"
    assert pod(workload(objects(p)))["spec"]["priorityClassName"] == "high"


def test_kueue_labels_the_job_and_makes_no_podgroup() -> None:
    objs = objects(indexed("tcp", "kueue", "research"))
    kinds = by_kind(objs)
    assert "PodGroup" not in kinds
    assert kinds["Job"]["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "research"
    assert GROUP_ANNOTATION not in pod(kinds["Job"])["metadata"].get("annotations", {})


def test_without_a_scheduler_there_is_no_gang() -> None:
    kinds = by_kind(objects(indexed()))
    assert set(kinds) == {"Service", "Job"}
    assert KUEUE_QUEUE_LABEL not in kinds["Job"]["metadata"]["labels"]
    assert "schedulerName" not in pod(kinds["Job"])["spec"]


def test_service_and_podgroup_come_before_the_job() -> None:
    objs = objects(indexed("tcp", "volcano", "research"))
    assert [o["kind"] for o in objs] == ["Service", "PodGroup", "Job"]
    assert workload(objs)["kind"] == "Job"


@pytest.mark.parametrize("fabric", ["tcp", "roce", "infiniband", "efa"])
@pytest.mark.parametrize("scheduler", ["none", "volcano", "kueue"])
def test_validates_against_the_schemas(fabric: str, scheduler: str) -> None:
    queue = "research" if scheduler != "none" else None
    p = plan(
        job(
            launcher="indexed",
            nodes=2,
            resources={"cpu": "32", "memory": "512Gi"},
            scheduler={"priorityClass": "high"},
            volumes=[{"claim": "training-dataset", "mountPath": "/data", "readOnly": True}],
            deepspeed={"config": {"zero_optimization": {"stage": 3}}},
        ),
        pool(fabric),
        scheduler,  # type: ignore[arg-type]
        queue,
    )
    assert_valid(*objects(p))


def test_pulumi_up_creates_the_job_without_waiting_for_the_training_to_finish() -> None:
    job = indexedjob.job(indexed())
    assert job["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
