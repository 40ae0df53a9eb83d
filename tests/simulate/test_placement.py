"""Every job's pods on the real scheduler, against kwok nodes shaped like its pool (components/simulate/nodes.py).

The stacks' schedulers and operators (Volcano, Kueue, the Training Operator) are not part of this tier
yet, so each job runs here as the Indexed Job launcher makes it, with no gang scheduler: the same pod
template every launcher builds (components/manifests/pod.py), its GPUs, devices, node selector and
tolerations, bound by the real kube-scheduler to nodes that advertise what the pool's nodes do. Each
assertion reads the cluster's state: the pods' nodes and phases, and the scheduler's events.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.render import render
from components.simulate import apply, controlplane, volumes
from components.simulate.client import Client, conditions_of
from components.stack import Stack
from components.wellknown import POOL_LABEL
from tests.simulate.conftest import cluster_of, indexed_variant
from tests.support import diagnosis, waiting
from tests.support.stacks import STACK_FILES

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
STACKS = STACK_FILES
ONLY_OTHER_LAUNCHERS = ("scheduler", "topology", "elastic", "runtime", "deepspeed", "trainingRuntime")
MOST_NODES = 8
WAIT = 60.0


def _as_indexed_jobs(stack_file: Path, tmp_path: Path) -> Stack:
    """The stack with no gang scheduler and every job launched as an Indexed Job."""
    return indexed_variant(stack_file, tmp_path, ONLY_OTHER_LAUNCHERS, gang=False)


def _cluster(
    start: Callable[[], controlplane.ControlPlane], kwok_binary: Path, definitions: list[dict[str, Any]], stack: Stack
) -> Client:
    return cluster_of(start, kwok_binary, definitions, stack, MOST_NODES).client()


def _pods(client: Client, job: dict[str, Any]) -> list[dict[str, Any]]:
    name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    return client.list("v1", "Pod", namespace, f"batch.kubernetes.io/job-name={name}")


def _wait_running(client: Client, job: dict[str, Any], count: int) -> list[dict[str, Any]]:
    def running() -> list[dict[str, Any]] | None:
        pods = _pods(client, job)
        return pods if len(pods) == count and all(p["status"].get("phase") == "Running" for p in pods) else None

    return waiting.until(
        f"{job['metadata']['name']}: {count} pods Running",
        running,
        lambda: diagnosis.events(client, job["metadata"]["namespace"], 5),
        wait=WAIT,
    )


def _delete(client: Client, job: dict[str, Any]) -> None:
    client.delete(job)
    waiting.until(
        f"{job['metadata']['name']} and its pods deleted",
        lambda: client.get(client.path_of(job)) is None and not _pods(client, job),
        wait=WAIT,
    )


@pytest.mark.parametrize("stack_file", STACKS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_job_runs_whole_on_its_own_pools_nodes(
    stack_file, control_plane, kwok_binary, definitions, tmp_path
) -> None:
    stack = _as_indexed_jobs(stack_file, tmp_path)
    client = _cluster(control_plane, kwok_binary, definitions, stack)
    objects = render(stack).objects
    jobs = [o for o in objects if o["kind"] == "Job"]
    assert jobs, "the stack has jobs to place"
    rest = apply.apply_all(client, [o for o in objects if o["kind"] != "Job"] + volumes.stand_ins(list(objects)))
    assert not [o for o in rest if not o.accepted and not o.skipped]
    waiting.claims_bound(client, wait=WAIT)
    for job in jobs:  # one at a time: without a gang scheduler, two jobs on one pool may each get half
        [outcome] = apply.apply_all(client, [job])
        assert outcome.accepted, outcome.message
        pool = job["spec"]["template"]["metadata"]["labels"][POOL_LABEL]
        pods = _wait_running(client, job, job["spec"]["parallelism"])
        landed = {p["spec"]["nodeName"] for p in pods}
        assert all(n.startswith(f"{pool}-") for n in landed), f"{job['metadata']['name']} left pool {pool}"
        assert len(landed) == len(pods), "one worker per node"
        _delete(client, job)


def test_a_worker_asking_what_the_nodes_lack_stays_pending_with_the_schedulers_reason(
    control_plane, kwok_binary, definitions, tmp_path
) -> None:
    """The field review's blocker, on the real scheduler: huge pages on Karpenter-shaped EFA nodes."""
    stack = _as_indexed_jobs(REPO / "Pulumi.prod.yaml", tmp_path)
    client = _cluster(control_plane, kwok_binary, definitions, stack)
    objects = render(stack).objects
    apply.apply_all(client, [o for o in objects if o["kind"] != "Job"] + volumes.stand_ins(list(objects)))
    job = copy.deepcopy(next(o for o in objects if o["kind"] == "Job"))
    for container in job["spec"]["template"]["spec"]["containers"]:
        for side in ("requests", "limits"):
            container["resources"][side]["hugepages-2Mi"] = "5120Mi"
    waiting.claims_bound(client, wait=WAIT)
    [outcome] = apply.apply_all(client, [job])
    assert outcome.accepted, outcome.message

    def reasons() -> list[str]:
        return [
            c.get("message", "")
            for pod in _pods(client, job)
            for c in conditions_of(pod)
            if c["type"] == "PodScheduled" and c["status"] == "False"
        ]

    waiting.until(
        "the scheduler's reason Insufficient hugepages-2Mi for every worker",
        lambda: (said := reasons()) and all("Insufficient hugepages-2Mi" in r for r in said),
        lambda: f"the scheduler's reasons: {reasons()}",
        wait=WAIT,
    )
    assert not [p for p in _pods(client, job) if p["spec"].get("nodeName")], "no worker was placed"
