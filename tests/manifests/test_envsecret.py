"""Every launcher's pods carry the job's env from Secrets and ConfigMaps, its envFrom, pull secrets and mounted
Secrets and ConfigMaps; a Pulumi secret is read from the job's own Secret, which render leaves to deploy time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from components.manifests import envsecret, trainingjob
from components.manifests.mpijob import mpirun_args
from components.manifests.plan import JobPlan, plan
from components.models.envsource import Sealed
from tests.support.factories import job, pool, with_trainer
from tests.support.schemas import assert_valid

LAUNCHERS = ["pytorch", "mpi", "tensorflow", "indexed", "trainjob"]
ENV = {
    "HF_TOKEN": {"secure": "v1:ciphertext"},
    "WANDB_API_KEY": {"secretKeyRef": {"name": "wandb", "key": "api-key"}},
    "RUN_CONFIG": {"configMapKeyRef": {"name": "run", "key": "config.yaml", "optional": True}},
    "EPOCHS": "3",
}
FILES = [
    {"secret": "gcs-key", "mountPath": "/var/secrets/google"},
    {"configMap": "accelerate", "mountPath": "/etc/accelerate/default.yaml", "subPath": "default.yaml"},
]


def planned(launcher: str, **fields: Any) -> JobPlan:
    target = with_trainer(pool("roce")) if launcher == "trainjob" else pool("roce")
    env_from = [{"secretRef": "s3-credentials", "prefix": "S3_"}] if launcher not in ("mpi", "trainjob") else []
    spec = job(
        launcher=launcher,
        env=ENV,
        envFrom=env_from,
        imagePullSecrets=["regcred"],
        files=FILES,
        **fields,
    )
    return plan(spec, target, "volcano", "research")


def pod_specs(value: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec (or runtime patch of one) in an object."""
    if isinstance(value, dict):
        if "containers" in value:
            yield value
        for child in value.values():
            yield from pod_specs(child)
    elif isinstance(value, list):
        for child in value:
            yield from pod_specs(child)


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


SECRET_REF = {"valueFrom": {"secretKeyRef": {"name": "train-env", "key": "HF_TOKEN"}}}


@pytest.mark.parametrize("launcher", [launcher for launcher in LAUNCHERS if launcher != "trainjob"])
def test_every_pod_of_an_operator_or_indexed_job_reads_the_secrets_and_mounts_the_files(launcher: str) -> None:
    p = planned(launcher)
    workload = trainingjob.objects(p)[-1]
    assert_valid(workload)
    pods = list(pod_specs(workload["spec"]))
    assert len(pods) >= 1 + (launcher in ("pytorch", "mpi", "tensorflow"))  # a launcher or master beside workers
    for pod in pods:
        assert pod["imagePullSecrets"] == [{"name": "regcred"}]
        container = pod["containers"][0]
        env = env_of(container)
        assert env["HF_TOKEN"] == {"name": "HF_TOKEN", **SECRET_REF}
        assert env["WANDB_API_KEY"]["valueFrom"] == {"secretKeyRef": {"name": "wandb", "key": "api-key"}}
        assert env["RUN_CONFIG"]["valueFrom"]["configMapKeyRef"]["optional"] is True
        assert env["EPOCHS"] == {"name": "EPOCHS", "value": "3"}
        if launcher != "mpi":
            assert container["envFrom"] == [{"secretRef": {"name": "s3-credentials"}, "prefix": "S3_"}]
        if "volumeMounts" not in container:
            continue  # the MPI launcher runs mpirun only: the files are the workers'
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        secret = mounts["/var/secrets/google"]
        assert secret["readOnly"] is True and volumes[secret["name"]]["secret"] == {"secretName": "gcs-key"}
        config = mounts["/etc/accelerate/default.yaml"]
        assert config["subPath"] == "default.yaml" and volumes[config["name"]]["configMap"] == {"name": "accelerate"}


def test_mpirun_forwards_the_variables_read_from_secrets_to_the_ranks() -> None:
    args = mpirun_args(planned("mpi"))
    forwarded = {args[i + 1] for i, a in enumerate(args) if a == "-x"}
    assert {"HF_TOKEN", "WANDB_API_KEY", "RUN_CONFIG"} <= forwarded


def test_a_trainjob_takes_the_env_in_its_trainer_and_the_rest_in_its_runtime_patch() -> None:
    p = planned("trainjob")
    trainjob = trainingjob.objects(p)[-1]
    assert_valid(trainjob)
    env = env_of(trainjob["spec"]["trainer"])
    assert env["HF_TOKEN"] == {"name": "HF_TOKEN", **SECRET_REF}
    assert env["WANDB_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "wandb"
    (patch,) = trainjob["spec"]["runtimePatches"]
    for replicated in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]:
        pod = replicated["template"]["spec"]["template"]["spec"]
        assert pod["imagePullSecrets"] == [{"name": "regcred"}]
        assert {"secret": {"secretName": "gcs-key"}} in [
            {k: v for k, v in x.items() if k != "name"} for x in pod["volumes"]
        ]
        assert "/var/secrets/google" in [m["mountPath"] for m in pod["containers"][0]["volumeMounts"]]


def test_render_holds_no_secret_object_and_names_it_made_at_deploy() -> None:
    p = planned("pytorch")
    assert not [o for o in trainingjob.objects(p) if o["kind"] == "Secret"]
    assert envsecret.made_at_deploy(p) == "Secret training/train-env (HF_TOKEN)"
    assert envsecret.made_at_deploy(plan(job(env={"A": "1"}), pool("roce"))) is None


def test_the_jobs_secret_has_one_key_per_variable_in_the_jobs_namespace() -> None:
    p = plan(job(namespace="research", env={"HF_TOKEN": Sealed("hf_x")}), pool("tcp"))
    secret = envsecret.env_secret(p, {"HF_TOKEN": envsecret.encode("hf_x")})
    assert_valid(secret)
    assert secret["metadata"]["name"] == "train-env" and secret["metadata"]["namespace"] == "research"
    assert secret["data"] == {"HF_TOKEN": "aGZfeA=="}
    assert secret["metadata"]["labels"]["app.kubernetes.io/instance"] == "train"


def test_a_long_secret_name_still_makes_a_valid_volume_name() -> None:
    long = "a." * 60 + "b"
    p = plan(job(files=[{"secret": long, "mountPath": "/s"}]), pool("roce"))
    workload = trainingjob.objects(p)[-1]
    assert_valid(workload)
    (name,) = [v["name"] for v in next(pod_specs(workload))["volumes"] if "secret" in v]
    assert len(name) <= 63 and name.startswith("secret-")
