"""Whether the checkpoints a GPU job writes outlive its pods: the paths its command line or env name for
checkpoints lie on a mounted volume, not in the container's own filesystem, which a restart discards."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from components.rules.commands import command_line
from components.rules.pods import templates
from components.rules.podtemplate import PodTemplate
from components.rules.rule import Advice, Rule, Settings, Subject

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


def _volume(t: PodTemplate, container: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The volume a path lies on in the container, the deepest mount holding it; None when on none."""
    mounts = [
        m
        for m in container.get("volumeMounts", [])
        if isinstance(m.get("mountPath"), str)
        and (path == m["mountPath"].rstrip("/") or path.startswith(m["mountPath"].rstrip("/") + "/"))
    ]
    if not mounts:
        return None
    deepest = max(mounts, key=lambda m: len(m["mountPath"]))
    return next((v for v in t.spec.get("volumes", []) if v.get("name") == deepest.get("name")), {})


def checkpoint_path(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """Checkpoint paths a GPU job's command line or env names are on a mounted volume, not in the container."""
    for t in templates(subject.data, subjects):
        if not t.gpus:
            continue
        for c in t.spec.get("containers", []):
            for path, where in dict.fromkeys(_paths(t, c)):
                volume = _volume(t, c, path)
                if volume is None:
                    yield (
                        f"{t.role}/{c.get('name')}: writes checkpoints to {path} ({where}), inside the container: "
                        "they are lost when the pod restarts"
                    )
                elif "emptyDir" in volume:
                    yield Advice(
                        f"{t.role}/{c.get('name')}: writes checkpoints to {path} ({where}) on an emptyDir, lost when "
                        "the pod is rescheduled"
                    )


RULES: tuple[Rule, ...] = (
    Rule(
        "checkpoint-path",
        "high",
        "mandatory",
        (checkpoint_path.__doc__ or "").strip(),
        "mount a ReadWriteMany claim at the checkpoint folder (TrainingJob volumes: {claim, mountPath})",
        ("*",),
        checkpoint_path,
        gpu_only=True,
    ),
)
