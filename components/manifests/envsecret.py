"""What a job's pods read from Secrets and ConfigMaps: env values, envFrom, pull secrets, mounted files; and the
Secret the stack keeps a job's Pulumi secrets in, made only at deploy time, when the values are known."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from components.manifests.meta import job_labels, metadata, volume_name
from components.manifests.plan import JobPlan
from components.models.envsource import ConfigMapKeyEnv, SecretEnv, SecretKeyEnv
from components.models.job import FileMountSpec, TrainingJobSpec


def env_secret_name(job: str) -> str:
    """The Secret holding the job's env values given as Pulumi secrets, one key per variable."""
    return f"{job}-env"


def env_var(name: str, value: Any, job: str = "") -> dict[str, Any]:
    """One EnvVar: text as its value; a Secret's or ConfigMap's key, or the job's own Secret, as valueFrom."""
    if isinstance(value, SecretKeyEnv | ConfigMapKeyEnv):
        return {"name": name, "valueFrom": value.value_from()}
    if isinstance(value, SecretEnv):
        if not job:
            raise ValueError(f"env {name} is a Pulumi secret, which only a job's own Secret can hold")
        return {"name": name, "valueFrom": {"secretKeyRef": {"name": env_secret_name(job), "key": name}}}
    return {"name": name, "value": value}


def env_from(spec: TrainingJobSpec) -> list[dict[str, Any]]:
    """The container's envFrom: every key of the Secrets and ConfigMaps the job names."""
    return [source.to_kubernetes() for source in spec.env_from]


def image_pull_secrets(spec: TrainingJobSpec) -> list[dict[str, str]]:
    """The pod's imagePullSecrets."""
    return [{"name": name} for name in spec.image_pull_secrets]


def file_volumes(spec: TrainingJobSpec) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Secrets and ConfigMaps the job mounts, as pod volumes and container mounts (read-only)."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for mount in spec.file_mounts:
        name, source = _source(mount)
        entry: dict[str, Any] = {"name": name, "mountPath": mount.mount_path, "readOnly": True}
        if mount.sub_path:
            entry["subPath"] = mount.sub_path
        mounts.append(entry)
        if all(v["name"] != name for v in volumes):
            volumes.append({"name": name, **source})
    return volumes, mounts


def _source(mount: FileMountSpec) -> tuple[str, dict[str, Any]]:
    if mount.secret is not None:
        return volume_name(mount.secret, "secret"), {"secret": {"secretName": mount.secret}}
    assert mount.config_map is not None  # the model holds one of secret / configMap
    return volume_name(mount.config_map, "configmap"), {"configMap": {"name": mount.config_map}}


def env_secret(plan: JobPlan, values: Mapping[str, Any]) -> dict[str, Any]:
    """The job's Secret of Pulumi secrets: `values` (variable -> base64 of its value, as the shell makes them,
    secret Outputs in a program) as its data."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(env_secret_name(plan.name), plan.namespace, labels=job_labels(plan.name)),
        "type": "Opaque",
        "data": dict(values),
    }


def encode(text: str) -> str:
    """A Secret's data value: the text's UTF-8 bytes in base64."""
    return base64.b64encode(text.encode()).decode()


def made_at_deploy(plan: JobPlan) -> str | None:
    """`Secret ns/<job>-env (NAME, ...)` when the job has Pulumi secrets, which render cannot read; else None."""
    names = list(plan.spec.secret_env)
    if not names:
        return None
    return f"Secret {plan.namespace}/{env_secret_name(plan.name)} ({', '.join(names)})"
