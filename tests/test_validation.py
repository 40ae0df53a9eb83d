"""components/validation.py: every pod a stack emits for a pool is held against what the pool's nodes advertise,
at render and at `pulumi preview`, with errors naming the config path and the pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pytest

import stacks
from components.errors import ConfigError
from components.kubernetes.objects import StackConfigError
from components.kubernetes.trainingjob import TrainingJob
from components.manifests import pod
from components.validation import resolve_file
from tests.support.factories import job, pool
from tests.support.pulumi_mocks import RecordingMonitor, run, use_stack
from tests.support.stacks import STACK_FILES

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def huge_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every GPU worker asks 5Gi of huge pages again, as EFA workers once did: through the pod builder, past the
    fabric profile that the job-level check reads."""
    built = pod.worker_resources

    def with_huge_pages(plan: Any) -> dict[str, str]:
        return {**built(plan), "hugepages-2Mi": "5120Mi"}

    monkeypatch.setattr(pod, "worker_resources", with_huge_pages)


def _issues(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    return [(i.path, i.message) for i in caught.value.issues]


def test_prods_karpenter_jobs_asking_huge_pages_are_refused_naming_job_and_pool(huge_pages: None) -> None:
    issues = _issues(REPO / "Pulumi.prod.yaml")
    assert {path for path, _ in issues} == {"jobs[0].nodePool", "jobs[1].nodePool"}
    assert (
        "jobs[0].nodePool",
        "PyTorchJob llama-pretrain (Worker pods) requests hugepages-2Mi: 5Gi, which no node of pool 'p5' advertises "
        "(karpenter nodes): never scheduled, and nothing would add a node for them",
    ) in issues


def test_the_minimal_aws_example_is_refused_the_same_way(huge_pages: None) -> None:
    assert {path for path, _ in _issues(REPO / "examples/minimal/Pulumi.aws.yaml")} == {"jobs[0].nodePool"}


def test_the_gate_the_runtimes_and_trainjobs_are_checked_too(huge_pages: None) -> None:
    issues = _issues(REPO / "Pulumi.dev.yaml")
    paths = {path for path, _ in issues}
    assert {"nodePools[0].fabricCheck", "nodePools[0]", "jobs[2].nodePool", "jobs[3].nodePool"} <= paths
    messages = " ".join(message for _, message in issues)
    assert "Job fabric-check-h100 (pod pods)" in messages
    assert "ClusterTrainingRuntime h100-torch (node pods)" in messages
    assert "TrainJob llama-pretrain (node pods)" in messages
    assert "(existing nodes): never scheduled" in messages, "no autoscaler on an existing cluster"


def test_every_stack_and_example_passes_as_it_is() -> None:
    for path in STACK_FILES:
        resolve_file(path)


def test_pulumi_preview_refuses_it_before_anything_is_created(
    huge_pages: None, pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.prod.yaml")
    with pytest.raises(StackConfigError) as caught:
        stacks.load()
    assert isinstance(caught.value, pulumi.RunError), "Pulumi prints a RunError without a traceback"
    assert "jobs[0].nodePool: PyTorchJob llama-pretrain (Worker pods) requests hugepages-2Mi" in str(caught.value)


def test_a_training_job_of_its_own_program_is_checked_against_the_pool_it_is_given(
    huge_pages: None, pulumi_mocks: RecordingMonitor
) -> None:
    with pytest.raises(StackConfigError) as caught:
        run(lambda: TrainingJob("train", job(), pool=pool("efa"), scheduler="volcano"))
    assert "pool: PyTorchJob train (Worker pods) requests hugepages-2Mi: 5Gi" in str(caught.value)
