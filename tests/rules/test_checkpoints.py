"""Checkpoint paths a GPU job names lie on a mounted volume, not in the container."""

from __future__ import annotations

from typing import Any

import pytest

from components import rules
from components.config import parse_stack
from components.errors import ConfigError
from components.render import render
from components.resolution import resolve, resolve_raw
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


# The volume under the checkpoint folder: writable, and a bucket's with the write path checkpoints need.


def claim(access: str = "ReadWriteMany", volume_name: str = "ckpt-pv") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "ckpt", "namespace": "default"},
        "spec": {"accessModes": [access], "storageClassName": "", "volumeName": volume_name},
    }


def bucket(driver: str, options: list[str], access: str = "ReadWriteMany") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "ckpt-pv"},
        "spec": {
            "accessModes": [access],
            "capacity": {"storage": "1Pi"},
            "mountOptions": options,
            "csi": {"driver": driver, "volumeHandle": "ckpt"},
        },
    }


def found_with(*objects: dict[str, Any], args: list[str] | None = None) -> list[tuple[str, str]]:
    subjects = from_objects([pod(args or ["--save", "/checkpoints/run"]), *objects])
    return [(f.enforcement, f.message) for f in rules.run(subjects, Settings()) if f.rule == "checkpoint-path"]


def test_a_checkpoint_folder_on_a_read_only_mount_is_a_defect() -> None:
    read_only = pod(["--save", "/checkpoints/run"])
    read_only["spec"]["containers"][0]["volumeMounts"][0]["readOnly"] = True
    assert found(read_only) == [
        (
            "mandatory",
            "pod/main: writes checkpoints to /checkpoints/run (--save) on a mount it cannot write: mounted readOnly",
        )
    ]
    assert found_with(claim("ReadOnlyMany")) == [
        (
            "mandatory",
            "pod/main: writes checkpoints to /checkpoints/run (--save) on a mount it cannot write: its claim is "
            "ReadOnlyMany",
        )
    ]


def test_a_mountpoint_volume_without_delete_and_overwrite_cannot_rotate_checkpoints() -> None:
    assert found_with(claim(), bucket("s3.csi.aws.com", ["allow-delete", "allow-overwrite"])) == []
    assert found_with(claim(), bucket("s3.csi.aws.com", ["allow-delete"])) == [
        (
            "mandatory",
            "pod/main: writes checkpoints to /checkpoints/run (--save): its Mountpoint volume lacks allow-overwrite: "
            "Mountpoint refuses to delete or overwrite a file without them, so rotating old checkpoints and "
            "rewriting a `latest` file fail",
        )
    ]
    (read_only,) = found_with(claim(), bucket("s3.csi.aws.com", ["read-only", "allow-delete"]))
    assert read_only[1].endswith("its Mountpoint volume is mounted read-only (mount option read-only)")
    (rox,) = found_with(claim(), bucket("s3.csi.aws.com", [], access="ReadOnlyMany"))
    assert rox[1].endswith("on a mount it cannot write: its volume is ReadOnlyMany")


def test_a_gcsfuse_volume_without_streaming_writes_is_advice() -> None:
    streaming = ["implicit-dirs", "write:enable-streaming-writes:true"]
    assert found_with(claim(), bucket("gcsfuse.csi.storage.gke.io", streaming)) == []
    ((level, message),) = found_with(claim(), bucket("gcsfuse.csi.storage.gke.io", ["implicit-dirs"]))
    assert level == "advisory"
    assert "does not set write:enable-streaming-writes:true" in message


def test_a_volume_the_rule_cannot_see_is_not_judged() -> None:
    assert found_with(claim()) == [], "the claim's volume is made at deploy time"
    assert found_with(claim(volume_name=""), bucket("s3.csi.aws.com", [])) == [], "an unbound claim"
    assert found_with(bucket("s3.csi.aws.com", [])) == [], "no claim among the objects"
    assert found_with(claim(), bucket("nfs.csi.k8s.io", [])) == [], "a file system writes as it is"


def test_a_lustre_volume_is_durable_and_writable() -> None:
    for driver in ("lustre.csi.storage.gke.io", "fsx.csi.aws.com"):
        assert found_with(claim(), bucket(driver, ["flock"])) == [], driver
    (rox,) = found_with(claim(), bucket("lustre.csi.storage.gke.io", ["flock"], access="ReadOnlyMany"))
    assert rox[1].endswith("on a mount it cannot write: its volume is ReadOnlyMany")


def test_check_of_a_stack_finds_a_bucket_volume_with_its_checkpoint_options_replaced() -> None:
    config = {
        "cluster": {"provider": "aws", "name": "train", "region": "us-east-1"},
        "nodePools": [{"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a"}],
        "storage": {"volumes": [{"name": "ckpt", "backend": "s3", "bucket": "example-checkpoints"}]},
        "jobs": [
            {
                "name": "llama",
                "launcher": "pytorch",
                "image": "train:v1",
                "command": ["train.py"],
                "nodes": 2,
                "checkpoint": {"claim": "ckpt"},
            }
        ],
    }

    def findings(volume: dict[str, Any]) -> list[tuple[str, str]]:
        # A stack made in code: a stack file's (resolve_raw) is refused at render, below.
        stack = resolve(parse_stack({**config, "storage": {"volumes": [volume]}}))
        subjects = from_objects(render(stack).objects)
        return [(f.subject, f.message) for f in rules.run(subjects, Settings()) if f.rule == "checkpoint-path"]

    default = config["storage"]["volumes"][0]
    assert findings(default) == [], "use: checkpoints mounts with allow-delete and allow-overwrite"
    found = findings({**default, "mountOptions": ["allow-delete"]})
    assert [(subject, message.split(":")[0]) for subject, message in found] == [
        ("PyTorchJob/training/llama", "Master/pytorch"),
        ("PyTorchJob/training/llama", "Worker/pytorch"),
    ]
    assert all("writes checkpoints to /checkpoints/llama (env CHECKPOINT_DIR)" in m for _, m in found)
    assert all("lacks allow-overwrite" in m for _, m in found)
    with pytest.raises(ConfigError, match="check's mandatory rule checkpoint-path"):
        resolve_raw({**config, "storage": {"volumes": [{**default, "mountOptions": ["allow-delete"]}]}})
