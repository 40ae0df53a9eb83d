"""Whether the checkpoints a GPU job writes outlive its pods and can be written at all: the paths its command line or
env name for checkpoints lie on a mounted volume, not in the container's own filesystem, which a restart discards;
not on a read-only mount; and, on a bucket mounted through an object-store CSI driver (Mountpoint for Amazon S3,
Cloud Storage FUSE), on a mount with the write path checkpoints need."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from components.manifests.storage import GCS_DRIVER, S3_CHECKPOINT_OPTIONS, S3_DRIVER
from components.rules.commands import command_line
from components.rules.pods import templates
from components.rules.podtemplate import PodTemplate
from components.rules.rule import Advice, Rule, Settings
from components.rules.subject import Subject

CHECKPOINT_FLAG = re.compile(
    r"^--?(save|save[-_]dir|save[-_]path|checkpoints?[-_](dir|folder|file)|ckpt[-_]dir|output[-_]dir|model[-_]dir"
    r"|default[-_]root[-_]dir)$"
)
"""The flags training scripts take the folder they write checkpoints to by (Megatron --save, HF --output_dir, TF
--model_dir, Lightning --default_root_dir, ...); not those that name a checkpoint to load (--checkpoint,
--ckpt_path)."""
CHECKPOINT_ENV = re.compile(r"^(CHECKPOINT|CKPT|SAVE|OUTPUT|MODEL)(_DIR|_PATH|S_DIR|_FOLDER)$|^CHECKPOINT$")
"""Env variables naming a checkpoint folder."""


def _paths(t: PodTemplate, container: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, where it is named) for each absolute checkpoint path the container names."""
    env = t.env(container)
    for name, value in env.items():
        if CHECKPOINT_ENV.match(name) and value.startswith("/"):
            yield value, f"env {name}"
    words = command_line(container).words
    for n, word in enumerate(words):
        name, equals, value = word.partition("=")
        if not CHECKPOINT_FLAG.match(name):
            continue
        if not equals:
            value = words[n + 1] if n + 1 < len(words) else ""
        if value.startswith("$"):  # a variable the container's env may state
            value = env.get(value.strip("${}()"), "")
        if value.startswith("/"):
            yield value, name


def _mount(container: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The container's mount a path lies on, the deepest holding it; None when on none."""
    mounts = [
        m
        for m in container.get("volumeMounts", [])
        if isinstance(m.get("mountPath"), str)
        and (path == m["mountPath"].rstrip("/") or path.startswith(m["mountPath"].rstrip("/") + "/"))
    ]
    return max(mounts, key=lambda m: len(m["mountPath"])) if mounts else None


def _volume(t: PodTemplate, mount: dict[str, Any]) -> dict[str, Any]:
    """The pod volume a mount names ({} when the pod lacks it)."""
    return next((v for v in t.spec.get("volumes", []) if v.get("name") == mount.get("name")), {})


def _claim(data: dict[str, Any], claim: str, subjects: list[Subject]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A claim of the workload's namespace and the PersistentVolume it binds to, each {} when not among the
    subjects."""
    namespace = (data.get("metadata") or {}).get("namespace") or "default"
    pvc = next((s.data for s in subjects if s.key == f"PersistentVolumeClaim/{namespace}/{claim}"), {})
    name = (pvc.get("spec") or {}).get("volumeName")
    if not isinstance(name, str) or not name:
        return pvc, {}
    return pvc, next((s.data for s in subjects if s.key == f"PersistentVolume/{name}"), {})


def _read_only(mount: dict[str, Any], volume: dict[str, Any], pvc: dict[str, Any], pv: dict[str, Any]) -> str | None:
    """Why the mount cannot be written, if it cannot: mounted readOnly, a read-only claim, a ReadOnlyMany volume."""
    if mount.get("readOnly") is True:
        return "mounted readOnly"
    if (volume.get("persistentVolumeClaim") or {}).get("readOnly") is True:
        return "its claim is mounted readOnly"
    for what, obj in (("claim", pvc), ("volume", pv)):
        if ((obj.get("spec") or {}).get("accessModes") or []) == ["ReadOnlyMany"]:
            return f"its {what} is ReadOnlyMany"
    return None


def _object_store_gaps(bound: dict[str, Any]) -> list[str | Advice]:
    """What a bucket's volume lacks for checkpoints: Mountpoint's delete and overwrite (mandatory: rotation and a
    rewritten pointer file fail without them), gcsfuse's streaming writes (advice: without them a file is staged
    whole on local disk, and before gcsfuse 3.0 that was the default)."""
    spec = bound.get("spec") or {}
    csi = spec.get("csi") or {}
    options = [o.strip() for o in spec.get("mountOptions") or [] if isinstance(o, str)]
    if csi.get("driver") == S3_DRIVER:
        if "read-only" in options:
            return ["its Mountpoint volume is mounted read-only (mount option read-only)"]
        missing = [o for o in S3_CHECKPOINT_OPTIONS if o not in options]
        if missing:
            return [
                f"its Mountpoint volume lacks {' and '.join(missing)}: Mountpoint refuses to delete or overwrite "
                "a file without them, so rotating old checkpoints and rewriting a `latest` file fail"
            ]
    elif csi.get("driver") == GCS_DRIVER and "write:enable-streaming-writes:true" not in options:
        return [
            Advice(
                "its gcsfuse volume does not set write:enable-streaming-writes:true: where gcsfuse does not stream "
                "(before v3.0, or turned off), each checkpoint file is staged whole on the node's disk first"
            )
        ]
    return []


def checkpoint_path(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """Checkpoint paths a GPU job's command line or env names are on a writable mounted volume, not in the
    container, and a bucket's volume there has the write options checkpoints need."""
    for t in templates(subject.data, subjects):
        if not t.gpus:
            continue
        for c in t.spec.get("containers", []):
            for path, where in dict.fromkeys(_paths(t, c)):
                at = f"{t.role}/{c.get('name')}: writes checkpoints to {path} ({where})"
                mount = _mount(c, path)
                if mount is None:
                    yield f"{at}, inside the container: they are lost when the pod restarts"
                    continue
                volume = _volume(t, mount)
                if "emptyDir" in volume:
                    yield Advice(f"{at} on an emptyDir, lost when the pod is rescheduled")
                    continue
                claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                pvc, bound = _claim(subject.data, claim, subjects) if isinstance(claim, str) else ({}, {})
                why = _read_only(mount, volume, pvc, bound)
                if why is not None:
                    yield f"{at} on a mount it cannot write: {why}"
                    continue
                for gap in _object_store_gaps(bound):
                    yield Advice(f"{at}: {gap}") if isinstance(gap, Advice) else f"{at}: {gap}"


RULES: tuple[Rule, ...] = (
    Rule(
        "checkpoint-path",
        "high",
        "mandatory",
        (checkpoint_path.__doc__ or "").strip(),
        "mount a writable ReadWriteMany claim at the checkpoint folder (TrainingJob checkpoint: {claim}, or volumes: "
        "{claim, mountPath}); on a bucket, mount it with its checkpoint options (storage.volumes use: checkpoints)",
        ("*",),
        checkpoint_path,
        gpu_only=True,
    ),
)
