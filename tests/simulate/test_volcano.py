"""Volcano, as the dev stack's Helm release configures it, gang-schedules what render emits.

The real vc-scheduler, vc-controller-manager and admission webhooks (components/simulate/volcano.py) run
against a control plane with kwok nodes shaped like the dev stack's h100 pool. The fabric check's Job and
PodGroup, as render emits them, must be placed whole by Volcano on distinct h100 nodes; the same pod template
asking for more workers than the pool has nodes must be placed not at all. Every assertion reads the
cluster's state: the PodGroup's phase and conditions, the pods' nodes, the events.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.render import Rendered, render
from components.resolution import resolve_file
from components.simulate import apply, controlplane, nodes, volcano, volumes
from components.simulate.client import Client, conditions_of, status_of
from tests.simulate.conftest import cluster_of
from tests.support import diagnosis, waiting

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
JOB_KINDS = {"Job", "PodGroup", "PyTorchJob", "MPIJob", "TrainJob"}
CHECK = "fabric-check-h100"
NAMESPACE = "training"
POOL = "h100"
MOST_NODES = 8
"""cluster_of's default: each pool's maxNodes, at most this many."""
WAIT = 90.0
HOLD = 10.0
"""How long a gang that cannot fit is watched staying unplaced: many of the scheduler's 1 s cycles."""


def _dev() -> Rendered:
    return render(resolve_file(REPO / "Pulumi.dev.yaml"))


def _volcano_cluster(
    start: Callable[[], controlplane.ControlPlane], kwok_binary: Path, definitions: list[dict[str, Any]]
) -> tuple[controlplane.ControlPlane, Rendered]:
    """The dev stack's cluster with Volcano running and every object of the stack applied but its jobs."""
    rendered = _dev()
    plane = cluster_of(start, kwok_binary, definitions, rendered.stack)
    volcano.start(plane, rendered)
    client = plane.client()
    objects = list(rendered.objects)
    rest = [o for o in objects if o["kind"] not in JOB_KINDS]
    outcomes = apply.apply_all(client, rest + volumes.stand_ins(objects))
    refused = [o for o in outcomes if not o.accepted and not o.skipped]
    assert not refused, refused
    _until(plane, "queue research Open", lambda: volcano.queue_open(client, "research"))
    return plane, rendered


def _until(plane: controlplane.ControlPlane, what: str, done: Callable[[], Any]) -> Any:
    """done()'s first truthy value within WAIT; else fail with the events and Volcano's logs."""
    return waiting.until(what, done, lambda: _diagnosis(plane), wait=WAIT)


def _diagnosis(plane: controlplane.ControlPlane) -> str:
    return diagnosis.of(plane, NAMESPACE, "volcano")


def _pod_group(client: Client, name: str) -> dict[str, Any]:
    return client.get(f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{NAMESPACE}/podgroups/{name}") or {}


def _pods(client: Client, job: str) -> list[dict[str, Any]]:
    return client.list("v1", "Pod", NAMESPACE, f"batch.kubernetes.io/job-name={job}")


def _pool_nodes(rendered: Rendered) -> set[str]:
    """The names of the fake nodes cluster_of made for the h100 pool."""
    pool = rendered.stack.pools[POOL]
    return {n["metadata"]["name"] for n in nodes.pool_nodes(pool, min(pool.max_nodes, MOST_NODES))}


def _fabric_check(rendered: Rendered) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fabric check's PodGroup and Job, as render emits them."""
    by_kind = {o["kind"]: o for o in rendered.objects if o["metadata"]["name"] == CHECK}
    return by_kind["PodGroup"], by_kind["Job"]


def test_the_fabric_check_is_gang_scheduled_whole_on_distinct_h100_nodes(
    control_plane, kwok_binary, definitions
) -> None:
    plane, rendered = _volcano_cluster(control_plane, kwok_binary, definitions)
    client = plane.client()
    group, job = _fabric_check(rendered)
    assert group["spec"]["minMember"] == 2, "the fabric check's gang is two workers"
    outcomes = apply.apply_all(client, [group, job])
    assert all(o.accepted for o in outcomes), outcomes

    def placed() -> list[dict[str, Any]]:
        pods = _pods(client, CHECK)
        phase = status_of(_pod_group(client, CHECK)).get("phase")
        bound = [p for p in pods if p["spec"].get("nodeName")]
        return bound if phase == "Running" and len(bound) == 2 else []

    pods = _until(plane, "PodGroup Running with both workers bound", placed)
    landed = {p["spec"]["nodeName"] for p in pods}
    assert len(landed) == 2, f"two workers, two nodes: {landed}"
    assert landed <= _pool_nodes(rendered), f"{landed} are not all h100 nodes"
    assert {p["spec"]["schedulerName"] for p in pods} == {"volcano"}
    # Volcano, not the default scheduler, placed them: its own Scheduled events name the pods.
    scheduled = {
        e["involvedObject"]["name"]
        for e in client.list("v1", "Event", NAMESPACE)
        if e.get("reason") == "Scheduled" and e.get("source", {}).get("component") == "volcano"
    }
    assert {p["metadata"]["name"] for p in pods} <= scheduled, scheduled
    _until(
        plane, "both workers Running", lambda: all(p["status"].get("phase") == "Running" for p in _pods(client, CHECK))
    )


def _quota_counted(client: Any) -> bool:
    """Whether every ResourceQuota of the training namespace has its usage counted (status.hard set)."""
    quotas = client.list("v1", "ResourceQuota", NAMESPACE)
    return bool(quotas) and all((q.get("status") or {}).get("hard") for q in quotas)


def test_a_gang_bigger_than_its_pool_is_placed_not_at_all(control_plane, kwok_binary, definitions) -> None:
    """One worker more than the pool has nodes. The training namespace's GPU quota is the pool's GPUs, so the
    Job controller can make only as many workers as there are nodes: each would fit a node, and Volcano,
    waiting for the whole gang, binds none of them."""
    plane, rendered = _volcano_cluster(control_plane, kwok_binary, definitions)
    client = plane.client()
    pool = _pool_nodes(rendered)
    assert pool <= {n["metadata"]["name"] for n in client.list("v1", "Node")}
    workers = len(pool) + 1
    name = f"{CHECK}-too-big"
    group, job = (copy.deepcopy(o) for o in _fabric_check(rendered))
    group["metadata"]["name"] = job["metadata"]["name"] = name
    group["spec"]["minMember"] = workers
    job["spec"]["parallelism"] = job["spec"]["completions"] = workers
    job["spec"]["template"]["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = name
    # The quota holds the Job controller to the pool's GPUs only once its controller has counted the namespace.
    _until(plane, "the training namespace's GPU quota counted", lambda: _quota_counted(client))
    outcomes = apply.apply_all(client, [group, job])
    assert all(o.accepted for o in outcomes), outcomes

    def unschedulable() -> list[str]:
        conditions = conditions_of(_pod_group(client, name))
        return [f"{c.get('reason')}: {c.get('message')}" for c in conditions if c["type"] == "Unschedulable"]

    reasons = _until(plane, "the scheduler's Unschedulable condition on the PodGroup", unschedulable)
    assert any(f"{workers} minAvailable" in r for r in reasons), f"not the gang's reason: {reasons}"
    created = len(_pods(client, name))
    assert 0 < created <= len(pool), f"{created} workers: some to hold, none without a node to fit"

    def unplaced() -> bool:
        bound = [p["metadata"]["name"] for p in _pods(client, name) if p["spec"].get("nodeName")]
        assert not bound, f"part of the gang was placed: {bound}\n{_diagnosis(plane)}"
        return status_of(_pod_group(client, name)).get("phase") != "Running"

    waiting.holds("no worker of the gang placed, its PodGroup not Running", unplaced, seconds=HOLD)
    quota = [
        e["message"]
        for e in client.list("v1", "Event", NAMESPACE)
        if e["involvedObject"]["name"] == name and "exceeded quota" in e.get("message", "")
    ]
    print(f"{name}: {created} of {workers} workers created; quota: {quota[:1]}; Volcano: {reasons}")
