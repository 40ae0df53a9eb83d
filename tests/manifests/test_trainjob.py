"""Tests for the TrainJob builder: runtime reference, trainer fields, and the job's own patch."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.errors import ConfigError
from components.manifests import trainingjob
from components.manifests.gang import KUEUE_QUEUE_LABEL
from components.manifests.plan import plan
from components.manifests.trainjob import MANAGER, VOLCANO_QUEUE_ANNOTATION, trainjob
from components.models import VolumeSpec
from components.topology import KUEUE_GROUP, KUEUE_PREFERRED, KUEUE_REQUIRED
from tests.support.factories import job, pool, with_topology, with_trainer
from tests.support.schemas import assert_valid


def train(fabric: str = "roce", kind: str = "volcano", queue: str | None = "research", **fields: Any):
    """A trainjob planned on a Trainer-enabled pool."""
    fields.setdefault("launcher", "trainjob")
    if fabric == "efa":
        fields.setdefault("resources", {"memory": "1800Gi"})
    return plan(job(**fields), with_topology(with_trainer(pool(fabric))), kind, queue)  # type: ignore[arg-type]


def patched_pods(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (patch,) = obj["spec"]["runtimePatches"]
    assert patch["manager"] == MANAGER
    jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    return {j["name"]: j["template"]["spec"]["template"] for j in jobs}


def test_a_torch_trainjob_runs_torchrun_on_its_pools_runtime() -> None:
    obj = trainjob(train(command=["python", "train.py", "--epochs=1"], nodes=4))
    assert obj["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    assert obj["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "ClusterTrainingRuntime",
        "name": "h100-torch",
    }
    trainer = obj["spec"]["trainer"]
    # Trainer sets PET_NNODES, PET_NODE_RANK and the master for torchrun; python is torchrun's to start.
    assert trainer["command"] == ["torchrun", "train.py", "--epochs=1"]
    assert (trainer["numNodes"], trainer["numProcPerNode"]) == (4, 8)
    limits = trainer["resourcesPerNode"]["limits"]
    assert limits["nvidia.com/gpu"] == "8"
    assert limits["rdma/rdma_shared_device_a"] == "1"
    assert "env" not in trainer, "the fabric's environment is the runtime's"
    assert_valid(obj)


def test_the_job_brings_only_the_environment_that_differs_from_its_runtime() -> None:
    obj = trainjob(train(nccl={"debug": "INFO"}, env={"HF_HOME": "/cache"}))
    assert obj["spec"]["trainer"]["env"] == [
        {"name": "NCCL_DEBUG", "value": "INFO"},
        {"name": "HF_HOME", "value": "/cache"},
    ]


def test_the_patch_carries_the_jobs_label_volumes_and_volcano_queue() -> None:
    obj = trainjob(train(volumes=[{"claim": "ckpt", "mountPath": "/checkpoints"}], scratch={"size": "100Gi"}))
    template = obj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]
    assert template["metadata"]["annotations"] == {VOLCANO_QUEUE_ANNOTATION: "research"}
    node = patched_pods(obj)["node"]
    assert node["metadata"]["labels"] == {"app.kubernetes.io/instance": "train"}
    volumes = {v["name"]: v for v in node["spec"]["volumes"]}
    assert volumes["claim-ckpt"]["persistentVolumeClaim"] == {"claimName": "ckpt"}
    assert "scratch" in volumes
    (container,) = node["spec"]["containers"]
    assert container["name"] == "node"
    assert "env" not in container, "Trainer refuses env on the node container in a patch"
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/checkpoints", "/scratch"}
    assert obj["spec"]["trainer"]["resourcesPerNode"]["limits"]["ephemeral-storage"] == "100Gi"
    assert_valid(obj)


def test_a_smaller_shm_than_the_runtimes_is_patched() -> None:
    volumes = patched_pods(trainjob(train(shmSize="16Gi")))["node"]["spec"]["volumes"]
    assert volumes == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]


def test_under_kueue_the_trainjob_is_queued_and_placed() -> None:
    obj = trainjob(train("efa", "kueue", topology={"mode": "required", "level": "layer-3"}))
    assert obj["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "research"
    annotations = patched_pods(obj)["node"]["metadata"]["annotations"]
    assert annotations == {KUEUE_REQUIRED: "topology.k8s.aws/network-node-layer-3"}
    assert_valid(obj)


def test_a_multi_node_job_on_a_pool_with_a_topology_prefers_one_domain() -> None:
    annotations = patched_pods(trainjob(train("efa", "kueue", nodes=4)))["node"]["metadata"]["annotations"]
    assert annotations == {KUEUE_PREFERRED: "topology.k8s.aws/network-node-layer-3"}


def test_a_deepspeed_trainjob_runs_mpirun_and_patches_both_pod_sets() -> None:
    obj = trainjob(
        train(
            "efa",
            "kueue",
            runtime="deepspeed",
            image="ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0",
            deepspeed={"config": {"train_batch_size": 64}},
        )
    )
    assert obj["spec"]["runtimeRef"]["name"] == "p5-deepspeed"
    command = obj["spec"]["trainer"]["command"]
    assert command[0] == "mpirun"
    assert "--allow-run-as-root" not in command, "the runtime's nodes run as user 1000"
    assert command[command.index("-np") + 1] == "16"
    assert command[-1] == "--deepspeed_config=/etc/deepspeed/ds_config.json"
    pods = patched_pods(obj)
    assert set(pods) == {"node", "launcher"}
    for template in pods.values():
        # Two GPU pod sets: Kueue keeps them in one domain as one group.
        assert template["metadata"]["annotations"][KUEUE_GROUP] == "train"
        assert any(v["name"] == "deepspeed-config" for v in template["spec"]["volumes"])
    assert_valid(obj)


def test_a_job_on_its_own_runtime_emits_it_before_the_trainjob() -> None:
    objects = trainingjob.objects(train(runtime="mpi", scheduler={"priorityClass": "training-high"}))
    assert [o["kind"] for o in objects] == ["TrainingRuntime", "PodGroup", "TrainJob"]
    assert objects[-1]["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
        "name": "train",
    }
    own = objects[0]
    node = own["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert node["spec"]["containers"][0]["image"] == "registry.example.com/training:v1"
    assert node["spec"]["priorityClassName"] == "training-high"
    assert_valid(*objects)


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({"env": {"PET_NNODES": "4"}}, "jobs[0].env.PET_NNODES", "sets PET_NNODES itself"),
        ({"runtime": "mpi", "env": {"OMPI_MCA_plm_rsh_args": "-p 22"}}, "jobs[0].env.OMPI_MCA_plm_rsh_args", "itself"),
        ({"runtime": "deepspeed", "nodes": 1}, "jobs[0].nodes", "nodes >= 2"),
        ({"restartPolicy": "OnFailure"}, "jobs[0].restartPolicy", "restarts as a whole"),
        ({"name": "a" * 49}, "jobs[0].name", "at most 48"),
        ({"command": ["torchrun", "train.py"]}, "jobs[0].command", "runs torchrun itself"),
        ({"topology": {"level": "rack"}}, "jobs[0].topology.level", "layer-1, layer-2, layer-3, host"),
        ({"topology": {"level": "host"}}, "jobs[0].topology.level", "one host holds one node"),
    ],
)
def test_what_trainer_refuses_is_a_config_error(fields: dict[str, Any], path: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        plan(
            job(launcher="trainjob", **fields, resources={"memory": "1800Gi"}),
            with_topology(with_trainer(pool("efa"))),
            "kueue",
            path="jobs[0]",
        )
    (issue,) = caught.value.issues
    assert issue.path == path
    assert words in issue.message


def test_a_topology_on_a_pool_without_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        plan(job(launcher="trainjob", topology={"level": "block"}), with_trainer(pool("tcp")), "kueue", path="jobs[0]")
    assert "has no network topology" in caught.value.issues[0].message


def test_volcano_cannot_place_a_pytorchjob_by_topology() -> None:
    with pytest.raises(ConfigError) as caught:
        plan(
            job(topology={"level": "layer-3"}, resources={"memory": "1800Gi"}),
            with_topology(pool("efa")),
            "volcano",
            path="jobs[0]",
        )
    assert "use launcher trainjob or indexed" in caught.value.issues[0].message


@settings(max_examples=40, deadline=None)
@given(
    fabric=st.sampled_from(["tcp", "roce", "infiniband", "efa", "tcpx", "tcpxo", "rdma"]),
    scheduler=st.sampled_from(["volcano", "kueue", "none"]),
    runtime=st.sampled_from(["torch", "deepspeed", "mpi", "tensorflow"]),
    nodes=st.integers(min_value=2, max_value=4),
    priority=st.booleans(),
)
def test_every_trainjob_and_its_runtime_validate(
    fabric: str, scheduler: str, runtime: str, nodes: int, priority: bool
) -> None:
    fields: dict[str, Any] = {"runtime": runtime, "nodes": nodes, "volumes": [{"claim": "ckpt", "mountPath": "/ckpt"}]}
    if priority:
        fields["scheduler"] = {"priorityClass": "training-high"}
    objects = trainingjob.objects(train(fabric, scheduler, "research" if scheduler != "none" else None, **fields))
    assert_valid(*objects)


@pytest.mark.parametrize("runtime", ["mpi", "deepspeed"])
def test_an_mpi_trainjob_under_volcano_gangs_its_nodes_and_lets_the_launcher_join_once_they_are_ready(runtime) -> None:
    """Trainer's own PodGroup counts the launcher, which the runtime makes only once the nodes are Ready: that gang
    never forms (seen on the real Trainer and Volcano in simulate). The job's PodGroup comes first and counts the
    nodes' pods alone."""
    planned = train(runtime=runtime, nodes=4, scheduler={"priorityClass": "training-high"})
    objects = trainingjob.objects(planned)
    kinds = [o["kind"] for o in objects]
    assert kinds.index("PodGroup") < kinds.index("TrainJob")
    group = next(o for o in objects if o["kind"] == "PodGroup")
    job = objects[-1]
    assert group["metadata"]["name"] == job["metadata"]["name"], "Trainer's pods join the group named as the job"
    assert group["spec"]["minMember"] == 3, "the nodes' Job: 4 nodes less the launcher, which is one of them"
    assert group["spec"]["queue"] == "research"
    assert group["spec"]["priorityClassName"] == "training-high"
    assert_valid(*objects)


@pytest.mark.parametrize(
    ("runtime", "kind"), [("torch", "volcano"), ("tensorflow", "volcano"), ("mpi", "kueue"), ("mpi", "none")]
)
def test_other_trainjobs_leave_the_gang_to_trainer_or_kueue(runtime, kind) -> None:
    objects = trainingjob.objects(train(runtime=runtime, kind=kind, queue="research" if kind != "none" else None))
    assert "PodGroup" not in [o["kind"] for o in objects]


def test_pulumi_deletes_a_trainjob_in_the_background() -> None:
    """Trainer makes a TrainJob's JobSet again while the TrainJob waits for it in a foreground delete."""
    obj = trainjob(train(command=["train.py"], nodes=2))
    assert obj["metadata"]["annotations"]["pulumi.com/deletionPropagationPolicy"] == "background"


def test_a_trainjob_mounting_a_gcs_claim_patches_in_the_gcsfuse_sidecar_and_its_checkpoint() -> None:
    bucket = VolumeSpec.model_validate({"name": "ckpt", "backend": "gcs"})
    spec = job(launcher="trainjob", checkpoint={"claim": "ckpt", "size": "1T"})
    obj = trainjob(plan(spec, with_trainer(pool("tcpxo")), "kueue", "research", volumes=[bucket]))
    node = patched_pods(obj)["node"]
    assert node["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    assert {m["mountPath"] for m in node["spec"]["containers"][0]["volumeMounts"]} == {"/checkpoints"}
    assert {"name": "CHECKPOINT_DIR", "value": "/checkpoints/train"} in obj["spec"]["trainer"]["env"]
    assert_valid(obj)


def tf_config(command: list[str], index: int) -> dict[str, Any]:
    """The TF_CONFIG a node's command exports, run by a real shell as the pod at `index` of its Job."""
    shown = [*command[:4], "sh", "-c", 'printf %s "$TF_CONFIG"']  # the wrapper, then what it execs
    ran = subprocess.run(shown, env={"JOB_COMPLETION_INDEX": str(index)}, capture_output=True, text=True, check=True)
    return json.loads(ran.stdout)


def test_a_tensorflow_trainjob_tells_each_node_every_worker_and_its_own_index() -> None:
    obj = trainjob(train(runtime="tensorflow", command=["train.py", "--epochs=1"], nodes=3))
    assert obj["spec"]["runtimeRef"]["name"] == "h100-tensorflow"
    trainer = obj["spec"]["trainer"]
    command = trainer["command"]
    assert command[:2] == ["sh", "-c"] and command[3:] == ["sh", "python", "train.py", "--epochs=1"]
    # JobSet's pods: hostname <trainjob>-node-0-<index>, subdomain <trainjob>; TFJob's port.
    workers = [f"train-node-0-{i}.train:2222" for i in range(3)]
    for index in range(3):
        assert tf_config(command, index) == {
            "cluster": {"worker": workers},
            "task": {"type": "worker", "index": index},
        }
    assert "numProcPerNode" not in trainer, "one TensorFlow process drives every GPU of its node"
    assert trainer["numNodes"] == 3 and trainer["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == "8"
    assert set(patched_pods(obj)) == {"node"}
    assert_valid(obj)


def test_a_tensorflow_node_without_its_index_does_not_start() -> None:
    command = trainjob(train(runtime="tensorflow", nodes=2))["spec"]["trainer"]["command"]
    ran = subprocess.run([*command[:4], "true"], check=False, env={}, capture_output=True, text=True)
    assert ran.returncode != 0 and "JOB_COMPLETION_INDEX" in ran.stderr


def test_a_one_node_tensorflow_trainjob_trains_locally_as_a_one_replica_tfjob() -> None:
    trainer = trainjob(train(runtime="tensorflow", command=["train.py"], nodes=1))["spec"]["trainer"]
    assert trainer["command"] == ["python", "train.py"]


def test_a_torch_trainjob_brings_its_own_in_place_restarts_as_torchruns_environment() -> None:
    obj = trainjob(train(maxRestarts=7))
    assert obj["spec"]["runtimeRef"]["name"] == "h100-torch", "the pool's runtime, which restarts 3 times"
    assert {"name": "PET_MAX_RESTARTS", "value": "7"} in obj["spec"]["trainer"]["env"]
    assert "env" not in trainjob(train(maxRestarts=3))["spec"]["trainer"], "3 is the runtime's"
    assert_valid(obj)


def test_trainer_and_the_runtimes_own_environment_is_refused_in_the_job() -> None:
    with pytest.raises(ConfigError) as caught:
        train(runtime="tensorflow", nodes=2, env={"TF_CONFIG": "{}"})
    assert [i.path for i in caught.value.issues] == ["env.TF_CONFIG"]
    with pytest.raises(ConfigError) as caught:
        train(env={"PET_MAX_RESTARTS": "1"})
    assert [i.path for i in caught.value.issues] == ["env.PET_MAX_RESTARTS"]
    assert "set maxRestarts instead" in caught.value.issues[0].message
