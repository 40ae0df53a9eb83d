"""The Fleet component under Pulumi's mocks (as `pulumi up -s fleet` runs it): the manager's platform and objects,
a provider per worker, MultiKueue's account on each worker, and each worker's kubeconfig made from that account's
token: a Pulumi secret from the token Secret to the manager's Secret, never a plain input or an output."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

import stacks
from components import Fleet
from components.kubernetes.objects import StackConfigError
from components.models.envsource import Sealed
from tests.support.pulumi_mocks import (
    MOCK_TOKEN,
    MOCK_TOKEN_B64,
    SECRET_SIG,
    RecordingMonitor,
    exported,
    run,
)

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "examples" / "fleet"
ADMIN = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [
        {
            "name": "w",
            "cluster": {"server": "https://ABC.gr7.us-east-1.eks.amazonaws.com", "certificate-authority-data": "RUtT"},
        }
    ],
    "contexts": [{"name": "w", "context": {"cluster": "w", "user": "w"}}],
    "current-context": "w",
    "users": [{"name": "w", "user": {"exec": {"command": "aws", "args": ["eks", "get-token"]}}}],
}
"""A worker stack's `kubeconfig` output: an admin's, whose credentials come from an exec plugin."""
DGX = {
    **ADMIN,
    "clusters": [{"name": "w", "cluster": {"server": "https://10.1.2.3:6443", "certificate-authority-data": "REdY"}}],
    "users": [{"name": "w", "user": {"client-key-data": "S0VZLU9GLVRIRS1BRE1JTg=="}}],
}
"""The inline worker's kubeconfig, given as a Pulumi secret."""


def deploy(monitor: RecordingMonitor, monkeypatch: pytest.MonkeyPatch, **fleet: Any) -> dict[str, Any]:
    """`pulumi up -s fleet` in examples/fleet, its secrets decrypted as Pulumi hands them to the program."""
    monkeypatch.chdir(FOLDER)
    for name in ("p5-east", "p5-west", "a3mega"):
        monitor.recording.stack_outputs[f"organization/gpu-training/{name}"] = {"kubeconfig": yaml.safe_dump(ADMIN)}
    pulumi.runtime.set_mocks(monitor.recording, project="gpu-training", stack="fleet", preview=False, monitor=monitor)
    values = yaml.safe_load((FOLDER / "Pulumi.fleet.yaml").read_text())["config"]
    values["gpu-training:fleet"]["workers"][3]["config"]["cluster"]["kubeconfig"] = yaml.safe_dump(DGX)
    values["gpu-training:fleet"].update(fleet)
    config = {key: json.dumps(value) for key, value in values.items()}
    pulumi.runtime.set_all_config(config, secret_keys=["gpu-training:fleet"])
    return run(lambda: stacks.run(stacks.load()))


def _plain(value: Any) -> Any:
    """A registration's inputs with every secret value left out: what the state would hold in plain text."""
    if isinstance(value, dict):
        if SECRET_SIG in value:
            return "<secret>"
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _secret(value: Any) -> Any:
    assert isinstance(value, dict) and SECRET_SIG in value, "a secret output"
    return value["value"]


def test_each_workers_kubeconfig_is_made_from_its_own_token_and_kept_secret(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy(pulumi_mocks, monkeypatch)
    for worker, server, ca in [
        ("p5-east", "https://ABC.gr7.us-east-1.eks.amazonaws.com", "RUtT"),
        ("dgx", "https://10.1.2.3:6443", "REdY"),
    ]:
        secret = pulumi_mocks.named(f"manager-secret-kueue-system-multikueue-{worker}")
        assert secret.inputs["metadata"] == {
            "name": f"multikueue-{worker}",
            "namespace": "kueue-system",
            "labels": {"app.kubernetes.io/managed-by": "gpu-training"},
        }
        data = _secret(secret.inputs["data"])
        config = yaml.safe_load(base64.b64decode(data["kubeconfig"]))
        (user,) = config["users"]
        assert user["user"] == {"token": MOCK_TOKEN}, "the worker's MultiKueue token, not an admin's credentials"
        (cluster,) = config["clusters"]
        assert cluster["cluster"] == {"server": server, "certificate-authority-data": ca}
        manager = pulumi_mocks.named("fleet-manager-kubernetes")
        assert secret.provider.startswith(manager.urn), "on the manager"


def test_no_token_or_kubeconfig_is_a_plain_input_or_an_output(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    exports = deploy(pulumi_mocks, monkeypatch)
    plain = json.dumps([_plain(r.inputs) for r in pulumi_mocks.registrations], default=str)
    for text in (MOCK_TOKEN, MOCK_TOKEN_B64, "S0VZLU9GLVRIRS1BRE1JTg==", "get-token"):
        assert text not in plain
    for worker in ("p5-east", "p5-west", "a3mega"):
        provider = pulumi_mocks.named(f"{worker}-kubernetes")
        assert "get-token" in json.dumps(_secret(provider.inputs["kubeconfig"])), "reached with the stack's kubeconfig"
    values = exported(exports)
    assert set(values) == {"manager", "workers", "queues", "jobs"}
    assert "kubeconfig" not in json.dumps(values) and MOCK_TOKEN not in json.dumps(values)


def test_each_worker_gets_multikueues_account_role_and_token_on_its_own_provider(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy(pulumi_mocks, monkeypatch)
    read = pulumi_mocks.recording.inputs  # a StackReference is read, not registered
    references = {inputs["name"] for (kind, _), inputs in read.items() if kind == "pulumi:pulumi:StackReference"}
    assert references == {f"organization/gpu-training/{w}" for w in ("p5-east", "p5-west", "a3mega")}
    providers = {
        "p5-east": pulumi_mocks.named("p5-east-kubernetes").urn,
        "dgx": pulumi_mocks.named("dgx-kubernetes").urn,  # the inline worker's, from its own cluster key
    }
    for worker, provider in providers.items():
        token = pulumi_mocks.named(f"{worker}-secret-kueue-system-gpu-training-multikueue-token")
        assert token.inputs["type"] == "kubernetes.io/service-account-token" and token.provider.startswith(provider)
        role = pulumi_mocks.named(f"{worker}-clusterrole-gpu-training-multikueue")
        assert {r["resources"][0] for r in role.inputs["rules"]} == {"workloads", "workloads/status", "trainjobs"}
        # The token controller deletes a token Secret made before its account (the real engine saw the create fail).
        account = pulumi_mocks.named(f"{worker}-serviceaccount-kueue-system-gpu-training-multikueue")
        assert account.urn in token.dependencies, "the account first"


def test_the_manager_holds_the_queues_multikueue_and_jobs_after_what_they_need(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy(pulumi_mocks, monkeypatch)
    cluster = pulumi_mocks.named("manager-multikueuecluster-p5-east")
    assert pulumi_mocks.named("manager-secret-kueue-system-multikueue-p5-east").urn in cluster.dependencies
    job = pulumi_mocks.named("manager-trainjob-training-llama-pretrain")
    assert job.inputs["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert pulumi_mocks.named("manager-clustertrainingruntime-p5-torch").urn in job.dependencies
    assert pulumi_mocks.named("manager-localqueue-training-h100").urn in job.dependencies
    kueue = next(r for r in pulumi_mocks.of_type("kubernetes:helm.sh/v3:Release") if r.name == "kueue")
    config = yaml.safe_load(kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["integrations"]["frameworks"] == ["trainer.kubeflow.org/trainjob"]
    worker_kueue = pulumi_mocks.named("dgx-kueue")
    assert "waitForPodsReady" in worker_kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]


def test_the_inline_workers_platform_is_named_apart_from_the_managers(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy(pulumi_mocks, monkeypatch)
    urns = [r.urn for r in pulumi_mocks.registrations]
    assert len(urns) == len(set(urns))
    fleet = pulumi_mocks.named("gpu-training")
    children = {r.name for r in pulumi_mocks.registrations if r.parent == fleet.urn}
    assert {"manager", "worker-dgx", "p5-east-kubernetes", "manager-clusterqueue-h100"} <= children
    platform = pulumi_mocks.named("worker-dgx")
    assert {r.name for r in pulumi_mocks.registrations if r.parent == platform.urn} >= {
        "dgx",
        "dgx-addons",
        "dgx-platform",
    }


def test_a_rotation_makes_each_worker_a_new_token_secret(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy(pulumi_mocks, monkeypatch, rotation="2026-12-01")
    token = pulumi_mocks.named("p5-east-secret-kueue-system-gpu-training-multikueue-token-2026-12-01")
    assert token.inputs["metadata"]["name"] == "gpu-training-multikueue-token-2026-12-01"
    secret = pulumi_mocks.named("manager-secret-kueue-system-multikueue-p5-east")
    assert token.urn in secret.dependencies, "the manager's kubeconfig follows the new token"


def test_the_exports_say_where_each_job_may_run(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = exported(deploy(pulumi_mocks, monkeypatch))
    assert values["manager"] == "fleet-manager"
    assert values["queues"]["h100"] == ["p5-east", "p5-west"]
    assert values["jobs"]["training/llama-sweep"] == {
        "workload": "TrainJob/training/llama-sweep",
        "workers": ["p5-east"],
    }
    assert values["workers"]["dgx"] == {"platform": "fleet", "queues": ["ib"]}
    assert values["workers"]["p5-east"] == {"platform": "own stack", "queues": ["h100"]}


def test_a_config_mistake_is_a_clean_error_naming_the_key(
    pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FOLDER)
    keys = {
        k.removeprefix("gpu-training:"): v
        for k, v in yaml.safe_load((FOLDER / "Pulumi.fleet.yaml").read_text())["config"].items()
    }
    keys["jobs"][0]["scheduler"] = {"queue": "nope"}
    with pytest.raises(StackConfigError) as raised:
        Fleet("gpu-training", keys)
    assert "Fleet gpu-training" in str(raised.value) and "jobs[0].scheduler.queue" in str(raised.value)


def test_a_jobs_pulumi_secret_becomes_its_own_secret_on_each_of_its_workers(
    pulumi_mocks: RecordingMonitor, tmp_path: Path
) -> None:
    token = "hf_ExampleTokenValueThatIsSecretAbCdEfGhIjKlMn"
    (tmp_path / "dgx.yaml").write_text(yaml.safe_dump(DGX))  # a kubeconfig file's path, as a stack may give it
    worker = {
        "cluster": {"provider": "existing", "name": "w", "kubeconfig": str(tmp_path / "dgx.yaml")},
        "nodePools": [{"name": "h100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": {"pool": "h100"}}],
        "scheduler": {"type": "kueue", "queues": [{"name": "research", "gpus": 32, "namespaces": ["training"]}]},
        "namespaces": [{"name": "training"}],
    }
    job = {"name": "tune", "image": "registry.example.com/t:v1", "command": ["train.py"], "nodes": 2}
    keys = {
        "cluster": {"provider": "existing", "name": "m"},
        "fleet": {"workers": [{"name": "a", "config": worker}]},
        "jobs": [{**job, "env": {"HF_TOKEN": Sealed(pulumi.Output.secret(token))}}],
    }
    run(lambda: Fleet("gpu-training", keys))
    secret = pulumi_mocks.named("a-secret-training-tune-env")
    assert secret.provider.startswith(pulumi_mocks.named("w-kubernetes").urn), "on the worker that runs it"
    _secret(secret.inputs["data"])
    plain = json.dumps([_plain(r.inputs) for r in pulumi_mocks.registrations], default=str)
    assert token not in plain and base64.b64encode(token.encode()).decode() not in plain
    job_on_manager = pulumi_mocks.named("manager-trainjob-training-tune")
    assert secret.urn in job_on_manager.dependencies, "dispatched once its Secret is on its worker"


def test_an_inline_workers_kubeconfig_points_where_its_cluster_key_s_context_does(
    pulumi_mocks: RecordingMonitor, tmp_path: Path
) -> None:
    # One kubeconfig for two clusters, the worker's `context` choosing the second: its platform's provider manages that
    # cluster, so MultiKueue's kubeconfig must point there too (not at the current context's, or it fails to choose).
    two = {
        **DGX,
        "clusters": [
            *DGX["clusters"],
            {"name": "b", "cluster": {"server": "https://10.9.9.9:6443", "certificate-authority-data": "Qg=="}},
        ],
        "contexts": [*DGX["contexts"], {"name": "b", "context": {"cluster": "b", "user": "w"}}],
    }
    (tmp_path / "two.yaml").write_text(yaml.safe_dump(two))
    worker = {
        "cluster": {"provider": "existing", "name": "w", "kubeconfig": str(tmp_path / "two.yaml"), "context": "b"},
        "nodePools": [{"name": "h100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": {"pool": "h100"}}],
        "scheduler": {"type": "kueue", "queues": [{"name": "research", "gpus": 32, "namespaces": ["training"]}]},
        "namespaces": [{"name": "training"}],
    }
    keys = {"cluster": {"provider": "existing", "name": "m"}, "fleet": {"workers": [{"name": "a", "config": worker}]}}
    run(lambda: Fleet("gpu-training", keys))
    assert pulumi_mocks.named("w-kubernetes").inputs["context"] == "b"
    data = _secret(pulumi_mocks.named("manager-secret-kueue-system-multikueue-a").inputs["data"])
    (cluster,) = yaml.safe_load(base64.b64decode(data["kubeconfig"]))["clusters"]
    assert cluster["cluster"] == {"server": "https://10.9.9.9:6443", "certificate-authority-data": "Qg=="}
