"""Priorities and sharing, as docs/scheduling.md ("Priorities and sharing") claims them, on the real schedulers.

Volcano (a dev variant): a low-priority job fills the h100 pool, then a high-priority job asks for part of it;
at dev's own namespace quota, the same pair preempts nothing.
Kueue (a gke variant with two ClusterQueues in the stack's cohort): a higher-priority Workload preempts a lower
one of its ClusterQueue, and a queue that lent its idle GPUs gets them back when its own job arrives. Jobs are
launched as Indexed Jobs (no operator needed), each still carrying the stack's queue and PriorityClass. Every
assertion reads the cluster: pods, PodGroups, Workloads and their conditions, events, the schedulers' logs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.render import Rendered, Workload, render
from components.resolution import resolve_file
from components.simulate import simulation
from components.simulate.client import Client, ClientError, conditions_of, status_of
from tests.support import diagnosis, waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate


@pytest.fixture(autouse=True)
def _engines(binaries: dict[str, Path], kwok_binary: Path) -> None:
    """The control plane and kwok built (else the tier skips, or fails in CI, saying why)."""


REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "training"
WAIT = 120.0
HOLD = 8.0
"""How long an outcome is watched holding: several of the schedulers' cycles."""
VOLCANO_API = "scheduling.volcano.sh/v1beta1"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
HIGH, LOW = "training-high", "training-low"


def _variant(stack_file: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Rendered:
    """The stack file with `edit` applied to its config, rendered."""
    return render(resolve_file(variant(stack_file, tmp_path, edit)))


def _job(name: str, nodes: int, priority: str, queue: str, pool: str | None = None) -> dict[str, Any]:
    job: dict[str, Any] = {
        "name": name,
        "launcher": "indexed",
        "image": "registry.example.com/training:v2.0",
        "command": ["train.py"],
        "nodes": nodes,
        "scheduler": {"queue": queue, "priorityClass": priority},
    }
    if pool:
        job["nodePool"] = pool
    return job


def _workload(rendered: Rendered, name: str) -> Workload:
    return next(w for w in rendered.workloads if w.workload["metadata"]["name"] == name)


_until = functools.partial(waiting.until, wait=WAIT)
"""Wait for what the schedulers do in their own time (tests/support/waiting.py)."""
_holds = functools.partial(waiting.holds, seconds=HOLD, poll=1)
"""Watch an outcome holding for several of the schedulers' cycles (tests/support/waiting.py)."""


def _pods(client: Client, job: str) -> list[dict[str, Any]]:
    return client.list("v1", "Pod", NAMESPACE, f"batch.kubernetes.io/job-name={job}")


def _live(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp") and p["status"].get("phase") not in ("Failed", "Succeeded")
    ]


def _running(client: Client, job: str) -> list[dict[str, Any]]:
    return [p for p in _live(_pods(client, job)) if p["status"].get("phase") == "Running"]


def _events(client: Client, reason: str | None = None) -> list[dict[str, Any]]:
    return [e for e in client.list("v1", "Event", NAMESPACE) if reason is None or e.get("reason") == reason]


# --- Volcano -------------------------------------------------------------------------------------------------

VOLCANO_SWEEP, VOLCANO_DEADLINE = "sweep", "deadline"


def _dev_preemption(config: dict[str, Any], gpu_quota: int = 64) -> None:
    """dev with two indexed jobs on the h100 pool: a 4-node sweep at low priority, a 2-node run at high. No
    operators (indexed jobs need none). By default the namespace's GPU quota is raised above the pool's GPUs:
    at dev's own quota (the pool's 32) the high job's pods cannot even be created while the sweep holds it."""
    config.pop("gpu-training:trainer", None)
    config["gpu-training:trainingOperator"] = {"enabled": False, "mpi": False}
    config["gpu-training:storage"] = {"volumes": []}
    config["gpu-training:namespaces"] = [{"name": NAMESPACE, "gpuQuota": gpu_quota}]
    config["gpu-training:jobs"] = [
        _job(VOLCANO_SWEEP, 4, LOW, "research", "h100"),
        _job(VOLCANO_DEADLINE, 2, HIGH, "research", "h100"),
    ]


def _dev_quota(config: dict[str, Any]) -> None:
    """As _dev_preemption, at the dev stack's own namespace quota."""
    quota = next(n["gpuQuota"] for n in config["gpu-training:namespaces"] if n["name"] == NAMESPACE)
    _dev_preemption(config, quota)


def _podgroup(client: Client, name: str) -> dict[str, Any]:
    return client.get(f"/apis/{VOLCANO_API}/namespaces/{NAMESPACE}/podgroups/{name}") or {}


def test_volcano_a_high_priority_job_preempts_part_of_a_low_one_filling_the_pool(control_plane, tmp_path: Path) -> None:
    """Volcano's preempt action evicts as many of the sweep's workers as the high job needs, by priority alone
    (gang does not vote): the high job runs, and the sweep is left with half its gang Running on the other
    nodes and its replacements Pending, since nothing restarts a plain PodGroup's job as a whole."""
    rendered = _variant(REPO / "Pulumi.dev.yaml", tmp_path, _dev_preemption)
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=4, plane=control_plane()) as cluster:
        client = cluster.client

        def seen() -> str:
            return diagnosis.of(cluster.plane, NAMESPACE, "volcano-scheduler", last=25, lines=60)

        sweep = simulation.place(cluster, _workload(rendered, VOLCANO_SWEEP), WAIT)
        assert sweep.whole and sweep.gang == "Running", sweep
        assert len(sweep.nodes) == 4, f"the sweep fills the pool's four nodes: {sweep}"

        deadline = _workload(rendered, VOLCANO_DEADLINE)
        refused = [o for o in simulation.apply.apply_all(client, list(deadline.objects)) if not o.accepted]
        assert not refused, refused
        assert _podgroup(client, VOLCANO_DEADLINE)["spec"]["priorityClassName"] == HIGH
        assert _podgroup(client, VOLCANO_SWEEP)["spec"]["priorityClassName"] == LOW

        def deadline_running() -> list[dict[str, Any]]:
            _kubelet_ends_deleted_pods(client)
            running = _running(client, VOLCANO_DEADLINE)
            return running if len(running) == 2 else []

        placed = _until("the high-priority job Running on two nodes", deadline_running, seen)
        taken = {p["spec"]["nodeName"] for p in placed}
        assert taken <= set(sweep.nodes), f"the high job ran on the sweep's nodes: {taken}"
        evicted = {
            e["involvedObject"]["name"]
            for e in _events(client, "Evict")
            if e["involvedObject"]["kind"] == "Pod" and "preempt" in e.get("message", "")
        }
        assert len(evicted) == 2 and all(n.startswith(f"{VOLCANO_SWEEP}-") for n in evicted), (
            f"Volcano evicted for preemption exactly the two sweep workers the high job needed: {evicted}"
        )
        assert any(
            e["involvedObject"]["name"] == VOLCANO_SWEEP and e["involvedObject"]["kind"] == "PodGroup"
            for e in _events(client, "Evict")
        ), "the sweep's PodGroup records the preemption"

        # What happens to the rest of the sweep: its two other workers keep their nodes, and the Job controller's
        # replacements for the evicted two wait, since the gang of four no longer fits. Preemption is not
        # counted as a failure (the indexed Job's podFailurePolicy ignores DisruptionTarget).
        def half_gang() -> list[dict[str, Any]] | None:
            _kubelet_ends_deleted_pods(client)
            live = _live(_pods(client, VOLCANO_SWEEP))
            pending = [p for p in live if not p["spec"].get("nodeName")]
            return live if len(live) == 4 and len(pending) == 2 else None

        _until("the sweep's two replacement workers created", half_gang, seen)

        def kept() -> bool:
            live = _live(_pods(client, VOLCANO_SWEEP))
            running = {p["spec"]["nodeName"] for p in live if p["status"].get("phase") == "Running"}
            assert running == set(sweep.nodes) - taken, f"the sweep's other workers keep their nodes: {running}"
            assert not [p for p in live if p["status"].get("phase") == "Pending" and p["spec"].get("nodeName")]
            assert len(_running(client, VOLCANO_DEADLINE)) == 2
            return True

        _holds("the sweep's other workers Running, its replacements unbound, the high job Running", kept)
        job = client.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{VOLCANO_SWEEP}") or {}
        assert not status_of(job).get("failed"), f"preemption counted as a failure: {job.get('status')}"
        conditions = conditions_of(_podgroup(client, VOLCANO_SWEEP))
        gang = [c.get("message", "") for c in conditions if c["type"] == "Unschedulable"]
        assert any("2 Running" in m and "4 minAvailable" in m for m in gang), gang
        print(f"sweep after preemption: evicted {sorted(evicted)}; Volcano: {gang}")


def _kubelet_ends_deleted_pods(client: Client) -> None:
    """What a kubelet does and kwok's fast stages do not: a deleted pod that was running ends Failed. Without it
    the Job controller keeps the job-tracking finalizer of a pod under a podFailurePolicy (it waits for a
    terminal phase), and the evicted pods would stay forever."""
    for pod in client.list("v1", "Pod", NAMESPACE):
        if pod["metadata"].get("deletionTimestamp") and pod["status"].get("phase") in ("Running", "Pending"):
            path = f"/api/v1/namespaces/{NAMESPACE}/pods/{pod['metadata']['name']}/status"
            body = json.dumps({"status": {"phase": "Failed"}}).encode()
            try:
                client.request("PATCH", path, body, "application/merge-patch+json")
            except ClientError as exc:
                if exc.code != 404:
                    raise


# --- Kueue ---------------------------------------------------------------------------------------------------

KUEUE_LOW, KUEUE_HIGH = "kueue-sweep", "kueue-deadline"
BORROWER, LENDER = "borrower-job", "lender-job"
PRIORITY_CLASSES = [
    {"name": HIGH, "value": 1000, "description": "deadline runs"},
    {"name": LOW, "value": 100, "preempting": False, "description": "sweeps that yield"},
]


def _gke_queues(config: dict[str, Any]) -> None:
    """gke's a3 pool (4 nodes, 32 GPUs) split into three ClusterQueues of the stack's kind: `research` (16 GPUs)
    in a cohort of its own, so it can only preempt within itself; `sweeps` and `prod` (8 each) in the stack's
    default cohort, where one borrows what the other leaves idle. Topology placement is off so that only quota
    decides; no operator runs (the jobs are Indexed Jobs)."""
    config["gpu-training:scheduler"] = {
        "type": "kueue",
        "queues": [
            {"name": "research", "gpus": 16, "cohort": "research-only"},
            {"name": "sweeps", "gpus": 8},
            {"name": "prod", "gpus": 8},
        ],
        "priorityClasses": PRIORITY_CLASSES,
    }
    config["gpu-training:trainingOperator"] = {"enabled": False, "mpi": False}
    config["gpu-training:storage"] = {"volumes": []}
    config["gpu-training:jobs"] = [
        _job(KUEUE_LOW, 2, LOW, "research"),
        _job(KUEUE_HIGH, 2, HIGH, "research"),
        # A borrower at high priority and a lender at low: reclaimWithinCohort Any takes back lent GPUs whatever
        # the borrower's priority.
        _job(BORROWER, 2, HIGH, "sweeps"),
        _job(LENDER, 1, LOW, "prod"),
    ]


def _kueue_workload(client: Client, job: str) -> dict[str, Any]:
    """The Workload Kueue made for the Job named `job` (the newest, if it made more than one)."""
    owned = [
        w
        for w in client.list(KUEUE_API, "Workload", NAMESPACE)
        if any(r.get("kind") == "Job" and r.get("name") == job for r in w["metadata"].get("ownerReferences", []))
    ]
    return max(owned, key=lambda w: w["metadata"]["creationTimestamp"]) if owned else {}


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in conditions_of(obj) if c["type"] == kind), {})


def _is(obj: dict[str, Any], kind: str) -> bool:
    return _condition(obj, kind).get("status") == "True"


def _borrowed_gpus(client: Client, queue: str) -> int:
    """GPUs the ClusterQueue borrows from its cohort, as Kueue reports them."""
    status = status_of(client.get(f"/apis/{KUEUE_API}/clusterqueues/{queue}"))
    return sum(
        int(r.get("borrowed", "0"))
        for flavor in status.get("flavorsUsage", [])
        for r in flavor.get("resources", [])
        if r["name"] == "nvidia.com/gpu"
    )


def test_kueue_preempts_within_a_cluster_queue_and_reclaims_what_a_queue_lent(control_plane, tmp_path: Path) -> None:
    rendered = _variant(REPO / "Pulumi.gke.yaml", tmp_path, _gke_queues)
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=4, plane=control_plane()) as cluster:
        client = cluster.client

        def seen() -> str:
            workloads = [
                f"{w['metadata']['name']}: {[(c['type'], c['status'], c.get('reason')) for c in w['status'].get('conditions', [])]}"
                for w in client.list(KUEUE_API, "Workload", NAMESPACE)
            ]
            queues = [json.dumps(status_of(q).get("flavorsUsage")) for q in client.list(KUEUE_API, "ClusterQueue")]
            return (
                "\n".join(workloads + queues)
                + "\n"
                + diagnosis.of(cluster.plane, NAMESPACE, "kueue", last=25, lines=40)
            )

        def running(job: str, count: int) -> Callable[[], Any]:
            def check() -> Any:
                _kubelet_ends_deleted_pods(client)
                pods = _running(client, job)
                return pods if len(pods) == count and _is(_kueue_workload(client, job), "Admitted") else None

            return check

        def preempted(job: str) -> Callable[[], Any]:
            def check() -> Any:
                _kubelet_ends_deleted_pods(client)
                workload = _kueue_workload(client, job)
                return workload if _is(workload, "Preempted") else None

            return check

        # (a) Within a ClusterQueue: the high job does not fit beside the low one in research's 16 GPUs, and
        # research cannot borrow (a cohort of its own), so Kueue evicts the lower-priority Workload.
        low = simulation.place(cluster, _workload(rendered, KUEUE_LOW), WAIT)
        assert low.whole and low.gang == "admitted", low
        simulation.apply.apply_all(client, list(_workload(rendered, KUEUE_HIGH).objects))
        victim = _until("the low Workload preempted", preempted(KUEUE_LOW), seen)
        reason = _condition(victim, "Preempted").get("reason")
        assert reason == "InClusterQueue", _condition(victim, "Preempted")
        assert _condition(victim, "Evicted").get("reason") == "Preempted", _condition(victim, "Evicted")
        _until("the high job admitted and both its workers Running", running(KUEUE_HIGH, 2), seen)
        _until("the low job's workers gone", lambda: not _live(_pods(client, KUEUE_LOW)) or None, seen)
        assert not _is(_kueue_workload(client, KUEUE_LOW), "Admitted"), "the low job waits, requeued"
        assert (client.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{KUEUE_LOW}") or {})["spec"]["suspend"]

        # (b) Across the cohort: sweeps (8 GPUs) runs a 16-GPU job by borrowing prod's idle 8; prod's own job then
        # takes them back, though the borrower has the higher priority.
        borrower = simulation.place(cluster, _workload(rendered, BORROWER), WAIT)
        assert borrower.whole and borrower.gang == "admitted", borrower
        _until("sweeps borrowing 8 GPUs from its cohort", lambda: _borrowed_gpus(client, "sweeps") == 8, seen)
        simulation.apply.apply_all(client, list(_workload(rendered, LENDER).objects))
        victim = _until("the borrower's Workload preempted", preempted(BORROWER), seen)
        condition = _condition(victim, "Preempted")
        assert condition.get("reason") in ("InCohortReclamation", "InCohortFairSharing"), condition
        _until("the lender's job admitted and Running", running(LENDER, 1), seen)
        _until("the borrower's workers gone", lambda: not _live(_pods(client, BORROWER)) or None, seen)
        _until("sweeps borrowing nothing any more", lambda: _borrowed_gpus(client, "sweeps") == 0, seen)
        assert len(_running(client, KUEUE_HIGH)) == 2, "research, in its own cohort, is untouched"
        print(
            f"Kueue: within the queue {reason}; across the cohort {condition.get('reason')}: {condition.get('message')}"
        )


def test_volcano_preempts_nothing_when_the_namespace_quota_is_full(control_plane, tmp_path: Path) -> None:
    """At dev's own quota (32 GPUs, the pool's) the sweep holds the whole quota: the ResourceQuota refuses the
    high job's pods (it counts Pending pods too), so Volcano never sees a preemptor and evicts nothing."""
    rendered = _variant(REPO / "Pulumi.dev.yaml", tmp_path, _dev_quota)
    quota = next(o for o in rendered.objects if o["kind"] == "ResourceQuota")
    assert quota["spec"]["hard"]["requests.nvidia.com/gpu"] == "32", quota["spec"]
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=4, plane=control_plane()) as cluster:
        client = cluster.client
        sweep = simulation.place(cluster, _workload(rendered, VOLCANO_SWEEP), WAIT)
        assert sweep.whole and sweep.gang == "Running", sweep
        simulation.apply.apply_all(client, list(_workload(rendered, VOLCANO_DEADLINE).objects))

        def refused() -> list[str]:
            return [
                e["message"]
                for e in _events(client, "FailedCreate")
                if e["involvedObject"]["name"] == VOLCANO_DEADLINE and "exceeded quota" in e.get("message", "")
            ]

        messages = _until(
            "the Job controller refused by the quota", refused, lambda: diagnosis.events(client, NAMESPACE, 25)
        )

        def nothing_preempted() -> bool:
            assert not _pods(client, VOLCANO_DEADLINE), "no pod of the high job exists"
            assert len(_running(client, VOLCANO_SWEEP)) == 4, "the sweep keeps all four nodes"
            assert not _events(client, "Evict"), "Volcano evicted something"
            return True

        _holds("the high job refused, the sweep whole, nothing evicted", nothing_preempted)
        print(f"high job at dev's quota: {messages[0]}")
