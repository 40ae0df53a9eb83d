"""components/simulate/report.py: what simulate tells people and machines about each job (pure)."""

from __future__ import annotations

import json

from components.simulate.report import Report
from components.simulate.simulation import NOT_SIMULATED, Placement


def _report(*placements: Placement) -> Report:
    return Report(
        stack="dev",
        scheduler="volcano",
        kubeconfig="/tmp/run/kubeconfig",
        nodes={"h100": 4, "cpu": 2},
        controllers=["volcano", "training-operator"],
        makers={"h100": "simulate's stand-in"},
        notes=["volcano v1.15.1 is not buildable here; running v1.14.1"],
        placements=list(placements),
    )


WHOLE = Placement(
    job="training/llama", kind="PyTorchJob", pool="h100", gate=False, expected=4, created=4, bound=4,
    nodes=["h100-0", "h100-1", "h100-2", "h100-3"], gang="Running", seconds=2.5,
)  # fmt: skip
WAITING = Placement(
    job="training/big", kind="PyTorchJob", pool="h100", gate=False, expected=5, created=5, bound=0,
    gang="Inqueue", reason="Volcano: 5/5 tasks in gang unschedulable",
)  # fmt: skip
ASTRAY = Placement(
    job="training/astray", kind="Job", pool="h100", gate=True, expected=2, created=2, bound=2,
    nodes=["cpu-0", "h100-0"], off_pool=["cpu-0"], seconds=1.0,
)  # fmt: skip


def test_a_job_is_whole_only_when_every_pod_is_bound_on_its_pool() -> None:
    assert WHOLE.whole
    assert not WAITING.whole
    assert not ASTRAY.whole, "a GPU pod on another pool's node is not a placement on its pool"
    assert not Placement("a/b", "Job", "p", False, expected=2, created=1, bound=1).whole


def test_the_table_has_a_row_per_job_and_the_clusters_reason_for_each_that_waits() -> None:
    text = _report(WHOLE, WAITING, ASTRAY).table()
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("training/")}
    assert "whole" in rows["training/llama"] and "4/4" in rows["training/llama"]
    assert "NOT SCHEDULED" in rows["training/big"] and "0/5" in rows["training/big"]
    assert "off its pool" in rows["training/astray"] and "(fabric check)" in rows["training/astray"]
    assert "training/big: Volcano: 5/5 tasks in gang unschedulable" in text
    assert "1 of 3 jobs scheduled whole on their pools" in text
    assert "note: volcano v1.15.1 is not buildable here; running v1.14.1" in text
    assert "not simulated: " + "; ".join(NOT_SIMULATED) in text


def test_the_json_report_says_whether_all_is_well_and_carries_every_placement() -> None:
    doc = json.loads(_report(WHOLE, WAITING).as_json())
    assert doc["ok"] is False
    assert [j["job"] for j in doc["jobs"]] == ["training/llama", "training/big"]
    assert doc["jobs"][0] | {"whole": True, "podsBound": 4, "nodes": WHOLE.nodes} == doc["jobs"][0]
    assert doc["jobs"][1]["reason"].startswith("Volcano:")
    assert doc["notSimulated"] == list(NOT_SIMULATED)
    assert json.loads(_report(WHOLE).as_json())["ok"] is True


def test_a_job_held_by_simulates_assumption_is_said_so_and_not_a_plain_not_scheduled() -> None:
    assumed = Placement(
        job="training/wide", kind="TrainJob", pool="a3", gate=False, expected=8, created=8, bound=0, gang="pending",
        reason="the job needs 8 nodes in one subblock, and a subblock of pool a3 holds 4 (simulate's assumption: x)",
        assumed=True,
    )  # fmt: skip
    text = _report(WHOLE, assumed).table()
    row = next(line for line in text.splitlines() if line.startswith("training/wide"))
    assert row.endswith("NOT SCHEDULED (simulate's assumption)")
    assert "training/wide: simulate's assumption, not the stack: the job needs 8 nodes in one subblock" in text
    assert "1 held by simulate's assumptions, not by the stack" in text
    doc = json.loads(_report(assumed).as_json())
    assert doc["jobs"][0]["assumed"] is True and doc["ok"] is False


def test_the_json_report_says_what_made_each_pools_nodes() -> None:
    assert json.loads(_report(WHOLE).as_json())["makers"] == {"h100": "simulate's stand-in"}
