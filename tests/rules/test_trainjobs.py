"""TrainJobs as the pods Trainer v2.3 runs: the runtime's JobSet with the job's patches and trainer fields merged
in, the runtime found among the subjects or not, malformed input never raising; and where findings land."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components import rules
from components.rules.pods import multi_node, templates
from components.rules.podtemplate import PodTemplate
from components.rules.rule import Settings
from components.rules.subject import Subject
from components.rules.subjects import from_objects
from components.rules.trainjobs import find_runtime, merge, runtime_pods, runtime_ref, trainjob_pods
from tests.rules.corpus import good_trainjob

ANCESTOR = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
TOLERATIONS = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
SHM = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}


def pod(command: list[str] | None = None, image: str = "nvcr.io/nvidia/pytorch:25.01-py3") -> dict[str, Any]:
    """A runtime's node pod: 8 GPUs, tolerations, a node selector, a RoCE network and /dev/shm."""
    container: dict[str, Any] = {
        "name": "node",
        "image": image,
        "env": [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "NCCL_SOCKET_IFNAME", "value": "net1"}],
        "resources": {
            "limits": {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1},
            "requests": {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1},
        },
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if command:
        container["command"] = command
    return {
        "metadata": {
            "labels": {"gpu-training/role": "worker"},
            "annotations": {"k8s.v1.cni.cncf.io/networks": "roce@net1"},
        },
        "spec": {
            "restartPolicy": "Never",
            "schedulerName": "volcano",
            "nodeSelector": {"gpu-training/pool": "h100"},
            "tolerations": TOLERATIONS,
            "containers": [container],
            "volumes": [SHM],
        },
    }


def replicated(name: str, template: dict[str, Any], *, trainer: bool) -> dict[str, Any]:
    job: dict[str, Any] = {"name": name, "template": {"spec": {"backoffLimit": 0, "template": template}}}
    if trainer:
        job["template"]["metadata"] = {"labels": dict(ANCESTOR)}
    return job


def torch_runtime(name: str = "h100-torch", kind: str = "ClusterTrainingRuntime") -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, **({"namespace": "training"} if kind == "TrainingRuntime" else {})},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "podGroupPolicy": {"volcano": {}},
            "template": {
                "spec": {
                    "failurePolicy": {"maxRestarts": 3},
                    "replicatedJobs": [replicated("node", pod(), trainer=True)],
                }
            },
        },
    }


def mpi_runtime(*, launcher_as_node: bool = True) -> dict[str, Any]:
    sshd = pod(["/usr/sbin/sshd", "-De"], image="ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0")
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "h100-deepspeed"},
        "spec": {
            "mlPolicy": {"numNodes": 2, "mpi": {"numProcPerNode": 8, "runLauncherAsNode": launcher_as_node}},
            "podGroupPolicy": {"volcano": {}},
            "template": {
                "spec": {
                    "failurePolicy": {"maxRestarts": 3},
                    "replicatedJobs": [
                        replicated("node", sshd, trainer=False),
                        replicated(
                            "launcher", pod(image="ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0"), trainer=True
                        ),
                    ],
                }
            },
        },
    }


def patch(*jobs: str, **pod_spec: Any) -> dict[str, Any]:
    """A runtime patch giving the named replicated jobs the instance label and a pod spec patch."""
    template: dict[str, Any] = {"metadata": {"labels": {"app.kubernetes.io/instance": "llama"}}}
    if pod_spec:
        template["spec"] = pod_spec
    return {
        "manager": "gpu-training/trainingjob",
        "trainingRuntimeSpec": {
            "template": {
                "metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "research"}},
                "spec": {"replicatedJobs": [{"name": n, "template": {"spec": {"template": template}}} for n in jobs]},
            }
        },
    }


CHECKPOINTS = {
    "volumes": [{"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}}],
    "containers": [{"name": "node", "volumeMounts": [{"name": "ckpt", "mountPath": "/checkpoints"}]}],
}


def trainjob(runtime: str = "h100-torch", kind: str | None = "ClusterTrainingRuntime", **spec: Any) -> dict[str, Any]:
    ref = {"apiGroup": "trainer.kubeflow.org", "name": runtime, **({"kind": kind} if kind else {})}
    trainer = {
        "image": "registry.example.com/train:v2",
        "command": ["torchrun", "train.py"],
        "numNodes": 4,
        "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8, "memory": "512Gi"}, "requests": {"memory": "256Gi"}},
        "env": [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "EPOCHS", "value": "3"}],
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "llama", "namespace": "training"},
        "spec": {"runtimeRef": ref, "trainer": trainer, **spec},
    }


def by_role(pods: list[PodTemplate]) -> dict[str, PodTemplate]:
    return {p.role: p for p in pods}


def node(pods: PodTemplate) -> dict[str, Any]:
    return next(c for c in pods.spec["containers"] if c["name"] == "node")


def env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container["env"]}


# --- the merge -------------------------------------------------------------------------------------------------


def test_a_torch_trainjob_runs_its_runtimes_pod_with_its_image_command_env_resources_and_patch() -> None:
    runtime = torch_runtime()
    (nodes,) = trainjob_pods(trainjob(runtimePatches=[patch("node", **CHECKPOINTS)]), runtime)
    assert (nodes.role, nodes.replicas, nodes.partial) == ("node", 4, False)
    container = node(nodes)
    assert container["image"] == "registry.example.com/train:v2" and container["command"] == ["torchrun", "train.py"]
    assert env(container) == {"NCCL_DEBUG": "INFO", "NCCL_SOCKET_IFNAME": "net1", "EPOCHS": "3"}
    assert container["resources"] == {
        "limits": {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1, "memory": "512Gi"},
        "requests": {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1, "memory": "256Gi"},
    }
    assert [m["mountPath"] for m in container["volumeMounts"]] == ["/dev/shm", "/checkpoints"]
    assert [v["name"] for v in nodes.spec["volumes"]] == ["dshm", "ckpt"]
    assert nodes.metadata["labels"] == {"gpu-training/role": "worker", "app.kubernetes.io/instance": "llama"}
    assert nodes.metadata["annotations"] == {"k8s.v1.cni.cncf.io/networks": "roce@net1"}
    assert nodes.spec["tolerations"] == TOLERATIONS and nodes.spec["nodeSelector"] == {"gpu-training/pool": "h100"}
    assert runtime == torch_runtime(), "the runtime is not changed"


def test_patches_merge_volumes_by_name_and_mounts_by_mount_path() -> None:
    bigger = {"name": "dshm", "emptyDir": {"sizeLimit": "256Gi"}}
    moved = {"name": "node", "volumeMounts": [{"name": "shm2", "mountPath": "/dev/shm", "readOnly": False}]}
    (nodes,) = trainjob_pods(
        trainjob(runtimePatches=[patch("node", volumes=[bigger], containers=[moved])]), torch_runtime()
    )
    assert nodes.spec["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Gi"}}]
    assert node(nodes)["volumeMounts"] == [{"name": "shm2", "mountPath": "/dev/shm", "readOnly": False}]


def test_later_patches_win_and_a_patch_of_a_missing_replicated_job_adds_no_pods() -> None:
    first = patch("node", nodeSelector={"zone": "a"})
    second = patch("node", "launcher", nodeSelector={"zone": "b"}, tolerations=[])
    (nodes,) = trainjob_pods(trainjob(runtimePatches=[first, second]), torch_runtime())
    assert nodes.spec["nodeSelector"] == {"gpu-training/pool": "h100", "zone": "b"}
    assert nodes.spec["tolerations"] == [], "a list without a merge key is replaced"


@pytest.mark.parametrize(("nodes", "workers"), [(4, 3), (2, 1), (1, 1)])
def test_mpi_with_the_launcher_as_a_node_runs_one_node_fewer(nodes: int, workers: int) -> None:
    job = trainjob("h100-deepspeed", runtimePatches=[patch("node", "launcher", **CHECKPOINTS)])
    job["spec"]["trainer"]["numNodes"] = nodes
    job["spec"]["trainer"]["command"] = ["mpirun", "python", "train.py"]
    pods = by_role(trainjob_pods(job, mpi_runtime()))
    assert {r: p.replicas for r, p in pods.items()} == {"node": workers, "launcher": 1}
    launcher, worker = node(pods["launcher"]), node(pods["node"])
    assert launcher["image"] == "registry.example.com/train:v2" and launcher["command"] == [
        "mpirun",
        "python",
        "train.py",
    ]
    assert worker["image"] == "ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0", "the nodes run the runtime's image"
    assert worker["command"] == ["/usr/sbin/sshd", "-De"]
    for container in (launcher, worker):
        assert env(container)["NCCL_DEBUG"] == "INFO" and container["resources"]["limits"]["memory"] == "512Gi"
        assert [m["mountPath"] for m in container["volumeMounts"]] == ["/dev/shm", "/checkpoints"]


def test_mpi_without_the_launcher_as_a_node_runs_every_node_and_fills_only_the_launcher() -> None:
    pods = by_role(trainjob_pods(trainjob("h100-deepspeed"), mpi_runtime(launcher_as_node=False)))
    assert {r: p.replicas for r, p in pods.items()} == {"node": 4, "launcher": 1}
    assert env(node(pods["node"])) == {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "net1"}
    assert env(node(pods["launcher"]))["NCCL_DEBUG"] == "INFO"


def test_without_a_num_nodes_the_runtimes_counts() -> None:
    job = trainjob()
    del job["spec"]["trainer"]["numNodes"]
    assert [p.replicas for p in trainjob_pods(job, torch_runtime())] == [1]
    assert [p.replicas for p in trainjob_pods(job, mpi_runtime())] == [1, 1]


def test_a_runtime_alone_runs_as_a_trainjob_stating_nothing_on_two_nodes() -> None:
    (nodes,) = runtime_pods(torch_runtime())
    assert nodes.replicas == 2 and node(nodes)["image"] == "nvcr.io/nvidia/pytorch:25.01-py3"
    assert [(p.role, p.replicas) for p in runtime_pods(mpi_runtime())] == [("node", 1), ("launcher", 1)]
    assert multi_node(torch_runtime()) and multi_node(mpi_runtime())


def test_without_its_runtime_a_trainjob_is_what_it_states() -> None:
    job = trainjob(runtimePatches=[patch("node", "launcher", **CHECKPOINTS)])
    (nodes,) = trainjob_pods(job, None)
    assert (nodes.role, nodes.replicas, nodes.partial) == ("node", 4, True)
    container = node(nodes)
    assert container["image"] == "registry.example.com/train:v2" and env(container)["EPOCHS"] == "3"
    assert container["resources"] == job["spec"]["trainer"]["resourcesPerNode"]
    assert container["volumeMounts"] == [{"name": "ckpt", "mountPath": "/checkpoints"}]
    assert nodes.spec["volumes"] == CHECKPOINTS["volumes"]
    assert "tolerations" not in nodes.spec
    assert templates(job)[0].gpus == 8 and multi_node(job)


def test_merge_changes_neither_side_and_ignores_patches_of_the_wrong_type() -> None:
    base = {"volumes": [SHM], "nodeSelector": {"a": "1"}, "containers": [{"name": "node", "env": []}]}
    change = {"volumes": "not a list", "nodeSelector": ["x"], "containers": [{"name": "node", "env": [{"name": "X"}]}]}
    kept = copy.deepcopy((base, change))
    merged = merge(base, change)
    assert merged == {
        "volumes": [SHM],
        "nodeSelector": {"a": "1"},
        "containers": [{"name": "node", "env": [{"name": "X"}]}],
    }
    assert (base, change) == kept


# --- finding the runtime ---------------------------------------------------------------------------------------


def test_the_runtime_is_a_cluster_runtime_by_name_or_a_runtime_in_the_jobs_namespace() -> None:
    cluster = torch_runtime()
    own = torch_runtime("llama", "TrainingRuntime")
    elsewhere = copy.deepcopy(own)
    elsewhere["metadata"]["namespace"] = "other"
    subjects = from_objects([cluster, elsewhere, own])
    assert find_runtime(trainjob(), subjects).data == cluster  # type: ignore[union-attr]
    assert find_runtime(trainjob(kind=None), subjects).data == cluster, "kind defaults to ClusterTrainingRuntime"  # type: ignore[union-attr]
    assert find_runtime(trainjob("llama", "TrainingRuntime"), subjects).data == own  # type: ignore[union-attr]
    assert find_runtime(trainjob("llama", "TrainingRuntime"), from_objects([elsewhere])) is None
    assert find_runtime(trainjob("missing"), subjects) is None
    assert runtime_ref(trainjob(kind="PyTorchJob")) is None
    other_group = trainjob()
    other_group["spec"]["runtimeRef"]["apiGroup"] = "example.com"
    assert runtime_ref(other_group) is None


MALFORMED: list[Any] = [
    {"kind": "TrainJob", "metadata": {"name": "x"}},
    {"kind": "TrainJob", "metadata": {"name": "x"}, "spec": None},
    {"kind": "TrainJob", "metadata": {"name": "x"}, "spec": "nonsense"},
    {"kind": "TrainJob", "metadata": "x", "spec": {"runtimeRef": "h100-torch", "trainer": []}},
    {
        "kind": "TrainJob",
        "metadata": {"name": "x"},
        "spec": {"runtimeRef": {"kind": "PyTorchJob", "name": "h100-torch"}},
    },
    {
        "kind": "TrainJob",
        "metadata": {"name": "x"},
        "spec": {"runtimeRef": {"name": None}, "trainer": {"numNodes": "many"}},
    },
    {
        "kind": "TrainJob",
        "metadata": {"name": "x", "namespace": "training"},
        "spec": {
            "runtimeRef": {"name": "h100-torch"},
            "trainer": {
                "image": 5,
                "command": "train.py",
                "numNodes": True,
                "env": ["A=1", {"value": "no name"}, None],
                "resourcesPerNode": {"limits": ["nvidia.com/gpu"], "requests": None},
            },
            "runtimePatches": [
                None,
                "patch",
                {"trainingRuntimeSpec": None},
                {"trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": "node"}}}},
                {
                    "trainingRuntimeSpec": {
                        "template": {"spec": {"replicatedJobs": [None, {"name": "node", "template": []}]}}
                    }
                },
                {
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "spec": {
                                                "template": {
                                                    "metadata": None,
                                                    "spec": {
                                                        "volumes": [None, "v", {"name": None}],
                                                        "containers": [
                                                            {"name": "node", "volumeMounts": "x", "env": None},
                                                            3,
                                                        ],
                                                        "tolerations": None,
                                                    },
                                                }
                                            }
                                        },
                                    }
                                ]
                            }
                        }
                    }
                },
            ],
        },
    },
]


@pytest.mark.parametrize("job", MALFORMED)
def test_malformed_trainjobs_never_raise(job: dict[str, Any]) -> None:
    for runtime in (None, torch_runtime(), mpi_runtime(), {"spec": {"template": {"spec": {"replicatedJobs": [7]}}}}):
        for pods in trainjob_pods(job, runtime):
            assert isinstance(pods.spec["containers"], list) and pods.replicas >= 1
    subjects = [Subject("TrainJob/x", "TrainJob", job), *from_objects([torch_runtime(), mpi_runtime()])]
    everything = Settings(gang_scheduler="volcano", production=True, allowed_registries=("nvcr.io",))
    assert isinstance(rules.run(subjects, everything), list)
    assert isinstance(rules.run(subjects, Settings(gang_scheduler="kueue")), list)


BROKEN_POD = {
    "metadata": {"annotations": None},
    "spec": {
        "containers": [
            {"name": "node", "resources": {"limits": ["nvidia.com/gpu"], "requests": None}, "env": [{"value": "1"}]},
            None,
        ],
        "volumes": None,
    },
}


@pytest.mark.parametrize(
    "runtime",
    [
        {"kind": "ClusterTrainingRuntime", "metadata": {"name": "r"}},
        {
            "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "r"},
            "spec": {"mlPolicy": {"mpi": None}, "template": 3},
        },
        {
            "kind": "TrainingRuntime",
            "metadata": {"name": "r"},
            "spec": {"template": {"spec": {"replicatedJobs": [{}]}}},
        },
        {
            "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "r"},
            "spec": {
                "template": {
                    "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": BROKEN_POD}}}]}
                }
            },
        },
    ],
)
def test_malformed_runtimes_never_raise(runtime: dict[str, Any]) -> None:
    assert isinstance(rules.run(from_objects([runtime, trainjob("r")]), Settings(gang_scheduler="volcano")), list)


# --- where findings land ---------------------------------------------------------------------------------------


NO_GPU_TOLERATION = (
    "node pods tolerate no nvidia.com/gpu taint: GPU nodes tainted so keep them Pending, unless the cluster adds "
    "the toleration itself (EKS and GKE do)"
)


def findings(objects: list[dict[str, Any]], settings: Settings | None = None) -> list[tuple[str, str, str]]:
    return [(f.rule, f.subject, f.message) for f in rules.run(from_objects(objects), settings or Settings())]


def test_a_runtimes_defect_is_reported_once_on_the_runtime_whatever_the_trainjobs_on_it() -> None:
    runtime = torch_runtime()
    del runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["tolerations"]
    second = trainjob()
    second["metadata"]["name"] = "other"
    assert findings([runtime, trainjob(), second]) == [
        (
            "gpu-placement",
            "ClusterTrainingRuntime/h100-torch",
            NO_GPU_TOLERATION,
        )
    ]


def test_what_a_trainjob_brings_is_reported_on_the_trainjob() -> None:
    small = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}}
    job = trainjob(runtimePatches=[patch("node", volumes=[small])])
    assert findings([torch_runtime(), job]) == [
        ("shared-memory", "TrainJob/training/llama", "node/node: /dev/shm is 64Mi, below 1Gi")
    ]
    job = trainjob(runtimePatches=[patch("node", tolerations=[])])
    assert findings([torch_runtime(), job]) == [("gpu-placement", "TrainJob/training/llama", NO_GPU_TOLERATION)]


def test_gpus_a_trainjob_brings_to_a_runtime_without_placement_are_the_trainjobs_finding() -> None:
    runtime = torch_runtime()
    pod_spec = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    del pod_spec["tolerations"], pod_spec["nodeSelector"]
    pod_spec["containers"][0]["resources"] = {}
    assert {(rule, subject) for rule, subject, _ in findings([runtime, trainjob()])} == {
        ("gpu-placement", "TrainJob/training/llama")
    }


def test_without_its_runtime_a_trainjob_is_checked_for_what_it_states_only() -> None:
    assert findings([trainjob()]) == []
    assert findings([trainjob()], Settings(gang_scheduler="volcano")) == []
    job = trainjob()
    job["spec"]["trainer"]["image"] = "registry.example.com/train:latest"
    job["spec"]["trainer"]["resourcesPerNode"]["requests"]["nvidia.com/gpu"] = 4
    job["spec"]["trainer"]["env"].append({"name": "NCCL_SOCKET_IFNAME", "value": "ib7"})
    assert {rule for rule, _, _ in findings([job], Settings(production=True))} == {
        "pinned-images",
        "gpu-requests-equal-limits",
        "nccl-debug-production",
    }


def test_kueue_admits_the_trainjob_by_its_label_and_not_its_runtime() -> None:
    kueue = Settings(gang_scheduler="kueue")
    assert [(rule, subject) for rule, subject, _ in findings([torch_runtime(), trainjob()], kueue)] == [
        ("gang-scheduling", "TrainJob/training/llama")
    ]
    labelled = trainjob()
    labelled["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "research"}
    assert findings([torch_runtime(), labelled], kueue) == []


def test_other_kinds_keep_their_templates() -> None:
    objects = good_trainjob()
    subjects = from_objects(objects)
    for obj in objects:
        if obj["kind"] not in ("TrainJob", "ClusterTrainingRuntime", "TrainingRuntime"):
            assert templates(obj, subjects) == templates(obj)
    assert templates(objects[-1]) != templates(objects[-1], subjects), "a TrainJob on its runtime is more than alone"
