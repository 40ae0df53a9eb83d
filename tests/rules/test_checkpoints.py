"""Checkpoint paths a GPU job names lie on a mounted volume, not in the container."""

from __future__ import annotations

from typing import Any

from components import rules
from components.rules.rule import Settings
from components.rules.subjects import from_objects


def pod(args: list[str], env: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "train:v1",
                    "command": ["python", "train.py"],
                    "args": args,
                    "env": env or [],
                    "resources": {"limits": {"nvidia.com/gpu": 1}},
                    "volumeMounts": [
                        {"name": "ckpt", "mountPath": "/checkpoints"},
                        {"name": "tmp", "mountPath": "/scratch"},
                    ],
                }
            ],
            "volumes": [
                {"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}},
                {"name": "tmp", "emptyDir": {}},
            ],
        },
    }


def found(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (f.enforcement, f.message) for f in rules.run(from_objects([obj]), Settings()) if f.rule == "checkpoint-path"
    ]


def test_checkpoints_inside_the_container_are_a_defect() -> None:
    assert found(pod(["--save", "/workspace/ckpt"])) == [
        (
            "mandatory",
            "pod/main: writes checkpoints to /workspace/ckpt (--save), inside the container: they are lost "
            "when the pod restarts",
        )
    ]
    assert found(pod(["--output_dir=/checkpoints/run1"])) == []
    assert found(pod(["--save", "$CKPT"], [{"name": "CKPT", "value": "/checkpoints/a"}])) == []


def test_an_emptydir_is_advice_and_paths_to_load_from_are_not_checked() -> None:
    assert [level for level, _ in found(pod(["--checkpoint-dir", "/scratch/c"]))] == ["advisory"]
    assert found(pod(["--checkpoint", "/models/base.pt", "--ckpt_path", "/models/x"])) == []
    assert found(pod([], [{"name": "CHECKPOINT_DIR", "value": "/tmp/c"}]))[0][0] == "mandatory"
