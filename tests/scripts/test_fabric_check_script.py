"""fabric-check.sh as each pod of the gate runs it, with ssh, sshd and mpirun stood in by recorders.

The Job's own environment (from the manifest builder) drives it, so what is checked here is what the
pods get: pod 0 waits for every pod's sshd, runs mpirun across all GPUs with the fabric's environment,
stops the other pods and judges the output; the other pods serve sshd until pod 0 is done.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from components.manifests import fabriccheck
from tests.support.factories import checked

LOGS = Path(__file__).resolve().parents[1] / "data" / "nccl-tests"

pytestmark = pytest.mark.skipif(not (shutil.which("sh") and shutil.which("awk")), reason="needs sh and awk")

RECORDER = """#!/bin/sh
echo "$(basename "$0") $*" >> "$RECORD"
"""
FAKES = {
    "ssh-keygen": RECORDER,
    "sshd": RECORDER,
    # ssh runs the remote command here: every fake pod shares this machine's work directory.
    "ssh": RECORDER + 'shift; [ "$#" -gt 0 ] && [ "$1" != true ] && "$@"\nexit 0\n',
    "mpirun": RECORDER + 'cat "$FAKE_LOG"\nexit "${FAKE_STATUS:-0}"\n',
}


def run_pod(tmp_path: Path, index: int, log: Path, *, floor: int | None = None, status: int = 0) -> tuple[int, str]:
    """Run one pod's part of the p5 gate; its exit status and what the recorders saw."""
    check = checked("efa", minBusBandwidth=floor) if floor else checked("efa")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in FAKES.items():
        fake = bin_dir / name
        fake.write_text(body)
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    scripts = tmp_path / "scripts"
    scripts.mkdir(exist_ok=True)
    for name in fabriccheck.SCRIPTS:
        (scripts / name).write_text(fabriccheck.script(name))
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    (keys / "id_ed25519").write_text("PRIVATE\n")
    (keys / "id_ed25519.pub").write_text("ssh-ed25519 AAAA gate\n")
    record = tmp_path / "record"
    environment = {
        **fabriccheck.environment(check),
        "MPIRUN": "mpirun",
        "JOB_COMPLETION_INDEX": str(index),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SSH_HOME": str(tmp_path / "ssh"),
        "KEYS_DIR": str(keys),
        "SSHD_RUN_DIR": str(tmp_path / "run-sshd"),
        "WORK_DIR": str(tmp_path),
        "TERMINATION_LOG": str(tmp_path / "termination-log"),
        "RECORD": str(record),
        "FAKE_LOG": str(log),
        "FAKE_STATUS": str(status),
        "NCCL_DEBUG": "INFO",
        "FI_PROVIDER": "efa",
    }
    done = subprocess.run(
        ["sh", str(scripts / "fabric-check.sh")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, record.read_text() if record.exists() else ""


def test_pod_zero_runs_the_test_across_every_gpu_and_passes_a_healthy_fabric(tmp_path: Path) -> None:
    status, record = run_pod(tmp_path, 0, LOGS / "efa-p5-all-reduce.log")
    assert status == 0
    calls = record.splitlines()
    assert calls[0] == "ssh-keygen -A"
    assert calls[1].startswith("sshd -p 2222 -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no")
    hosts = ["fabric-check-p5-0.fabric-check-p5", "fabric-check-p5-1.fabric-check-p5"]
    assert [c for c in calls if c.endswith(" true")] == [f"ssh {h} true" for h in hosts], "waits for every pod"
    (mpirun,) = [c for c in calls if c.startswith("mpirun ")]
    assert "--allow-run-as-root -np 16 -N 8 --hostfile" in mpirun
    assert "--mca pml ^ucx --mca btl tcp,self" in mpirun
    for name in ("NCCL_DEBUG", "FI_PROVIDER", "FI_EFA_USE_DEVICE_RDMA", "LD_LIBRARY_PATH"):
        assert f" -x {name} " in mpirun, name
    assert mpirun.count(" -x NCCL_DEBUG ") == 1, "each variable is forwarded once"
    assert mpirun.endswith("/opt/nccl-tests/build/all_reduce_perf -b 1M -e 8G -f 2 -g 1 -c 1 -w 5 -n 20")
    assert (tmp_path / "hostfile").read_text().splitlines() == [f"{h} slots=8" for h in hosts]
    assert [c for c in calls if "touch" in c] == [f"ssh {h} touch {tmp_path}/fabric-check-done" for h in hosts]
    verdict = (tmp_path / "termination-log").read_text()
    assert verdict.startswith("PASS pool p5: 479.30 GB/s bus bandwidth at 8G (floor 270.00 GB/s)")
    assert (tmp_path / "ssh" / "authorized_keys").read_text() == "ssh-ed25519 AAAA gate\n"
    assert "Port 2222" in (tmp_path / "ssh" / "config").read_text()


def test_pod_zero_fails_the_gate_below_the_floor_and_still_stops_the_other_pods(tmp_path: Path) -> None:
    status, record = run_pod(tmp_path, 0, LOGS / "efa-p5-all-reduce.log", floor=500)
    assert status == 1
    assert "touch" in record, "the other pods are released even when the gate fails"
    assert (
        (tmp_path / "termination-log")
        .read_text()
        .startswith(
            "FAIL pool p5: 479.30 GB/s bus bandwidth at 8G is under the floor of 500.00 GB/s; logs: kubectl logs"
        )
    )


def test_a_failed_mpirun_fails_the_gate(tmp_path: Path) -> None:
    status, _ = run_pod(tmp_path, 0, LOGS / "roce-nccl-failure.log", status=1)
    assert status == 1
    assert "the test failed" in (tmp_path / "termination-log").read_text()


def test_another_pod_serves_sshd_until_pod_zero_is_done(tmp_path: Path) -> None:
    (tmp_path / "fabric-check-done").touch()
    status, record = run_pod(tmp_path, 1, LOGS / "efa-p5-all-reduce.log")
    assert status == 0
    assert "mpirun" not in record
    assert any(c.startswith("sshd -p 2222") for c in record.splitlines())
