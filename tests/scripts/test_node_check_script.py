"""node-check.sh's gathering steps share one time budget: a node's check takes at most `timeoutMinutes` in all,
not that much per step."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from components.manifests.fabriccheck import script

pytestmark = pytest.mark.skipif(not (shutil.which("sh") and shutil.which("timeout")), reason="needs sh and timeout(1)")


def _nvlink(tmp_path: Path, results: Path, budget: int) -> float:
    """The nvlink step against an all_reduce_perf that never ends; how long the step took."""
    tests = tmp_path / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "all_reduce_perf").write_text("#!/bin/sh\nsleep 30\n")
    (tests / "all_reduce_perf").chmod(0o755)
    (tmp_path / "node-check.sh").write_text(script("node-check.sh"))
    env = {
        "PATH": os.environ["PATH"],
        "RESULTS": str(results),
        "CHECK_TIMEOUT": str(budget),
        "EXPECT_GPUS": "8",
        "NCCL_TESTS": str(tests),
        "MAX_BYTES": "8589934592",
    }
    started = time.monotonic()
    subprocess.run(["sh", str(tmp_path / "node-check.sh"), "nvlink"], env=env, check=True, timeout=60)
    return time.monotonic() - started


def test_a_step_gets_only_what_is_left_of_the_checks_budget(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    # An earlier step started the clock 2 s into a 4 s budget: this one gets about 2 s, not 4.
    (results / "deadline").write_text(f"{int(time.time()) + 2}\n")
    took = _nvlink(tmp_path, results, budget=4)
    assert took < 3.5, f"the step ran {took:.1f} s of a budget with 2 s left"
    assert (results / "nvlink.rc").read_text().strip() == "124", "timeout(1)'s status: the verdict sees it"


def test_the_first_step_starts_the_clock(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    took = _nvlink(tmp_path, results, budget=2)
    assert took < 3.5
    assert abs(int((results / "deadline").read_text()) - (time.time() - took + 2)) <= 2


def _gpu(
    tmp_path: Path,
    engine: str,
    *,
    answers: bool,
    wait: int = 600,
    extra: dict[str, str] | None = None,
    smi: str | None = None,
) -> Path:
    """The gpu step with a stand-in dcgmi (whose engine answers or not) and nv-hostengine, and with `smi`, a stand-in
    nvidia-smi that prints it for -q; its results folder."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    calls = tmp_path / "calls"
    (bin_ / "dcgmi").write_text(
        "#!/bin/sh\n"
        f'echo "dcgmi $*" >>{calls}\n'
        f'if [ "$1" = discovery ]; then [ -e {tmp_path}/up ] || exit 1; exit 0; fi\n'
        'echo "| Memory | Pass |"\n'
    )
    (bin_ / "nv-hostengine").write_text(f'#!/bin/sh\necho "nv-hostengine $*" >>{calls}\ntouch {tmp_path}/up\n')
    tools = ["dcgmi", "nv-hostengine"]
    if smi is not None:
        (tmp_path / "smi.txt").write_text(smi)
        (bin_ / "nvidia-smi").write_text(f'#!/bin/sh\n[ "$1" = -q ] && cat {tmp_path}/smi.txt\nexit 0\n')
        tools.append("nvidia-smi")
    for tool in tools:
        (bin_ / tool).chmod(0o755)
    if answers:
        (tmp_path / "up").touch()
    (tmp_path / "node-check.sh").write_text(script("node-check.sh"))
    results = tmp_path / "results"
    env = {
        "PATH": f"{bin_}:{os.environ['PATH']}",
        "RESULTS": str(results),
        "CHECK_TIMEOUT": "60",
        "DCGM_ENGINE": engine,
        "DCGM_WAIT": str(wait),
        **(extra or {}),
    }
    subprocess.run(["sh", str(tmp_path / "node-check.sh"), "gpu"], env=env, check=True, timeout=60)
    return results


def _calls(tmp_path: Path) -> str:
    return (tmp_path / "calls").read_text()


@pytest.mark.parametrize("engine", ["gpu-operator", "gke"])
def test_where_the_node_runs_a_dcgm_engine_the_check_never_starts_another(tmp_path: Path, engine: str) -> None:
    results = _gpu(tmp_path, engine, answers=False, wait=0)
    assert "nv-hostengine" not in _calls(tmp_path), "a second engine beside the node's"
    assert "dcgmi diag" not in _calls(tmp_path)
    assert (results / "diag.rc").read_text().strip() == "125"
    assert f"the node's DCGM host engine ({engine}) did not answer" in (results / "diag.txt").read_text()


def test_the_check_runs_its_diagnostics_on_the_nodes_engine_when_it_answers(tmp_path: Path) -> None:
    results = _gpu(tmp_path, "gpu-operator", answers=True)
    assert "nv-hostengine" not in _calls(tmp_path) and "dcgmi diag -r 2" in _calls(tmp_path)
    assert (results / "diag.rc").read_text().strip() == "0"


def test_where_nothing_runs_an_engine_the_check_starts_its_own_and_stops_it(tmp_path: Path) -> None:
    results = _gpu(tmp_path, "private", answers=False)
    calls = _calls(tmp_path).splitlines()
    started, diag, stopped = (calls.index(c) for c in ("nv-hostengine ", "dcgmi diag -r 2", "nv-hostengine --term"))
    assert started < diag < stopped
    assert (results / "diag.rc").read_text().strip() == "0"


# Our own reduction of `nvidia-smi -q` on a GB200 tray: two GPUs, one registered, one not, each with the Fabric
# section's Health subsection (whose lines must not be read as the section's own).
NVIDIA_SMI_Q = """
==============NVSMI LOG==============

Attached GPUs                             : 2
GPU 00000008:01:00.0
    Product Name                          : NVIDIA GB200
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 32766
        ClusterUUID                       : 3f0c2a6e-0000-4000-8000-000000000001
        Health
            Bandwidth                     : Full
            Status                        : Healthy
    Temperature
        GPU Current Temp                  : 31 C
GPU 00000009:01:00.0
    Product Name                          : NVIDIA GB200
    Fabric
        State                             : In Progress
        Status                            : N/A
        CliqueId                          : N/A
        ClusterUUID                       : N/A
"""


def test_the_gpu_step_records_each_gpus_nvlink_fabric_registration_on_rack_scale_pools(tmp_path: Path) -> None:
    results = _gpu(tmp_path, "private", answers=True, extra={"NVLINK_FABRIC": "1"}, smi=NVIDIA_SMI_Q)
    assert (results / "fabric.txt").read_text().splitlines() == [
        "00000008:01:00.0|Completed|Success|32766",
        "00000009:01:00.0|In Progress|N/A|N/A",
    ]
    other = tmp_path / "off"
    other.mkdir()
    assert not (_gpu(other, "private", answers=True, smi=NVIDIA_SMI_Q) / "fabric.txt").exists()
