"""One pulumi_kubernetes resource per manifest dict, typed for core kinds and generic for custom ones."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.errors import ConfigError
from components.immutable import replace_paths
from components.models.base import snake

_TYPED: dict[tuple[str, str], type[pulumi.CustomResource]] = {
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "PersistentVolumeClaim"): k8s.core.v1.PersistentVolumeClaim,
    ("v1", "ResourceQuota"): k8s.core.v1.ResourceQuota,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("v1", "Service"): k8s.core.v1.Service,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("apps/v1", "DaemonSet"): k8s.apps.v1.DaemonSet,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): k8s.rbac.v1.ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "Role"): k8s.rbac.v1.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
    ("batch/v1", "CronJob"): k8s.batch.v1.CronJob,
    ("batch/v1", "Job"): k8s.batch.v1.Job,
    ("storage.k8s.io/v1", "StorageClass"): k8s.storage.v1.StorageClass,
    ("scheduling.k8s.io/v1", "PriorityClass"): k8s.scheduling.v1.PriorityClass,
}

# A port's protocol is TCP unless stated, and we state it (older API servers refuse a port without one under
# server-side apply); release 0.2.0 did not. The API server cannot update a Job's pod template, so
# pulumi-kubernetes replaces the Job on any change to it, and stating the protocol there would kill a running
# Job when a stack moves to a newer release (found on the real engine by tests/engine/test_urns.py). The
# value can only be TCP, so the engine is told to ignore it in the templates it cannot update.
_DEFAULTED_IN_TEMPLATE = {
    ("batch/v1", "Job"): tuple(
        f"spec.template.spec.{containers}[*].ports[*].protocol" for containers in ("containers", "initContainers")
    ),
}


class StackConfigError(ConfigError, pulumi.RunError):
    """A config mistake, reported by Pulumi as a clean error without a traceback."""


def logical_name(obj: dict[str, Any]) -> str:
    """A stable Pulumi name for an object: kind, namespace and name."""
    meta = obj["metadata"]
    parts = [obj["kind"].lower(), meta.get("namespace"), meta["name"]]
    return "-".join(p for p in parts if p)


def kube_object(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions | None = None) -> pulumi.CustomResource:
    """The pulumi_kubernetes resource that creates `obj`; a change the API server refuses in place replaces it."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    if paths := replace_paths(obj):
        # The replacement keeps the object's name, so the old one must go first.
        opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(replace_on_changes=list(paths), delete_before_replace=True)
        )
    if defaulted := _DEFAULTED_IN_TEMPLATE.get((api_version, kind)):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=list(defaulted)))
    fields = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    typed = _TYPED.get((api_version, kind))
    if typed is not None:
        return typed(name, opts=opts, **{snake(k): v for k, v in fields.items()})
    return k8s.apiextensions.CustomResource(name, api_version=api_version, kind=kind, opts=opts, **fields)


def as_pulumi_error(error: ConfigError) -> StackConfigError:
    """The same issues as an error Pulumi prints without a traceback."""
    return StackConfigError(error.issues)
