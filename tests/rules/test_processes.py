"""Ranks per pod against its GPUs, and the nodes a launcher is told against the pods that run it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components import rules
from components.rules.rule import Settings
from components.rules.subjects import from_objects
from tests.rules.corpus import good


def pytorchjob() -> dict[str, Any]:
    """Our 2-node PyTorchJob (torchrun --nnodes=2 --nproc_per_node=8 on 8-GPU pods)."""
    return copy.deepcopy(good()[-1])


def container(job: dict[str, Any]) -> dict[str, Any]:
    return job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]


def found(objects: list[dict[str, Any]], rule: str) -> list[tuple[str, str]]:
    return [(f.enforcement, f.message) for f in rules.run(from_objects(objects), Settings()) if f.rule == rule]


def test_more_ranks_than_gpus_is_a_defect_and_fewer_is_advice() -> None:
    job = pytorchjob()
    job["spec"]["nprocPerNode"] = 16
    assert (
        "mandatory",
        "Worker pods start 16 ranks (nprocPerNode) on 8 GPUs; ranks past the last GPU fail with invalid device ordinal",
    ) in found([job], "processes-per-node")
    job["spec"]["nprocPerNode"] = "auto"
    container(job)["args"] = [a.replace("=8", "=4") if a.startswith("--nproc") else a for a in container(job)["args"]]
    assert found([job], "processes-per-node") == [
        ("advisory", "Worker pods start 4 ranks (torchrun --nproc_per_node 4) and leave 4 of 8 GPUs idle")
    ]


def test_only_torchruns_own_flags_count_not_the_scripts() -> None:
    job = pytorchjob()
    container(job)["args"] += ["--nproc_per_node=64", "--nnodes=9"]
    assert found([job], "processes-per-node") == [] and found([job], "node-count") == []


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--nnodes=3"], "torchrun --nnodes 3 tells torchrun of 3 nodes, but the job runs 2 GPU pods"),
        (["--nnodes=3:4"], "torchrun --nnodes 3:4 tells torchrun of 3 to 4 nodes, but the job runs 2 GPU pods"),
    ],
)
def test_torchrun_told_other_nodes_than_the_job_runs(words: list[str], message: str) -> None:
    job = pytorchjob()
    container(job)["args"] = words + [a for a in container(job)["args"] if not a.startswith("--nnodes")]
    assert found([job], "node-count") == [("mandatory", message)]
    container(job)["args"] = ["--nnodes=1:4", *container(job)["args"][1:]]
    assert found([job], "node-count") == [], "an elastic range holding the job's pods is fine"


def test_nemo_overrides_in_a_shell_script_are_read() -> None:
    job = pytorchjob()
    container(job)["command"] = ["/bin/bash", "-c"]
    container(job)["args"] = ["python train.py ++trainer.num_nodes=4 trainer.devices=16"]
    assert {m for _, m in found([job], "node-count")} == {
        "trainer.num_nodes=4 tells the trainer of 4 nodes, but the job runs 2 GPU pods"
    }
    assert (
        "mandatory",
        "Worker pods start 16 ranks (trainer.devices=16) on 8 GPUs; ranks past the last GPU fail "
        "with invalid device ordinal",
    ) in found([job], "processes-per-node")


def mpijob(np: int, slots: int = 8, workers: int = 2) -> dict[str, Any]:
    worker = {
        "spec": {"containers": [{"name": "w", "image": "nccl:1", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}
    }
    launcher = {
        "spec": {
            "containers": [
                {
                    "name": "l",
                    "image": "nccl:1",
                    "command": ["mpirun", "-np", str(np), "-x", "NCCL_DEBUG", "/opt/all_reduce_perf", "-n", "100"],
                }
            ]
        }
    }
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "nccl"},
        "spec": {
            "slotsPerWorker": slots,
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": launcher},
                "Worker": {"replicas": workers, "template": worker},
            },
        },
    }


def test_mpirun_ranks_fit_the_worker_slots_and_slots_fit_the_gpus() -> None:
    assert found([mpijob(16)], "node-count") == [], "the nccl-tests binary's own -n is not mpirun's"
    assert found([mpijob(32)], "node-count") == [
        ("mandatory", "mpirun -np 32 starts 32 ranks on 16 slots (2 workers x slotsPerWorker)")
    ]
    assert found([mpijob(16, slots=16, workers=1)], "processes-per-node")[0][0] == "mandatory"


def test_an_indexed_job_running_fewer_indexes_than_it_has_never_has_all_its_ranks() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 4,
            "parallelism": 2,
            "template": mpijob(1)["spec"]["mpiReplicaSpecs"]["Worker"]["template"],
        },
    }
    assert found([job], "node-count") == [
        (
            "mandatory",
            "parallelism 2 is below completions 4: the later indexes start only after the first ones "
            "finish, so a distributed job never has all its ranks",
        )
    ]
