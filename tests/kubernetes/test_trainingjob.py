"""TrainingJob under Pulumi mocks: it registers exactly what the pure builders produce."""

from __future__ import annotations

import base64

import pulumi
import pytest

from components import TrainingJob
from components.kubernetes.objects import StackConfigError
from components.manifests import trainingjob
from components.manifests.plan import plan
from tests.support.factories import job, pool, with_trainer
from tests.support.pulumi_mocks import SECRET_SIG, RecordingMonitor, run

LAUNCHERS = ["pytorch", "mpi", "tensorflow", "indexed", "trainjob"]


def _strip_kind(inputs: dict) -> dict:
    return {k: v for k, v in inputs.items() if k not in ("apiVersion", "kind")}


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_registers_the_objects_the_builders_produce(pulumi_mocks: RecordingMonitor, launcher: str) -> None:
    spec = job(launcher=launcher, deepspeed={"config": {"train_batch_size": 8}} if launcher == "pytorch" else None)
    target = pool("roce")
    run(lambda: TrainingJob("train", spec, pool=target, scheduler="volcano", queue="research"))

    expected = trainingjob.objects(plan(spec, target, "volcano", "research"))
    children = {r.name: r for r in pulumi_mocks.registrations if r.type != "gpu-training:index:TrainingJob"}
    assert len(children) == len(expected)
    for obj in expected:
        registered = children[f"train-{obj['kind'].lower()}"]
        group = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
        assert registered.type == f"kubernetes:{group}:{obj['kind']}"
        assert _strip_kind(registered.inputs) == _strip_kind(obj)


def test_a_trainjob_on_a_pool_from_a_platform_stack_runs_on_the_exported_runtime(
    pulumi_mocks: RecordingMonitor,
) -> None:
    # The pool as a workloads stack reads it from the platform's `pools` export: its runtimes come along.
    exported = with_trainer(pool("roce")).to_config()
    run(lambda: TrainingJob("pretrain", job(launcher="trainjob"), pool=exported, scheduler="volcano"))

    (trainjob,) = [r for r in pulumi_mocks.registrations if r.type.endswith(":TrainJob")]
    assert trainjob.inputs["spec"]["runtimeRef"]["name"] == "h100-torch"
    assert not [r for r in pulumi_mocks.registrations if r.type.endswith(":TrainingRuntime")]


def test_a_trainjob_on_a_pool_without_runtimes_brings_its_own(pulumi_mocks: RecordingMonitor) -> None:
    run(lambda: TrainingJob("pretrain", job(launcher="trainjob"), pool=pool("roce"), scheduler="volcano"))

    runtime = pulumi_mocks.named("pretrain-trainingruntime")
    trainjob = pulumi_mocks.named("pretrain-trainjob")
    assert trainjob.inputs["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
        "name": "train",  # the job's name, in its namespace
    }
    assert runtime.urn in trainjob.dependencies, "the TrainJob waits for its runtime"


def test_children_are_parented_and_the_workload_waits_for_its_supporting_objects(
    pulumi_mocks: RecordingMonitor,
) -> None:
    spec = job(launcher="indexed", deepspeed={"config": {"zero_optimization": {"stage": 3}}})
    run(lambda: TrainingJob("finetune", spec, pool=pool("roce"), scheduler="volcano"))

    component = pulumi_mocks.named("finetune")
    assert component.type == "gpu-training:index:TrainingJob"
    children = [r for r in pulumi_mocks.registrations if r is not component]
    assert {r.name for r in children} == {"finetune-configmap", "finetune-service", "finetune-podgroup", "finetune-job"}
    assert all(r.parent == component.urn for r in children)
    workload = pulumi_mocks.named("finetune-job")
    supporting = {pulumi_mocks.named(n).urn for n in ("finetune-configmap", "finetune-service", "finetune-podgroup")}
    assert set(workload.dependencies) == supporting


def test_outputs_world_size_and_objects(pulumi_mocks: RecordingMonitor) -> None:
    spec = job(launcher="mpi", nodes=3)

    def program() -> pulumi.Output:
        component = TrainingJob("allreduce", spec, pool=pool("tcp"))
        return pulumi.Output.all(component.world_size, component.objects, component.workload)

    outputs: list = []
    run(lambda: program().apply(outputs.append))
    world_size, objects, workload = outputs[0]
    assert world_size == 24
    assert objects == ["MPIJob/training/train"]
    assert workload == "MPIJob/training/train"


@pytest.mark.parametrize("from_stack", [False, True], ids=["pool", "pool-from-a-stack-reference"])
def test_registers_its_outputs_with_the_engine(pulumi_mocks: RecordingMonitor, from_stack: bool) -> None:
    # Known at once, they are registered as plain values; from a StackReference's output, once it resolves.
    target = pool("tcp").to_config()
    given = pulumi.Output.from_input(target) if from_stack else target
    run(lambda: TrainingJob("allreduce", job(launcher="mpi", nodes=3), pool=given))

    assert pulumi_mocks.outputs(pulumi_mocks.named("allreduce").urn) == {
        "worldSize": 24,
        "objects": ["MPIJob/training/train"],
        "workload": "MPIJob/training/train",
    }


def test_takes_keyword_fields_and_a_pool_as_plain_data(pulumi_mocks: RecordingMonitor) -> None:
    target = pool("efa").to_config()
    component = run(
        lambda: TrainingJob(
            "pretrain",
            image="registry.example.com/train:v1",
            command=["train.py"],
            nodes=2,
            resources={"memory": "1800Gi"},
            pool=target,
        )
    )
    assert component.plan.spec.name == "pretrain"
    worker = component.manifests[-1]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"] == "32"


def test_a_job_that_does_not_fit_its_pool_is_a_clean_pulumi_error(pulumi_mocks: RecordingMonitor) -> None:
    with pytest.raises(StackConfigError) as caught:
        run(lambda: TrainingJob("big", job(nodes=9), pool=pool("tcp")))
    assert isinstance(caught.value, pulumi.RunError)
    assert "nodes: 9 nodes, but pool 'h100' has at most 4" in str(caught.value)


def test_a_bad_field_names_its_path(pulumi_mocks: RecordingMonitor) -> None:
    with pytest.raises(StackConfigError, match=r"nodes: must be greater than or equal to 1 \(got 0\)"):
        run(lambda: TrainingJob("bad", image="i", command=["train.py"], nodes=0, pool=pool("tcp")))


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_change_the_api_server_refuses_in_place_replaces_the_object(
    pulumi_mocks: RecordingMonitor, launcher: str
) -> None:
    # A TrainJob's trainer and a PyTorchJob's queue are immutable (their CRDs' transition rules): Pulumi
    # must delete and recreate them on such a change, or `pulumi up` fails on the server's refusal.
    run(lambda: TrainingJob("train", job(launcher=launcher), pool=pool("roce"), scheduler="volcano", queue="q"))

    kind = trainingjob.objects(plan(job(launcher=launcher), pool("roce"), "volcano", "q"))[-1]["kind"]
    job_resource = pulumi_mocks.named(f"train-{kind.lower()}")
    expected = {
        "trainjob": "spec.trainer",
        "pytorch": "spec.runPolicy.schedulingPolicy.queue",
        "tensorflow": "spec.runPolicy.schedulingPolicy.queue",
    }.get(launcher)
    if expected:
        assert expected in job_resource.replace_on_changes
        assert job_resource.delete_before_replace, "the replacement has the same name"
    else:
        assert not job_resource.replace_on_changes


def test_an_indexed_jobs_ports_protocol_never_replaces_it(pulumi_mocks: RecordingMonitor) -> None:
    # Stating TCP, which the API server assumes, must not replace a running Job whose older state lacks it.
    run(lambda: TrainingJob("train", job(launcher="indexed"), pool=pool("roce")))
    batch_job = pulumi_mocks.named("train-job")
    containers = batch_job.inputs["spec"]["template"]["spec"]["containers"]
    assert {p["protocol"] for c in containers for p in c.get("ports", [])} == {"TCP"}
    assert "spec.template.spec.containers[*].ports[*].protocol" in batch_job.ignore_changes


def test_a_job_given_the_platforms_storage_mounts_a_gcs_claim_with_the_gcsfuse_sidecar(
    pulumi_mocks: RecordingMonitor,
) -> None:
    # The platform's `storage` output, as a workloads stack reads it through a StackReference.
    storage = pulumi.Output.from_input([{"name": "ckpt", "namespace": "training", "backend": "gcs"}])
    spec = job(checkpoint={"claim": "ckpt", "size": "500G"})
    run(lambda: TrainingJob("train", spec, pool=pool("tcpxo"), scheduler="kueue", queue="research", storage=storage))

    (pytorchjob,) = [r for r in pulumi_mocks.registrations if r.type.endswith(":PyTorchJob")]
    for replica in pytorchjob.inputs["spec"]["pytorchReplicaSpecs"].values():
        assert replica["template"]["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    without = trainingjob.objects(plan(spec, pool("tcpxo"), "kueue", "research"))[-1]
    master = without["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["metadata"]
    assert "gke-gcsfuse/volumes" not in master.get("annotations", {}), "without it, a plain claim"


def test_a_bad_declared_volume_names_its_place_in_storage(pulumi_mocks: RecordingMonitor) -> None:
    with pytest.raises(StackConfigError, match=r"storage\[0\]\.bucket: 'Bad_Name' is not a gcs bucket name"):
        run(
            lambda: TrainingJob(
                "train", job(), pool=pool("tcpxo"), storage=[{"name": "d", "backend": "gcs", "bucket": "Bad_Name"}]
            )
        )


def test_a_secret_output_in_env_becomes_the_jobs_own_secret_held_as_a_secret(pulumi_mocks: RecordingMonitor) -> None:
    token = "hf_programSecretValue0123456789"
    spec = {"image": "registry.example.com/t:v1", "command": ["train.py"], "nodes": 2, "launcher": "indexed"}

    def program() -> pulumi.Output:
        component = TrainingJob("tune", spec, env={"HF_TOKEN": pulumi.Output.secret(token), "A": "1"}, pool=pool())
        return component.objects

    objects: list = []
    run(lambda: program().apply(objects.extend))
    secret = pulumi_mocks.named("tune-env-secret")
    assert secret.type == "kubernetes:core/v1:Secret"
    assert secret.inputs["metadata"]["name"] == "tune-env"
    data = secret.inputs["data"]
    assert SECRET_SIG in data, "the Secret's data is a secret Output: the state holds its ciphertext"
    assert base64.b64decode(data["value"]["HF_TOKEN"]).decode() == token
    workload = pulumi_mocks.named("tune-job")
    assert secret.urn in workload.dependencies, "the pods start once their Secret exists"
    env = {e["name"]: e for e in workload.inputs["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["HF_TOKEN"]["valueFrom"] == {"secretKeyRef": {"name": "tune-env", "key": "HF_TOKEN"}}
    assert token not in repr([r.inputs for r in pulumi_mocks.registrations if r is not secret])
    assert "Secret/training/tune-env" in objects


def test_a_pulumi_secret_the_program_was_not_given_is_a_clean_error(pulumi_mocks: RecordingMonitor) -> None:
    with pytest.raises(StackConfigError, match=r"env.HF_TOKEN: is a Pulumi secret whose value this program"):
        run(lambda: TrainingJob("t", job(env={"HF_TOKEN": {"secure": "v1:abc"}}), pool=pool()))
