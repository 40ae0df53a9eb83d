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
