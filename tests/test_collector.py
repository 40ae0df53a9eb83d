"""The collector's settings every process of ours starts with."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from components import collector

REPO = Path(__file__).resolve().parents[1]


def test_tune_sets_the_thresholds() -> None:
    before = gc.get_threshold()
    try:
        collector.tune()
        assert gc.get_threshold() == collector.THRESHOLDS
    finally:
        gc.set_threshold(*before)


def test_the_command_line_runs_with_them() -> None:
    # `python -m components` as a user runs it; what it prints is the thresholds its own process collects with.
    code = (
        "import gc, runpy, sys; sys.argv = ['components', '--help'];\n"
        "try:\n    runpy.run_module('components', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(gc.get_threshold())"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == str(collector.THRESHOLDS)
