"""gib-env.sh as the rdma gate runs it: the SETUP of an A4 pool's gate, eval'd under sh -u as fabric-check.sh
does, in that gate pod's own environment, with the node's gIB installer (/usr/local/gib) under tmp_path."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from components.fabric import GIB_MOUNT
from components.fabriccheck import SCRIPTS_DIR
from components.manifests import fabriccheck
from tests.support.factories import checked

pytestmark = pytest.mark.skipif(not (shutil.which("sh") and shutil.which("bash")), reason="needs sh and bash")

A4_TUNER = "tuner_config_a4.txtpb"


def gate_environment() -> dict[str, str]:
    """The container environment of the gate of an A4 pool, as its Job sets it."""
    job = fabriccheck.job(checked("rdma"))
    return {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"] if "value" in e}


def on_node(tmp_path: Path, value: str) -> str:
    """A path of the gate pod, as this test lays the node's installer and the gate's scripts out."""
    return value.replace(GIB_MOUNT, str(tmp_path / "gib")).replace(SCRIPTS_DIR, str(tmp_path / "scripts"))


def workers_script(tmp_path: Path) -> str:
    """A set_nccl_env.sh that exports exactly what the pool's workers run."""
    env = gate_environment()
    return "".join(f"export {k}={on_node(tmp_path, v)}\n" for k, v in env.items() if k.startswith("NCCL_"))


def run_setup(
    tmp_path: Path, script: str | None, tuner_files: tuple[str, ...] = (A4_TUNER,)
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The setup's outcome, and the NCCL environment the gate's mpirun is left with."""
    (tmp_path / "scripts").mkdir()
    for name in fabriccheck.SCRIPTS:
        (tmp_path / "scripts" / name).write_text(fabriccheck.script(name))
    gib = tmp_path / "gib"
    (gib / "scripts").mkdir(parents=True)
    (gib / "configs").mkdir()
    for name in tuner_files:
        (gib / "configs" / name).write_text("")
    if script is not None:
        (gib / "scripts" / "set_nccl_env.sh").write_text(script)
    env = {k: on_node(tmp_path, v) for k, v in gate_environment().items()}
    env["SETUP"] = env["SETUP"].replace("/sbin/ldconfig", "true")
    done = subprocess.run(
        ["sh", "-uc", 'eval "$SETUP"; env'],
        env={**env, "PATH": os.environ["PATH"], "TERMINATION_LOG": str(tmp_path / "termination-log")},
        capture_output=True,
        text=True,
        check=False,
    )
    after = dict(line.split("=", 1) for line in done.stdout.splitlines() if line.startswith("NCCL_"))
    return done, after


def warnings(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith("WARNING")]


def test_the_gate_runs_the_workers_environment_and_the_pools_tuner_profile(tmp_path: Path) -> None:
    done, after = run_setup(tmp_path, workers_script(tmp_path))
    assert done.returncode == 0, done.stderr
    assert not warnings(done), "nothing differs from the installer's script"
    assert after["NCCL_TUNER_CONFIG_PATH"] == str(tmp_path / "gib" / "configs" / A4_TUNER)
    assert after["NCCL_NET"] == "gIB"


def test_the_gate_names_what_the_installers_script_sets_otherwise_and_measures_the_workers_settings(
    tmp_path: Path,
) -> None:
    # Bash syntax, as upstream sources the script from bash; a variable read unset under the gate's sh -u.
    script = workers_script(tmp_path) + (
        'if [[ -n "${UNSET:-x}" ]]; then export NCCL_IB_QPS_PER_CONNECTION=2; fi\nexport NCCL_NEW_KNOB=1\n'
    )
    done, after = run_setup(tmp_path, script)
    assert done.returncode == 0, done.stderr
    found = warnings(done)
    assert len(found) == 2, done.stdout
    assert any("NCCL_IB_QPS_PER_CONNECTION=2; the pool's workers run NCCL_IB_QPS_PER_CONNECTION=4" in w for w in found)
    assert any("sets NCCL_NEW_KNOB=1; the pool's workers run without NCCL_NEW_KNOB" in w for w in found)
    assert after["NCCL_IB_QPS_PER_CONNECTION"] == "4" and "NCCL_NEW_KNOB" not in after, "what the workers run"


def test_a_node_without_the_pools_tuner_profile_fails_the_gate_and_lists_what_it_has(tmp_path: Path) -> None:
    done, _ = run_setup(tmp_path, workers_script(tmp_path), tuner_files=("tuner_config.txtpb",))
    assert done.returncode == 1
    verdict = (tmp_path / "termination-log").read_text()
    assert verdict.startswith("FAIL pool a3: ") and f"{A4_TUNER} is not in the node's gIB installer" in verdict
    assert "which has: tuner_config.txtpb" in verdict


def test_a_node_without_the_installers_script_fails_the_gate_and_says_why(tmp_path: Path) -> None:
    done, _ = run_setup(tmp_path, None)
    assert done.returncode == 1
    assert "is the gIB installer on the node?" in (tmp_path / "termination-log").read_text()
