"""Errors that lead with the real mistake: an issue that only echoes another (a value derived from an input that is
itself wrong) is dropped, and the rest keep their order."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.errors import ConfigError, Issue, without_echoes
from components.resolution import resolve_file

HEAD = """config:
  gpu-training:cluster: {provider: aws, name: train, region: us-east-1}
  gpu-training:nodePools:
    - {name: p5, instanceType: p5.48xlarge, zone: us-east-1a}
"""
JOB = "    - {name: a, image: registry.example.com/training:v2.0, command: [train.py], nodes: 2%s}\n"


def issues_of(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    return [f"{i.path}: {i.message}" for i in caught.value.issues]


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (HEAD + "  gpu-training:jobs:\n" + JOB % ", nodePool: p55", "jobs[0].nodePool: pool 'p55' is not declared"),
        (
            HEAD + "    - {name: p4, instanceType: p4d.24xlarge, zone: us-east-1a}\n  gpu-training:jobs:\n" + JOB % "",
            "jobs[0].nodePool: is required when the stack has 2 pools; choose one of: p5, p4",
        ),
        (
            HEAD + "    - {name: p5, instanceType: p5.48xlarge, zone: us-east-1a}\n  gpu-training:jobs:\n" + JOB % "",
            "nodePools[1].name: pool 'p5' is declared twice",
        ),
    ],
    ids=["pool-typo", "two-pools-no-choice", "pool-twice"],
)
def test_the_only_error_is_the_real_mistake(tmp_path: Path, text: str, first: str) -> None:
    """From the newcomer's trial: each led with the fabric check's node count on a pool sized from jobs that had
    no pool, and the duplicate pool offered "choose one of: p5, p5"."""
    (only,) = issues_of(tmp_path, text)
    assert only.startswith(first), only
    assert "fabricCheck" not in only and "p5, p5" not in only


def test_a_derived_issue_stands_when_its_inputs_are_right(tmp_path: Path) -> None:
    """The fabric check's node count still reaches the user when the jobs are fine and the pool is too small."""
    text = HEAD.replace("zone: us-east-1a}", "zone: us-east-1a, fabricCheck: {nodes: 4}}") + "  gpu-training:jobs:\n"
    (only,) = issues_of(tmp_path, text + JOB % "")
    assert only.startswith("nodePools[0].fabricCheck.nodes: the check runs on 4 nodes, and the pool has at most 2")


_paths = st.sampled_from(["jobs[0].nodePool", "jobs[1].nodes", "nodePools[0].name", "cluster.region", "jobs[0]"])


@given(st.lists(st.tuples(_paths, st.lists(st.sampled_from(["jobs[*].nodePool", "nodePools[*].name"])))))
def test_only_issues_whose_inputs_have_an_issue_are_dropped(specs: list[tuple[str, list[str]]]) -> None:
    issues = [Issue(path, f"m{n}", after=tuple(after)) for n, (path, after) in enumerate(specs)]
    kept = without_echoes(issues)
    assert list(kept) == [i for i in issues if i in kept], "order is kept"
    for issue in issues:
        echoed = any(
            other.path != issue.path
            and any(
                other.path.startswith(a.split("[*]")[0] + "[") and other.path.endswith(a.split("]")[-1])
                for a in issue.after
            )
            for other in issues
        )
        assert (issue not in kept) == echoed
    assert all(not i.after for i in issues) <= (kept == tuple(issues))


@pytest.mark.parametrize(
    ("old", "new", "path", "meant"),
    [
        ("region: us-east-1}", "regin: us-east-1}", "cluster.regin", "region"),
        ("gpu-training:cluster", "gpu-training:clustr", "clustr", "cluster"),
    ],
    ids=["nested", "top-level"],
)
def test_a_misspelt_required_key_is_one_error_not_two(
    tmp_path: Path, old: str, new: str, path: str, meant: str
) -> None:
    """ "region: is required" beside "unknown key 'regin'; did you mean 'region'?" is the same mistake twice."""
    text = (Path(__file__).resolve().parents[1] / "examples/minimal/Pulumi.aws.yaml").read_text().replace(old, new)
    (only,) = issues_of(tmp_path, text)
    assert only.startswith(f"{path}: unknown key '{path.rsplit('.', maxsplit=1)[-1]}'; did you mean '{meant}'?")


def test_a_required_key_left_out_says_what_it_is_whole(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[1] / "examples/minimal/Pulumi.aws.yaml").read_text()
    (only,) = issues_of(tmp_path, text.replace(", region: us-east-1}", "}"))
    assert only == "cluster.region: is required: AWS region, e.g. us-east-1"
