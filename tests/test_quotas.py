"""A queue or namespace quota that can never admit a job naming it is refused, with the job, queue and both
figures; one that can admit it (borrowing included) is not."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from components.config import parse_stack
from components.errors import ConfigError
from components.resolution import resolve
from tests.support.refusals import refusal
from tests.test_config import BASE, stack


def _kueue(*queues: dict[str, Any], **job: Any) -> dict[str, Any]:
    raw = stack(scheduler={"type": "kueue", "queues": list(queues)})
    raw["jobs"][0].update(job)  # 2 nodes x 8 GPUs: 16 at once
    return raw


def _admitted(raw: dict[str, Any]) -> bool:
    try:
        resolve(parse_stack(raw))
    except ConfigError:
        return False
    return True


def test_a_volcano_queue_below_the_jobs_gang_is_refused_at_the_jobs_queue(tmp_path: Path) -> None:
    raw = stack(scheduler={"type": "volcano", "queues": [{"name": "research", "gpus": 8}]})
    raw["jobs"][0]["scheduler"] = {"queue": "research"}
    issue, line = refusal(tmp_path, raw)
    assert issue.path == "jobs[0].scheduler.queue"
    assert "queue: research" in line
    assert "job 'llama-finetune' needs 16 GPUs at once (2 x 8)" in issue.message
    assert "queue 'research' is capped at 8" in issue.message


def test_a_job_on_the_default_queue_is_refused_at_its_nodes(tmp_path: Path) -> None:
    issue, line = refusal(tmp_path, stack(scheduler={"type": "volcano", "queues": [{"name": "research", "gpus": 8}]}))
    assert issue.path == "jobs[0].nodes"
    assert "nodes: 2" in line


@pytest.mark.parametrize(
    ("queues", "admitted"),
    [
        ([{"name": "a", "gpus": 16}], True),
        ([{"name": "a", "gpus": 8}], False),
        ([{"name": "a", "gpus": 8}, {"name": "b", "gpus": 8}], True),  # borrows b's 8 in the shared cohort
        ([{"name": "a", "gpus": 8}, {"name": "b", "gpus": 8, "cohort": "apart"}], False),
        ([{"name": "a", "gpus": 8}, {"name": "b", "gpus": 8, "lendingLimit": 4}], False),
        ([{"name": "a", "gpus": 8, "borrowingLimit": 4}, {"name": "b", "gpus": 32}], False),
        ([{"name": "a", "gpus": 8, "borrowingLimit": 8}, {"name": "b", "gpus": 32}], True),
        ([{"name": "a", "gpus": 0}, {"name": "b", "gpus": 32}], True),  # a borrowing-only queue
    ],
)
def test_a_kueue_queue_admits_what_its_quota_and_cohort_reach(queues: list[dict[str, Any]], admitted: bool) -> None:
    assert _admitted(_kueue(*queues, scheduler={"queue": "a"})) is admitted


def test_the_kueue_error_names_the_job_the_queue_and_both_figures(tmp_path: Path) -> None:
    raw = _kueue({"name": "a", "gpus": 8}, {"name": "b", "gpus": 8, "lendingLimit": 4}, scheduler={"queue": "a"})
    issue, _ = refusal(tmp_path, raw)
    assert issue.path == "jobs[0].scheduler.queue"
    assert "job 'llama-finetune' needs 16 GPUs at once (2 x 8)" in issue.message
    assert "queue 'a' can hold at most 12 on pool 'h100' (8 of its own quota, 4 borrowed from cohort" in issue.message


def test_a_kueue_queue_without_the_jobs_pool_or_namespace_is_refused() -> None:
    raw = _kueue({"name": "a", "gpus": 64, "pools": ["a100"]}, scheduler={"queue": "a"})
    other = copy.deepcopy(BASE["nodePools"][0])
    raw["nodePools"].append({**other, "name": "a100"})
    with pytest.raises(ConfigError, match="queue 'a' draws on a100 only: add h100 to the queue's pools"):
        resolve(parse_stack(raw))
    raw = _kueue({"name": "a", "gpus": 64, "namespaces": ["research"]}, scheduler={"queue": "a"})
    with pytest.raises(ConfigError, match="where queue 'a' has no LocalQueue"):
        resolve(parse_stack(raw))


def test_a_namespace_gpu_quota_below_the_job_is_refused(tmp_path: Path) -> None:
    issue, _ = refusal(tmp_path, stack(namespaces=[{"name": "training", "gpuQuota": 8}]))
    assert issue.path == "jobs[0].namespace"
    assert "requests 16 GPUs (2 x 8), but namespace 'training' allows 8 (its gpuQuota)" in issue.message
