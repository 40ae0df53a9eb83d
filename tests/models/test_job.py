"""TrainingJob specs: the checkpoint a job declares, where it is mounted, and one clear error naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from components.config import parse_job
from components.errors import ConfigError
from components.models import TrainingJobSpec

JOB = {"name": "llama", "image": "train:v1", "command": ["train.py"]}


def job(**fields: Any) -> TrainingJobSpec:
    return TrainingJobSpec.model_validate({**JOB, **fields})


def issues(**fields: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        parse_job({**JOB, **fields})
    return [(i.path, i.message) for i in caught.value.issues]


def test_a_checkpoint_claim_is_mounted_at_checkpoints_and_its_folder_is_the_jobs() -> None:
    spec = job(checkpoint={"claim": "ckpt", "size": "1.1T"})
    assert [(m.claim, m.mount_path, m.read_only) for m in spec.mounts] == [("ckpt", "/checkpoints", False)]
    assert spec.checkpoint_dir == "/checkpoints/llama"
    assert spec.checkpoint is not None and spec.checkpoint.max_seconds == 300
    assert job().checkpoint_dir is None and job().mounts == []


def test_a_checkpoint_claim_listed_in_volumes_is_mounted_once_where_volumes_says() -> None:
    spec = job(
        volumes=[{"claim": "data", "mountPath": "/data", "readOnly": True}, {"claim": "ckpt", "mountPath": "/ck"}],
        checkpoint={"claim": "ckpt", "folder": "runs/7"},
    )
    assert [m.mount_path for m in spec.mounts] == ["/data", "/ck"]
    assert spec.checkpoint_dir == "/ck/runs/7"
    assert job(checkpoint={"claim": "ckpt", "folder": "", "mountPath": "/out"}).checkpoint_dir == "/out"


def test_a_checkpoint_on_a_read_only_mount_or_at_two_paths_is_an_error() -> None:
    assert issues(volumes=[{"claim": "ckpt", "mountPath": "/ck", "readOnly": True}], checkpoint={"claim": "ckpt"}) == [
        (
            "checkpoint",
            "claim 'ckpt' is mounted readOnly in volumes[0]; checkpoints are written: mount it writable",
        )
    ]
    assert issues(volumes=[{"claim": "ckpt", "mountPath": "/ck"}], checkpoint={"claim": "ckpt", "mountPath": "/x"}) == [
        (
            "checkpoint",
            "claim 'ckpt' is mounted at /ck in volumes[0], not at checkpoint.mountPath /x: state one of them",
        )
    ]


def test_the_checkpoint_mount_may_not_shadow_another() -> None:
    assert issues(volumes=[{"claim": "data", "mountPath": "/checkpoints"}], checkpoint={"claim": "ckpt"}) == [
        ("volumes", "two volumes are mounted at /checkpoints")
    ]


@pytest.mark.parametrize("folder", ["/abs", "../up", "a/../b", "a b"])
def test_a_checkpoint_folder_is_relative_to_its_mount(folder: str) -> None:
    ((path, message),) = issues(checkpoint={"claim": "ckpt", "folder": folder})
    assert path == "checkpoint.folder"
    assert message.endswith(f"'{folder}' is not a folder inside the mount: write it relative, as runs/llama")


def test_a_checkpoint_budget_is_a_positive_number_of_seconds() -> None:
    ((path, _),) = issues(checkpoint={"claim": "ckpt", "maxSeconds": 0})
    assert path == "checkpoint.maxSeconds"
    ((path, _),) = issues(checkpoint={"claim": "ckpt", "size": "lots"})
    assert path == "checkpoint.size"


def test_max_restarts_is_torchruns_so_a_trainjob_takes_it_on_the_torch_runtime_only() -> None:
    assert job(launcher="trainjob", maxRestarts=5).in_place_restarts == 5
    assert job(launcher="trainjob", runtime="torch").in_place_restarts == 3
    for runtime in ("deepspeed", "mpi", "tensorflow"):
        [(path, message)] = issues(launcher="trainjob", runtime=runtime, maxRestarts=1)
        assert path == "maxRestarts"
        assert f"the {runtime} runtime runs no torchrun" in message and "runtime torch" in message
    [(path, message)] = issues(launcher="mpi", maxRestarts=1)
    assert path == "maxRestarts" and "trainjob with runtime torch, not 'mpi'" in message
