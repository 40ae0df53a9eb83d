"""The little of kustomize (JSON 6902 patches) and Helm (merged values) that reading upstream trees needs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml


def _step(path: str) -> list[str]:
    return [part.replace("~1", "/").replace("~0", "~") for part in path.lstrip("/").split("/")]


def json6902(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """`doc` with the JSON patch operations `ops` (add, replace, remove) applied, as kustomize applies them."""
    out = copy.deepcopy(doc)
    for op in ops:
        *parents, last = _step(op["path"])
        target: Any = out
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        kind = op["op"]
        if isinstance(target, list):
            if kind == "add":
                target.insert(len(target) if last == "-" else int(last), copy.deepcopy(op["value"]))
            elif kind == "replace":
                target[int(last)] = copy.deepcopy(op["value"])
            elif kind == "remove":
                del target[int(last)]
            else:
                raise ValueError(f"unsupported JSON patch operation {kind!r}")
        elif kind in ("add", "replace"):
            target[last] = copy.deepcopy(op["value"])
        elif kind == "remove":
            del target[last]
        else:
            raise ValueError(f"unsupported JSON patch operation {kind!r}")
    return out


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


def _targets(patch: dict[str, Any], doc: dict[str, Any]) -> bool:
    target = patch.get("target", {})
    name = doc["metadata"]["name"]
    return target.get("kind", doc["kind"]) == doc["kind"] and target.get("name", name) == name


def built(folder: Path, resource: str) -> list[dict[str, Any]]:
    """The documents of `resource` in the kustomization `folder`, with the JSON 6902 patches its
    kustomization.yaml lists applied to the documents they target (by kind and name)."""
    recipe = yaml.safe_load((folder / "kustomization.yaml").read_text())
    out = []
    for doc in yaml.safe_load_all((folder / resource).read_text()):
        if not doc:
            continue
        result = doc
        for patch in recipe.get("patches", []):
            if _targets(patch, result):
                result = json6902(result, yaml.safe_load((folder / patch["path"]).read_text()))
        out.append(result)
    return out
