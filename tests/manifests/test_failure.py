"""Tests for what a fault does to a job: the TrainJob's JobSet failure policy and what one node fault costs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.manifests.failure import (
    NODE_FAULT_RULE,
    RESTART_STRATEGY,
    jobset_failure_policy,
    node_fault,
)
from components.manifests.plan import JobPlan, plan
from tests.support.factories import job, planned, pool, with_topology, with_trainer

JOBSET_CRD = Path("/work/shared/schemas/crds/jobset.x-k8s.io/jobset_v1alpha2.json")
# JobSet v0.12.0 pkg/features: alpha, off by default, and the installed chart writes no featureGates.
GATED_ACTIONS = {"RestartJob", "RestartJobAndIgnoreMaxRestarts"}
GATED_STRATEGIES = {"InPlaceRestart"}


def _sized(**fields: Any) -> JobPlan:
    """A job on a pool of 64 nodes, with Trainer's runtimes."""
    return plan(job(**fields), with_trainer(pool("tcp", maxNodes=64)), "none")


def _failure_schema() -> dict[str, Any]:
    schema = json.loads(JOBSET_CRD.read_text())
    return schema["properties"]["spec"]["properties"]["failurePolicy"]["properties"]


def test_the_policy_uses_only_what_jobset_v0_12_runs_without_a_feature_gate() -> None:
    if not JOBSET_CRD.exists():
        pytest.skip("the JobSet CRD schema is not on this machine")
    schema = _failure_schema()
    policy = jobset_failure_policy(planned(launcher="trainjob"))
    assert policy["restartStrategy"] in schema["restartStrategy"]["enum"]
    assert policy["restartStrategy"] == RESTART_STRATEGY not in GATED_STRATEGIES
    actions = schema["rules"]["items"]["properties"]["action"]["enum"]
    for rule in policy["rules"]:
        assert rule["action"] in actions and rule["action"] not in GATED_ACTIONS


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(1, 64),
    retries=st.integers(0, 20),
    runtime=st.sampled_from(["torch", "deepspeed", "mpi"]),
)
def test_a_trainjob_retries_its_program_faults_and_never_counts_a_node_fault(
    nodes: int, retries: int, runtime: str
) -> None:
    job_plan = _sized(launcher="trainjob", runtime=runtime, nodes=max(nodes, 2), backoffLimit=retries)
    policy = jobset_failure_policy(job_plan)
    assert policy["maxRestarts"] == retries
    assert [r["name"] for r in policy["rules"]] == [NODE_FAULT_RULE]
    cost = node_fault(job_plan)
    assert cost.counts is None and not cost.fails
    assert cost.recreated == cost.pods == job_plan.nodes, "Trainer v2.3 runs the nodes as one child Job"


@settings(max_examples=60, deadline=None)
@given(
    launcher=st.sampled_from(["pytorch", "tensorflow", "mpi", "indexed", "trainjob"]),
    nodes=st.integers(1, 32),
    retries=st.integers(0, 10),
    never=st.booleans(),
)
def test_one_node_fault_never_touches_more_pods_than_the_job_has(
    launcher: str, nodes: int, retries: int, never: bool
) -> None:
    fields: dict[str, Any] = {"launcher": launcher, "nodes": nodes, "backoffLimit": retries}
    if never and launcher in ("pytorch", "tensorflow"):
        fields["restartPolicy"] = "Never"
    cost = node_fault(_sized(**fields))
    assert cost.recreated + cost.in_place <= cost.pods
    assert cost.pods == nodes + (1 if launcher == "mpi" else 0)
    assert cost.describe()


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        (
            {"launcher": "trainjob", "nodes": 4},
            "recreates 4 of 4 pods (JobSet's NodeFault rule recreates every child Job; maxRestarts counts only "
            "program faults); counted against no retry limit",
        ),
        (
            {"launcher": "pytorch", "nodes": 4},
            "recreates 1 of 4 pods, restarts 3 in place (the Training Operator makes the lost pod again; torchrun "
            "restarts the other ranks); uses up 1 of torchrun's --max_restarts 3",
        ),
        (
            {"launcher": "indexed", "nodes": 4},
            "recreates 1 of 4 pods, restarts 3 in place (the Job replaces the disrupted index uncounted; torchrun "
            "restarts the other ranks); uses up 1 of torchrun's --max_restarts 3",
        ),
        (
            {"launcher": "mpi", "nodes": 2},
            "recreates 1 of 3 pods, restarts 2 in place (the MPI Operator makes the lost pod again; mpirun exits and "
            "the launcher's Job reruns it over every worker; a kubelet eviction (node pressure) fails the MPIJob "
            "instead); uses up 1 of backoffLimit 3",
        ),
        (
            {"launcher": "tensorflow", "nodes": 2},
            "recreates 1 of 2 pods, restarts 1 in place (the Training Operator makes the lost pod again; the other "
            "workers' containers restart as they fail); uses up 1 of backoffLimit 6",
        ),
        (
            {"launcher": "pytorch", "nodes": 2, "restartPolicy": "Never"},
            "fails the job (restartPolicy Never: the Training Operator fails the job)",
        ),
    ],
)
def test_what_one_node_fault_costs_each_launcher(fields: dict[str, Any], line: str) -> None:
    assert node_fault(planned(**fields)).describe() == line


def test_a_kueue_topology_job_also_gets_its_node_swapped_or_the_whole_job_readmitted() -> None:
    gpu_pool = with_topology(pool("efa"))
    job_plan = plan(job(launcher="trainjob", nodes=4, resources={"memory": "1800Gi"}), gpu_pool, "kueue", "research")
    assert job_plan.placement is not None
    assert (
        node_fault(job_plan)
        .describe()
        .endswith("Kueue swaps the node in its topology assignment, or evicts and re-admits all 4 pods if none fits")
    )
    unplaced = plan(job(launcher="trainjob", nodes=4, resources={"memory": "1800Gi"}), gpu_pool, "volcano")
    assert "Kueue" not in node_fault(unplaced).describe()
