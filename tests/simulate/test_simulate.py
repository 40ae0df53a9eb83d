"""`python -m components simulate`: each stack's jobs on the real control plane, gang schedulers and operators.

Every assertion reads the report, and the report reads the cluster: pods the operators made, the nodes the
schedulers bound them to, Volcano's PodGroups and Kueue's Workloads, and their reasons when they wait.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from components.cli import main
from components.render import render
from components.resolution import resolve_file
from components.simulate import engines

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
GANG = {"volcano": "Running", "kueue": "admitted", "none": "-"}


def _simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["simulate", "--format", "json", *args])
    printed = capsys.readouterr()
    assert code in (0, 1), f"simulate could not run ({code}):\n{printed.err[-3000:]}"
    return code, json.loads(printed.out)


@pytest.mark.parametrize("stack", ["dev", "prod", "gke"])
def test_every_job_of_the_stack_is_scheduled_whole_on_its_pool_by_its_own_scheduler(
    stack, binaries, kwok_binary, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    rendered = render(resolve_file(REPO / f"Pulumi.{stack}.yaml"))
    code, report = _simulate(capsys, "--stack", stack)
    assert code == 0, json.dumps(report, indent=2)
    assert report["ok"] and not report["kept"]
    jobs = {j["job"]: j for j in report["jobs"]}
    assert list(jobs) == [f"{w.plan.namespace}/{w.plan.name}" for w in rendered.workloads]
    for workload in rendered.workloads:
        job = jobs[f"{workload.plan.namespace}/{workload.plan.name}"]
        assert job["whole"] and job["podsBound"] == job["podsCreated"] == workload.pods
        assert job["gang"] == GANG[rendered.stack.scheduler], job
        gpu_nodes = [n for n in job["nodes"] if not n.startswith("cpu-")]
        # The stand-in names its nodes <pool>-<i>; Karpenter's KWOK provider kwok-<NodeClaim>-..., and a NodeClaim is
        # named after its NodePool, which is named after the pool.
        pool = workload.plan.pool.name
        assert all(n.startswith((f"{pool}-", f"kwok-{pool}-")) for n in gpu_nodes)
        assert len(gpu_nodes) == workload.plan.nodes, "one worker per node"


def test_a_job_bigger_than_its_pool_stays_pending_as_a_whole_and_simulate_exits_1(
    binaries, kwok_binary, capsys, monkeypatch
) -> None:
    """dev on 3 nodes: its 4-node jobs wait whole under Volcano, with Volcano's reason; the 2-node ones run."""
    monkeypatch.chdir(REPO)
    code, report = _simulate(capsys, "--stack", "dev", "--nodes", "3", "--timeout", "20")
    assert code == 1
    jobs = {j["job"]: j for j in report["jobs"]}
    for name in ("training/llama-finetune", "training/llama-pretrain"):
        assert not jobs[name]["whole"]
        assert jobs[name]["podsBound"] == 0, "never half-placed"
        assert jobs[name]["reason"], "the cluster's reason"
    for name in ("training/nccl-allreduce", "training/ds-finetune", "training/fabric-check-h100"):
        assert jobs[name]["whole"]


def test_a_terminated_run_stops_every_process_it_started(binaries, kwok_binary, tmp_path) -> None:
    # `kill <pid>` (or a CI timeout) must not leave a control plane, or an MPI Operator, behind.
    name = f"sigterm{os.getpid()}"
    stack = tmp_path / f"Pulumi.{name}.yaml"
    stack.write_text(SMALL_STACK)
    run = subprocess.Popen(
        [sys.executable, "-m", "components", "simulate", "--config", str(stack)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert run.stderr is not None
    for line in run.stderr:
        if "making nodes" in line:
            break
    else:
        pytest.fail(f"simulate ended before making nodes ({run.wait()})")
    (folder,) = (engines.cache_dir() / "runs").glob(f"{name}-*")
    assert _processes_of(folder), "the control plane runs"
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=60) == 128 + signal.SIGTERM
    assert not _processes_of(folder), "a process of the run outlived it"
    shutil.rmtree(folder)


SMALL_STACK = """\
config:
  gpu-training:cluster: {provider: existing, name: small}
  gpu-training:nodePools:
    - {name: h100, gpusPerNode: 8, nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  gpu-training:gpuOperator: {enabled: false}
  gpu-training:trainingOperator: {enabled: false, mpi: false}
  gpu-training:scheduler: {type: none}
  gpu-training:jobs:
    - {name: probe, image: registry.example.com/probe:v1, command: [probe.py], nodes: 2, launcher: indexed}
"""


def _processes_of(folder: Path) -> list[str]:
    """The command lines of running processes that name the run's folder."""
    found = subprocess.run(["pgrep", "-af", str(folder)], capture_output=True, text=True, check=False)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


def test_a_stack_without_the_mpi_operator_runs_its_pytorchjob_on_the_training_operator(
    binaries, kwok_binary, capsys, tmp_path
) -> None:
    # Without the MPI Operator the Training Operator runs every scheme, MPIJob v1 included, and needs their CRDs.
    stack = tmp_path / "Pulumi.nompi.yaml"
    stack.write_text(
        SMALL_STACK.replace(
            "gpu-training:trainingOperator: {enabled: false, mpi: false}", "gpu-training:trainingOperator: {mpi: false}"
        ).replace("launcher: indexed", "launcher: pytorch")
    )
    code, report = _simulate(capsys, "--config", str(stack))
    assert "training-operator" in report["controllers"] and "mpi-operator" not in report["controllers"]
    (job,) = [j for j in report["jobs"] if j["kind"] == "PyTorchJob"]
    assert code == 0 and job["whole"], job


FAMILIES_STACK = """\
config:
  gpu-training:cluster: {provider: existing, name: families}
  gpu-training:nodePools:
    - {name: h100, gpusPerNode: 8, maxNodes: 8, nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  gpu-training:gpuOperator: {enabled: false}
  gpu-training:scheduler: SCHEDULER
  gpu-training:jobs:
    - {name: torch, image: registry.example.com/train:v1, command: [train.py], nodes: 2}
    - {name: deepspeed, runtime: deepspeed, image: ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0,
       command: [train.py], nodes: 2}
    - {name: mpi, runtime: mpi, image: ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0, command: [bench], nodes: 2}
    - {name: tensorflow, runtime: tensorflow, image: registry.example.com/tf:v1, command: [python, train.py], nodes: 2}
"""
"""One job of each family, none naming a launcher: each is a TrainJob on its runtime (the v1 operators not even
installed)."""


@pytest.mark.parametrize(
    ("scheduler", "gang"),
    [
        ("{type: volcano}", "Running"),
        ("{type: kueue, queues: [{name: research, gpus: 64}]}", "admitted"),
    ],
)
def test_every_family_that_names_no_launcher_runs_whole_as_a_trainjob(
    scheduler: str, gang: str, binaries, kwok_binary, capsys, tmp_path
) -> None:
    stack = tmp_path / "Pulumi.families.yaml"
    stack.write_text(FAMILIES_STACK.replace("SCHEDULER", scheduler))
    code, report = _simulate(capsys, "--config", str(stack))
    assert "training-operator" not in report["controllers"] and "mpi-operator" not in report["controllers"]
    assert {"trainer", "jobset"} <= set(report["controllers"]), report["controllers"]
    jobs = {j["job"]: j for j in report["jobs"] if j["kind"] == "TrainJob"}
    assert sorted(jobs) == [f"training/{n}" for n in ("deepspeed", "mpi", "tensorflow", "torch")]
    for job in jobs.values():
        assert job["whole"] and job["gang"] == gang, job
    assert code == 0, json.dumps(report, indent=2)


LEGACY_STACK = """\
config:
  gpu-training:cluster: {provider: existing, name: legacy}
  gpu-training:nodePools:
    - {name: h100, gpusPerNode: 8, maxNodes: 6, nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  gpu-training:gpuOperator: {enabled: false}
  gpu-training:scheduler: {type: volcano}
  gpu-training:jobs:
    - {name: pytorch, launcher: pytorch, image: registry.example.com/train:v1, command: [train.py], nodes: 2}
    - {name: mpi, launcher: mpi, image: registry.example.com/bench:v1, command: [bench], nodes: 2}
    - {name: tensorflow, launcher: tensorflow, image: registry.example.com/tf:v1, command: [python, train.py],
       nodes: 2}
"""
"""A job on each v1 launcher, named: the legacy path still runs, its operators installed because the jobs name
them."""


def test_every_named_v1_launcher_still_runs_whole_on_its_operator(binaries, kwok_binary, capsys, tmp_path) -> None:
    stack = tmp_path / "Pulumi.legacy.yaml"
    stack.write_text(LEGACY_STACK)
    code, report = _simulate(capsys, "--config", str(stack))
    assert {"training-operator", "mpi-operator"} <= set(report["controllers"]), report["controllers"]
    jobs = {j["kind"]: j for j in report["jobs"] if j["job"] != "training/fabric-check-h100"}
    assert sorted(jobs) == ["MPIJob", "PyTorchJob", "TFJob"], jobs
    for job in jobs.values():
        assert job["whole"] and job["gang"] == "Running", job
    assert code == 0, json.dumps(report, indent=2)
