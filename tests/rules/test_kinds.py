"""Workloads read by API group and kind: every kind's pods, those read generically, what makes one job of several
pods; and no shape of input makes a rule raise."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from components import rules
from components.rules.kinds import KINDS, kind_of
from components.rules.pods import gpu_pods, multi_node, templates
from components.rules.rule import Settings
from components.rules.subjects import from_objects


def pod(gpus: int = 8) -> dict[str, Any]:
    return {
        "spec": {
            "containers": [{"name": "main", "image": "train:v1", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]
        }
    }


def test_the_group_tells_volcanos_job_from_a_batch_job() -> None:
    volcano = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train"},
        "spec": {
            "tasks": [
                {"name": "master", "replicas": 1, "template": pod()},
                {"name": "worker", "replicas": 3, "template": pod()},
            ]
        },
    }
    assert [(t.role, t.replicas, t.gpus) for t in templates(volcano)] == [("master", 1, 8), ("worker", 3, 8)]
    assert kind_of(volcano).controller == "Volcano" and multi_node(volcano)  # type: ignore[union-attr]
    batch = {**volcano, "apiVersion": "batch/v1"}
    assert templates(batch) == [], "a batch/v1 Job keeps its pods in spec.template, which this one lacks"


def test_a_jobset_runs_replicas_times_parallelism_pods_as_one_job() -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 2,
                    "template": {"spec": {"parallelism": 4, "completions": 4, "template": pod()}},
                }
            ]
        },
    }
    assert gpu_pods(jobset) == 8 and multi_node(jobset)


def test_only_an_indexed_batch_job_is_one_distributed_job() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"parallelism": 3, "template": pod()},
    }
    assert gpu_pods(job) == 3 and not multi_node(job), "a work queue's pods are independent"
    job["spec"]["completionMode"] = "Indexed"
    assert multi_node(job)


def test_bare_pods_sharing_a_subdomain_are_one_multi_node_job() -> None:
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"host-{n}"},
            "spec": {**pod()["spec"], "subdomain": "nccl"},
        }
        for n in range(2)
    ]
    subjects = from_objects(pods)
    assert all(multi_node(s.data, subjects) for s in subjects)
    assert not multi_node(pods[0], from_objects(pods[:1]))


def test_a_kind_with_no_known_shape_is_read_generically() -> None:
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "r"},
        "spec": {
            "rayClusterSpec": {
                "workerGroupSpecs": [{"replicas": 4, "template": pod(1)}],
                "headGroupSpec": {"template": pod(0)},
            }
        },
    }
    found = templates(ray)
    assert {(t.role, t.replicas, t.gpus) for t in found} == {
        ("spec.rayClusterSpec.workerGroupSpecs[0].template", 4, 1),
        ("spec.rayClusterSpec.headGroupSpec.template", 1, 0),
    }


def test_a_leader_worker_set_runs_a_leader_and_size_minus_one_workers_per_group() -> None:
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "l"},
        "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 4, "leaderTemplate": pod(), "workerTemplate": pod()}},
    }
    assert [(t.role, t.replicas) for t in templates(lws)] == [("leader", 2), ("worker", 6)]


KIND = st.sampled_from(KINDS).map(lambda k: (f"{k.group}/v1" if k.group else "v1", k.kind))
JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 9)
    | st.text(max_size=6)
    | st.sampled_from(["$N", "8", "Indexed", "volcano"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "template",
                    "containers",
                    "replicas",
                    "tasks",
                    "replicatedJobs",
                    "resources",
                    "limits",
                    "nvidia.com/gpu",
                    "env",
                    "name",
                    "value",
                    "volumeMounts",
                    "volumes",
                    "command",
                    "args",
                    "tolerations",
                    "metadata",
                    "annotations",
                    "pytorchReplicaSpecs",
                    "mpiReplicaSpecs",
                    "runPolicy",
                    "schedulingPolicy",
                    "minAvailable",
                    "parallelism",
                    "completionMode",
                    "hostNetwork",
                    "securityContext",
                    "trainer",
                    "runtimeRef",
                    "leaderWorkerTemplate",
                    "size",
                    "subdomain",
                    "nprocPerNode",
                    "slotsPerWorker",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KIND, JUNK), min_size=1, max_size=3))
@example([(("batch.volcano.sh/v1alpha1", "Job"), {"tasks": True})])
def test_no_shape_of_object_makes_a_rule_raise(objects: list[tuple[tuple[str, str], Any]]) -> None:
    built = [
        {"apiVersion": api, "kind": kind, "metadata": {"name": f"o{n}"}, "spec": spec}
        for n, ((api, kind), spec) in enumerate(objects)
    ]
    for cluster in (None, "eks", "gke"):
        rules.run(from_objects(built), Settings(gang_scheduler="volcano", cluster=cluster))  # type: ignore[arg-type]
