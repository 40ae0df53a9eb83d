"""The little of kustomize and Helm that reading upstream trees needs: an overlay's objects as `kustomize build`
makes them, and chart values merged as Helm merges them.

Only what the operators' standalone overlays and the controllers' webhook folders use: resources (files and
folders), JSON 6902 patches with a target, the namespace transformer and secretGenerator; labels, images and name
references change nothing a process out of cluster runs with, so they are left out. Anything else in a
kustomization is an error, so an overlay this cannot build is never half-built.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.simulate import modfiles

CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "PriorityClass",
    }
)
# Fields that only shape images, labels or kustomize's own bookkeeping.
_IGNORED = frozenset({"apiVersion", "kind", "images", "labels", "commonLabels", "configurations"})
_HANDLED = frozenset({"resources", "patches", "namespace", "secretGenerator"})


class KustomizeError(RuntimeError):
    """The kustomization uses something this builder does not do."""


def build(folder: Path) -> list[dict[str, Any]]:
    """Every object the kustomization in `folder` makes."""
    spec = modfiles.load(folder / "kustomization.yaml") or {}
    unknown = set(spec) - _IGNORED - _HANDLED
    if unknown:
        raise KustomizeError(f"{folder}/kustomization.yaml uses {', '.join(sorted(unknown))}")
    objects: list[dict[str, Any]] = []
    for resource in spec.get("resources", []):
        path = (folder / resource).resolve()
        if path.is_dir():
            objects += build(path)
        else:
            objects += modfiles.documents(path)
    for generated in spec.get("secretGenerator", []):
        objects.append(_secret(generated))
    for patch in spec.get("patches", []):
        _patch(folder, patch, objects)
    if namespace := spec.get("namespace"):
        for obj in objects:
            if obj.get("kind") not in CLUSTER_SCOPED:
                obj.setdefault("metadata", {})["namespace"] = namespace
    return objects


def _secret(generated: dict[str, Any]) -> dict[str, Any]:
    if generated.get("files") or generated.get("literals") or generated.get("envs"):
        raise KustomizeError(f"secretGenerator {generated['name']} has data")
    if not generated.get("options", {}).get("disableNameSuffixHash"):
        raise KustomizeError(f"secretGenerator {generated['name']} names its Secret with a hash")
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": generated["name"]}, "type": "Opaque"}


def _patch(folder: Path, patch: dict[str, Any], objects: list[dict[str, Any]]) -> None:
    operations = modfiles.load(folder / patch["path"])
    if not isinstance(operations, list):
        raise KustomizeError(f"{folder / patch['path']} is a strategic-merge patch")
    target = patch.get("target", {})
    for obj in objects:
        group, _, version = obj.get("apiVersion", "").rpartition("/")
        wanted = {"group": group, "version": version, "kind": obj.get("kind"), "name": obj["metadata"].get("name")}
        if all(target[k] == v for k, v in wanted.items() if k in target):
            for operation in operations:
                _json_patch(obj, operation)


def _json_patch(obj: dict[str, Any], operation: dict[str, Any]) -> None:
    """One JSON Patch (RFC 6902) `add` or `replace`."""
    op, path = operation["op"], operation["path"]
    if op not in ("add", "replace"):
        raise KustomizeError(f"JSON patch op {op} at {path}")
    *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
    where: Any = obj
    for part in parents:
        where = where[int(part)] if isinstance(where, list) else where[part]
    value = copy.deepcopy(operation["value"])
    if isinstance(where, list):
        if last == "-":
            where.append(value)
        elif op == "add":
            where.insert(int(last), value)
        else:
            where[int(last)] = value
    else:
        where[last] = value


def container(objects: list[dict[str, Any]], deployment: str, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The Deployment named `deployment` among `objects` and its container named `name`."""
    for obj in objects:
        if obj.get("kind") == "Deployment" and obj["metadata"]["name"] == deployment:
            for spec in obj["spec"]["template"]["spec"]["containers"]:
                if spec["name"] == name:
                    return obj, spec
    raise KustomizeError(f"no Deployment {deployment} with a container {name}")


def env_of(deployment: dict[str, Any], spec: dict[str, Any], pod_name: str) -> dict[str, str]:
    """The container's environment as the kubelet sets it: values, and the pod's own name and namespace."""
    fields = {"metadata.name": pod_name, "metadata.namespace": deployment["metadata"].get("namespace", "default")}
    env = {}
    for var in spec.get("env", []):
        if "value" in var:
            env[var["name"]] = str(var["value"])
        elif (path := var.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")) in fields:
            env[var["name"]] = fields[path]
        else:
            raise KustomizeError(f"{var['name']} comes from {var.get('valueFrom')}")
    return env


def patched(folder: Path, patch: Callable[[dict[str, Any]], dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The overlay in `folder` with `patch` applied to a copy of each object, as a stack patches an upstream
    install (None drops the object)."""
    return [p for o in build(folder) if (p := patch(copy.deepcopy(o))) is not None]


def merged(base: dict[str, Any], *overrides: dict[str, Any]) -> dict[str, Any]:
    """`base` with each of `overrides` merged over it in turn, maps key by key, as Helm merges values."""
    out = copy.deepcopy(base)
    for override in overrides:
        for key, value in override.items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = merged(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
    return out
