"""Every launcher's derived pod, Service and hostname names fit Kubernetes' 63 characters, or render refuses the
job's name, naming the longest derived name and the longest job name that fits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.errors import ConfigError
from components.manifests import trainingjob
from components.manifests.plan import plan
from components.manifests.podnames import MAX_LABEL, derived_names, longest_name
from tests.support.factories import job, pool, with_trainer
from tests.support.refusals import refusal
from tests.test_config import stack

NODES = 12  # two-digit indices: the longest names are the last worker's


def _operator_names(obj: dict[str, Any]) -> list[str]:
    """The names the object's controller makes, read off the object the way that controller reads it."""
    name, spec = obj["metadata"]["name"], obj["spec"]
    if obj["kind"] in ("PyTorchJob", "TFJob"):
        replicas = spec.get("pytorchReplicaSpecs") or spec["tfReplicaSpecs"]
        return [f"{name}-{rtype.lower()}-{i}" for rtype, r in replicas.items() for i in range(r["replicas"])]
    if obj["kind"] == "MPIJob":
        workers = spec["mpiReplicaSpecs"]["Worker"]["replicas"]
        return [f"{name}-launcher", *(f"{name}-worker-{i}" for i in range(workers))]
    if obj["kind"] == "Job":
        return [f"{name}-{i}" for i in range(spec["completions"])]
    return [name]


@pytest.mark.parametrize(
    "fields",
    [
        {"launcher": "pytorch"},
        {"launcher": "pytorch", "elastic": {"minNodes": 2, "maxNodes": NODES}, "nodes": 2},
        {"launcher": "tensorflow"},
        {"launcher": "mpi"},
        {"launcher": "indexed"},
    ],
    ids=["pytorch", "elastic", "tensorflow", "mpi", "indexed"],
)
def test_a_name_of_the_longest_length_fits_and_one_more_is_refused(fields: dict[str, Any]) -> None:
    gpus = pool("tcp", maxNodes=NODES)
    nodes = {"nodes": NODES, **fields}
    fits = longest_name(job(**nodes))
    longest = job(**{**nodes, "name": "a" * fits})
    workload = trainingjob.objects(plan(longest, gpus))[-1]
    made = _operator_names(workload)
    if "elastic" in fields:  # the operator scales the Workers up to maxReplicas
        made.append(f"{longest.name}-worker-{NODES - 1}")
    assert max(len(n) for n in made) == MAX_LABEL, made
    assert {d.name for d in derived_names(longest)} <= set(made), "the derived names are the controller's"

    with pytest.raises(ConfigError) as caught:
        plan(job(**{**nodes, "name": "a" * (fits + 1)}), gpus, path="jobs[0]")
    (issue,) = [i for i in caught.value.issues if i.path == "jobs[0].name"]
    assert f"at most {fits} characters" in issue.message
    assert f"({MAX_LABEL + 1} characters)" in issue.message
    assert f"job name '{'a' * (fits + 1)}'" in issue.message


@pytest.mark.parametrize("runtime", ["torch", "deepspeed"])
def test_a_trainjob_name_fits_jobsets_pod_names(runtime: str) -> None:
    gpus = with_trainer(pool("tcp", maxNodes=NODES))
    fields = {"launcher": "trainjob", "runtime": runtime, "nodes": NODES}
    fits = longest_name(job(**fields))
    # JobSet's webhook tests the longest pod name, its 5 random characters included: <job>-node-0-11-abcde, or
    # the launcher's <job>-launcher-0-0-abcde beside 11 nodes.
    assert fits == MAX_LABEL - len("-node-0-11-abcde" if runtime == "torch" else "-launcher-0-0-abcde")
    plan(job(**{**fields, "name": "a" * fits}), gpus)
    with pytest.raises(ConfigError, match=f"at most {fits} characters"):
        plan(job(**{**fields, "name": "a" * (fits + 1)}), gpus)


def test_too_long_a_name_is_refused_at_its_line(tmp_path: Path) -> None:
    name = "llama-" + "x" * 50  # 56 characters, and its last MPI worker's hostname <name>-worker-3 65
    raw = stack(jobs__0__name=name, jobs__0__nodes=4, jobs__0__launcher="mpi")
    issue, line = refusal(tmp_path, raw)
    assert issue.path == "jobs[0].name"
    assert name in line
    assert f"worker pod hostname '{name}-worker-3' (65 characters)" in issue.message
    assert "shorten it to at most 54 characters" in issue.message
