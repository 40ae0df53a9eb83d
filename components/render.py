"""Render a stack offline: every Kubernetes object it would create, as YAML files, and a summary."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.addons.plan import AddonPlan
from components.addons.plan import plan as addon_plan
from components.errors import ConfigError
from components.manifests import platform, trainingjob
from components.validation import Stack

MARKER = ".gpu-training-render"


@dataclass(frozen=True, slots=True)
class Rendered:
    """What a stack renders to: the validated stack and its Kubernetes objects in apply order."""

    stack: Stack
    objects: tuple[dict[str, Any], ...]
    addons: AddonPlan

    def summary(self) -> str:
        """Per pool: its jobs, their pods and GPUs; then the object counts by kind."""
        lines = [
            f"cluster {self.stack.config.cluster.name} ({self.stack.config.cluster.provider}), "
            f"scheduler {self.stack.scheduler}"
        ]
        for pool in self.stack.pools.values():
            jobs = [p for p in self.stack.jobs if p.pool.name == pool.name]
            pods = sum(p.nodes + (1 if p.spec.launcher == "mpi" else 0) for p in jobs)
            gpus = sum(p.world_size for p in jobs)
            lines.append(f"  pool {pool.summary()}: {len(jobs)} jobs, {pods} pods, {gpus} GPUs")
            for p in jobs:
                lines.append(
                    f"    {p.spec.launcher:<10} {p.namespace}/{p.name}: {p.nodes} x {p.gpus_per_node} GPUs "
                    f"(world size {p.world_size})"
                )
        later = [
            f"{'PersistentVolume' if v.backend == 'fsx-lustre' else 'StorageClass'} for {v.namespace}/{v.name}"
            for v in self.stack.config.storage.volumes
            if v.backend in ("efs", "fsx-lustre") and v.file_system_id is None
        ]
        if later:
            lines.append("made at deploy time, once the file systems exist: " + ", ".join(later))
        installs = [r.name for r in self.addons.remotes] + [r.name for r in self.addons.releases]
        lines.append("add-ons: " + (", ".join(installs) or "none"))
        kinds: dict[str, int] = {}
        for obj in self.objects:
            kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
        lines.append("objects: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
        return "\n".join(lines)


def render(stack: Stack) -> Rendered:
    """Every object of the stack (platform objects, the add-ons' objects, each job's), and its add-ons."""
    addons = addon_plan(stack)
    objects = [*platform.objects(stack), *addons.objects]
    for plan in stack.jobs:
        objects += trainingjob.objects(plan)
    return Rendered(stack=stack, objects=tuple(objects), addons=addons)


def object_path(obj: dict[str, Any]) -> Path:
    """Where an object is written: <namespace or _cluster>/<kind>-<name>.yaml."""
    meta = obj["metadata"]
    return Path(meta.get("namespace", "_cluster")) / f"{obj['kind'].lower()}-{meta['name']}.yaml"


def write(rendered: Rendered, out: Path) -> list[Path]:
    """Write each object to its own YAML file under `out`, each Helm release under `out`/helm/ and each
    remote install under `out`/remote/, replacing an earlier render there."""
    _prepare(out)
    files: list[tuple[Path, dict[str, Any]]] = [(out / object_path(obj), obj) for obj in rendered.objects]
    files += [(out / "helm" / f"{r.name}.yaml", r.describe()) for r in rendered.addons.releases]
    files += [(out / "remote" / f"{r.name}.yaml", r.describe()) for r in rendered.addons.remotes]
    for path, document in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump([document]), encoding="utf-8")
    return [path for path, _ in files]


def dump(objects: Iterable[dict[str, Any]]) -> str:
    """Objects as a YAML stream, keys in builder order, multi-line strings as blocks."""
    return yaml.dump_all(list(objects), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def _prepare(out: Path) -> None:
    if out.exists():
        if not (out / MARKER).exists() and any(out.iterdir()):
            raise ConfigError(f"{out} is not empty and was not written by render; choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by python -m components render; replaced on every run\n", encoding="utf-8")


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml's emitter when PyYAML has it
    """YAML without anchors (objects share lists in memory, not in output), blocks for text."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)
