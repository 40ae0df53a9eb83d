"""The CrossGuard pack on the real engine: a hand-written job with a privileged worker, no /dev/shm and no EFA
on an EFA pool fails `pulumi preview --policy-pack`, with each rule's message. (The dev stack passing it is
part of tests/engine/test_deploy.py, which has a cluster to preview against.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.engine.conftest import REPO, Project

pytestmark = pytest.mark.engine

WRONG_JOB = Path(__file__).with_name("programs") / "wrong-job"
CONFIG = REPO / "policy" / "config.json"


def test_a_hand_written_job_with_the_defects_fails_preview_with_each_rules_message(
    project_env: dict[str, str], policy_pack: Path, tmp_path: Path
) -> None:
    program = Project(Path(shutil.copytree(WRONG_JOB, tmp_path / "wrong-job")), project_env)
    program.cli("stack", "init", "review")
    preview = program.run("review", "preview", "--policy-pack", str(policy_pack), "--policy-pack-config", str(CONFIG))
    report = preview["error"] + preview["log"]
    assert not preview["ok"], f"the preview passed the policy pack:\n{report}"
    for rule, words in {
        "privileged-containers": "privileged",
        "shared-memory": "/dev/shm",
        "fabric-attached": "requests no vpc.amazonaws.com/efa",
    }.items():
        assert rule in report and words in report, f"{rule} did not report {words!r}:\n{report}"
    assert "[mandatory]" in report
    # What a mandatory rule finds that is advice, and the advisory rules, are shown without blocking.
    assert "[advisory]" in report and "job-robustness" in report, report
