"""Construct over gRPC, as the engine calls it for a TrainingJob declared in TypeScript or YAML: the plugin
registers, through a resource monitor, exactly what the Python API registers for the same job."""

from __future__ import annotations

import copy
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from components.kubernetes.trainingjob import TrainingJob
from components.resolution import resolve_file
from tests.provider.plugin import REPO, construct
from tests.support.pulumi_mocks import SECRET_SIG, RecordingMonitor, run

JOB = {
    "image": "registry.example.com/training:v2.0",
    "command": ["train.py", "--model_name=meta-llama/Llama-3.1-70B", "--batch_size=4"],
    "nodes": 2,
    "volumes": [{"claim": "training-checkpoints", "mountPath": "/checkpoints"}],
    "nccl": {"debug": "INFO"},
    "resources": {"cpu": "32", "memory": "512Gi"},
}


def _construct(monitor: RecordingMonitor, inputs: dict[str, Any], name: str = "llama") -> Any:
    return construct(monitor, "gpu-training:index:TrainingJob", name, inputs, timeout=120)


def _registered(monitor: RecordingMonitor) -> list[tuple[str, str, str, dict[str, Any]]]:
    # The fake monitor's gRPC threads lack the test's Pulumi settings, so its URNs read stack::project.
    def urn(u: str) -> str:
        return u.replace("urn:pulumi:stack::project::", "urn:pulumi:dev::gpu-training::")

    return [(r.type, r.name, urn(r.parent), copy.deepcopy(r.inputs)) for r in monitor.registrations]


def test_construct_registers_what_the_python_api_does(pulumi_mocks: RecordingMonitor) -> None:
    pool = resolve_file(REPO / "Pulumi.dev.yaml").pools["h100"]
    response = _construct(
        pulumi_mocks, {**JOB, "pool": pool.to_config(), "schedulerType": "volcano", "defaultQueue": "research"}
    )
    remote = _registered(pulumi_mocks)
    state = json_format.MessageToDict(response.state)
    assert response.urn.endswith("$gpu-training:index:TrainingJob::llama")
    assert state["worldSize"] == 16
    assert state["workload"] == "TrainJob/training/llama"

    pulumi_mocks.registrations.clear()
    run(lambda: TrainingJob("llama", JOB, pool=pool, scheduler="volcano", queue="research"))
    local = _registered(pulumi_mocks)

    assert [(t, n) for t, n, _, _ in remote] == [(t, n) for t, n, _, _ in local]
    assert remote == local, "same parents and inputs, object by object"
    assert remote[0][0] == "gpu-training:index:TrainingJob"


def test_a_config_mistake_comes_back_as_an_error_naming_the_field(pulumi_mocks: RecordingMonitor) -> None:
    pool = resolve_file(REPO / "Pulumi.dev.yaml").pools["h100"]
    with pytest.raises(grpc.RpcError) as raised:
        _construct(pulumi_mocks, {**JOB, "nodes": 0, "pool": pool.to_config()})
    assert "nodes" in str(raised.value.details())


def test_a_missing_required_input_is_refused_before_the_component_runs(pulumi_mocks: RecordingMonitor) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        _construct(pulumi_mocks, {"image": "x", "command": ["train.py"]})
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert not pulumi_mocks.registrations


def test_the_callers_kubernetes_provider_reaches_every_object(pulumi_mocks: RecordingMonitor) -> None:
    """A TypeScript program passes `providers: [k8sProvider]` (a kubeconfig from the platform stack): the engine
    sends it in Construct's providers, and every Kubernetes object the job makes uses it."""
    import pulumi_kubernetes as k8s

    pool = resolve_file(REPO / "Pulumi.dev.yaml").pools["h100"]
    run(lambda: k8s.Provider("train-dev", kubeconfig="apiVersion: v1\nkind: Config\n"))
    registered = pulumi_mocks.named("train-dev")
    ref = f"{registered.urn}::train-dev-id"
    pulumi_mocks.registrations.clear()
    inputs = {**JOB, "pool": pool.to_config(), "schedulerType": "volcano"}
    construct(
        pulumi_mocks,
        "gpu-training:index:TrainingJob",
        "llama",
        inputs,
        project="workloads",
        providers={"kubernetes": ref},
    )
    objects = [r for r in pulumi_mocks.registrations if r.type.startswith("kubernetes:")]
    assert {r.type for r in objects} >= {"kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob"}
    assert all(r.provider == ref for r in objects), [(r.type, r.provider) for r in objects]


def test_a_secret_env_value_from_another_language_becomes_the_jobs_own_secret(pulumi_mocks: RecordingMonitor) -> None:
    """`env: {HF_TOKEN: pulumi.secret(...)}` in TypeScript: the engine sends the value wrapped as a secret."""
    token = "hf_fromAnotherLanguage0123456789"
    pool = resolve_file(REPO / "Pulumi.dev.yaml").pools["h100"]
    wrapped = {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "value": token}
    env = {"HF_TOKEN": wrapped, "EPOCHS": "3", "WANDB_API_KEY": {"secretKeyRef": {"name": "wandb", "key": "k"}}}
    response = _construct(pulumi_mocks, {**JOB, "launcher": "pytorch", "env": env, "pool": pool.to_config()})
    assert json_format.MessageToDict(response.state)["workload"] == "PyTorchJob/training/llama", "not secret"
    secret = pulumi_mocks.named("llama-env-secret")
    assert SECRET_SIG in secret.inputs["data"], "kept a secret"
    workload = pulumi_mocks.named("llama-pytorchjob")
    master = workload.inputs["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in master["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "llama-env", "key": "HF_TOKEN"}
    # The engine sends the env holding a secret as one secret: every text value of it is kept in the Secret.
    assert env["EPOCHS"]["valueFrom"]["secretKeyRef"] == {"name": "llama-env", "key": "EPOCHS"}
    assert env["WANDB_API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "wandb", "key": "k"}
    assert token not in repr([r.inputs for r in pulumi_mocks.registrations if r is not secret])
