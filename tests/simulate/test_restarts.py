"""Whole-job retries as docs/failures.md promises them, for the launchers that run on Jobs: the TrainJob
(its runtime's JobSet restarts every rank together, a node fault without using up a retry) and the Indexed Job
(backoffLimit counted in pods).

A rank fails as the kubelet reports it: its pod's status says phase Failed and its container terminated with exit
code 1 (written to the status subresource; kwok, playing the kubelet, leaves a running pod's status alone). The
real Job controller, JobSet and Trainer then do what they do with it. Every assertion reads the cluster: the
JobSet's restart count, the Jobs' and the TrainJob's conditions, the pods. test_operators.py proves the same for
the PyTorchJob and the MPIJob.
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from components.manifests.meta import INSTANCE_LABEL
from components.render import Rendered, Workload, render
from components.resolution import resolve_file
from components.simulate import simulation
from components.simulate.client import Client, ClientError, conditions_of, status_of
from tests.support import jobsets, waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WAIT = 90.0
HOLD = 5.0
"""How long a job that must survive a fault is watched staying alive: several reconciles of its controllers."""
NODES = 2


def _dev(tmp_path: Path, jobs: list[dict[str, Any]]) -> Rendered:
    """dev with no gang scheduler and no Training Operator (neither is what these jobs retry by), and `jobs`."""

    def edit(config: dict[str, Any]) -> None:
        config["gpu-training:scheduler"] = {"type": "none"}
        config["gpu-training:trainingOperator"] = {"enabled": False, "mpi": False}
        config["gpu-training:jobs"] = jobs

    return render(resolve_file(variant(REPO / "Pulumi.dev.yaml", tmp_path, edit)))


def _job(name: str, launcher: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "launcher": launcher,
        "image": "registry.example.com/training:v1",
        "command": ["train.py"],
        "nodes": NODES,
        **extra,
    }


_until = functools.partial(waiting.until, wait=WAIT)
"""Wait for what the cluster does in its own time (tests/support/waiting.py)."""
_holds = functools.partial(waiting.holds, seconds=HOLD)
"""Watch what must stay so while the controllers reconcile (tests/support/waiting.py)."""


def _pods(client: Client, workload: Workload) -> list[dict[str, Any]]:
    meta = workload.workload["metadata"]
    return client.list("v1", "Pod", meta["namespace"], f"{INSTANCE_LABEL}={meta['name']}")


def _running(client: Client, workload: Workload, count: int) -> list[dict[str, Any]] | None:
    """The job's pods once exactly `count` are live, each bound and Running."""
    live = [p for p in _pods(client, workload) if p["status"].get("phase") not in ("Failed", "Succeeded")]
    live = [p for p in live if not p["metadata"].get("deletionTimestamp")]
    ok = len(live) == count and all(p["spec"].get("nodeName") and p["status"].get("phase") == "Running" for p in live)
    return live if ok else None


def _fail(client: Client, pod: dict[str, Any], disruption: bool = False) -> None:
    """Report the pod's container exited 1 and the pod Failed; `disruption`: as an eviction or preemption."""
    meta = pod["metadata"]
    path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status"
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    containers = [
        {
            "name": c["name"],
            "image": c["image"],
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": now, "finishedAt": now}},
        }
        for c in pod["spec"]["containers"]
    ]
    conditions = [{"type": "Ready", "status": "False", "lastTransitionTime": now}]
    if disruption:
        conditions.append(
            {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "lastTransitionTime": now}
        )
    patch = {"status": {"phase": "Failed", "containerStatuses": containers, "conditions": conditions}}
    try:
        client.request("PATCH", path, json.dumps(patch).encode(), "application/strategic-merge-patch+json")
    except ClientError as exc:
        if exc.code != 404:  # gone already: its Job was deleted with the restart under way
            raise


def _condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    conditions = conditions_of(obj)
    return next((c for c in conditions if c["type"] == kind and c["status"] == "True"), None)


def test_a_trainjob_restarts_every_rank_together_until_its_jobset_has_restarted_backoff_limit_times(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    """trainjob: the runtime's JobSet failurePolicy.maxRestarts = backoffLimit, each Job backoffLimit 0."""
    rendered = _dev(tmp_path, [_job("restarting", "trainjob")])
    [workload] = [w for w in rendered.workloads if not w.gate]
    retries = workload.plan.spec.backoff_limit
    assert retries == 3, "the default: the pool's ClusterTrainingRuntime"
    assert workload.workload["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime"
    trainjob = workload.workload
    with simulation.running(rendered, tmp_path / "cluster", plane=control_plane()) as cluster:
        client = cluster.client
        placement = simulation.place(cluster, workload, WAIT)
        assert placement.whole, placement
        jobset_path = jobsets.path(trainjob)
        stored = jobsets.made(client, trainjob)
        assert stored["spec"]["failurePolicy"]["maxRestarts"] == retries
        assert {r["template"]["spec"]["backoffLimit"] for r in stored["spec"]["replicatedJobs"]} == {0}

        def restarts() -> int:
            return int(status_of(client.get(jobset_path)).get("restarts") or 0)

        for fault in range(1, retries + 2):
            pods = _until(f"{NODES} ranks Running before fault {fault}", lambda: _running(client, workload, NODES))
            uids = {p["metadata"]["uid"] for p in pods}
            _fail(client, pods[0])  # one rank's fault
            if fault <= retries:
                _until(f"JobSet restart {fault}", lambda f=fault: restarts() == f)
                # Every rank restarted, not only the failed one: new pods in every Job.
                fresh = _until(
                    f"{NODES} new ranks after restart {fault}",
                    lambda: (p := _running(client, workload, NODES)) and p,
                )
                assert not uids & {p["metadata"]["uid"] for p in fresh}, "a rank outlived the restart"
                assert _condition(client.get(jobset_path), "Failed") is None
        failed = _until("the JobSet Failed", lambda: _condition(client.get(jobset_path), "Failed"))
        assert restarts() == retries, f"{restarts()} restarts"
        assert "maxrestarts" in failed.get("reason", "").lower(), failed
        _until("the TrainJob Failed", lambda: _condition(client.get(client.path_of(trainjob)), "Failed"))


def test_a_trainjob_restarts_every_rank_for_a_node_fault_without_using_up_a_retry(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    """trainjob: a disrupted pod fails its child Job by podFailurePolicy (reason PodFailurePolicy), and the
    JobSet's NodeFault rule restarts every Job without counting it; a program fault still counts."""
    rendered = _dev(tmp_path, [_job("evicted", "trainjob")])
    [workload] = [w for w in rendered.workloads if not w.gate]
    retries = workload.plan.spec.backoff_limit
    trainjob = workload.workload
    assert trainjob["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime", "the pool's runtime carries it"
    with simulation.running(rendered, tmp_path / "cluster", plane=control_plane()) as cluster:
        client = cluster.client
        placement = simulation.place(cluster, workload, WAIT)
        assert placement.whole, placement
        jobset_path = jobsets.path(trainjob)
        stored = jobsets.made(client, trainjob)
        assert stored["spec"]["failurePolicy"]["rules"][0]["name"] == "NodeFault", "Trainer kept the rules"
        assert {
            r["template"]["spec"]["podFailurePolicy"]["rules"][0]["action"] for r in stored["spec"]["replicatedJobs"]
        } == {"FailJob"}

        def counts() -> tuple[int, int]:
            status = status_of(client.get(jobset_path))
            return int(status.get("restarts") or 0), int(status.get("restartsCountTowardsMax") or 0)

        # More node faults than the job has retries: every one restarts every rank, none is counted.
        for fault in range(1, retries + 2):
            pods = _until(f"{NODES} ranks Running before node fault {fault}", lambda: _running(client, workload, NODES))
            uids = {p["metadata"]["uid"] for p in pods}
            _fail(client, pods[0], disruption=True)
            _until(f"JobSet restart {fault}", lambda f=fault: counts() == (f, 0))
            fresh = _until(f"{NODES} new ranks after node fault {fault}", lambda: _running(client, workload, NODES))
            assert not uids & {p["metadata"]["uid"] for p in fresh}, "a rank outlived the restart"
            assert _condition(client.get(jobset_path), "Failed") is None

        # A program fault is counted.
        pods = _until(f"{NODES} ranks Running before the program fault", lambda: _running(client, workload, NODES))
        _fail(client, pods[0])
        _until("the program fault counted", lambda: counts() == (retries + 2, 1))
        _holds("the JobSet alive with retries left", lambda: _condition(client.get(jobset_path), "Failed") is None)


def test_an_indexed_job_survives_a_fault_of_every_rank_per_retry_and_never_counts_an_eviction(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    """indexed: backoffLimit = retries x pods, podFailurePolicy ignores DisruptionTarget (restartPolicy Never)."""
    rendered = _dev(tmp_path, [_job("retrying", "indexed", backoffLimit=1)])
    [workload] = [w for w in rendered.workloads if not w.gate]
    job = workload.workload
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    limit = job["spec"]["backoffLimit"]
    assert limit == NODES, "one whole-job retry, counted in pods"
    with simulation.running(rendered, tmp_path / "cluster", plane=control_plane()) as cluster:
        client = cluster.client
        placement = simulation.place(cluster, workload, WAIT)
        assert placement.whole, placement

        def stored() -> dict[str, Any]:
            return client.get(client.path_of(job)) or {}

        def failed_pods() -> int:
            return int(status_of(stored()).get("failed") or 0)

        # An eviction of one rank: replaced, not counted.
        pods = _until(f"{NODES} ranks Running", lambda: _running(client, workload, NODES))
        _fail(client, pods[0], disruption=True)
        _until("the evicted rank replaced", lambda: _running(client, workload, NODES))
        assert failed_pods() == 0, stored().get("status")

        # A fault: every rank fails (a collective job's ranks go down together). One retry allowed.
        pods = _until(f"{NODES} ranks Running", lambda: _running(client, workload, NODES))
        for pod in pods:
            _fail(client, pod)
        _until(f"{NODES} failures counted", lambda: failed_pods() == NODES)
        _holds("the Job alive after one whole-job retry", lambda: _condition(stored(), "Failed") is None)
        pods = _until("every rank replaced", lambda: _running(client, workload, NODES))

        # The next fault is one more than the retries: the Job fails.
        _fail(client, pods[0])
        failed = _until("the Job Failed", lambda: _condition(stored(), "Failed"))
        assert failed["reason"] == "BackoffLimitExceeded", failed


QUARANTINE = {"key": "gpu-training/unhealthy", "value": "xid-79", "effect": "NoExecute"}
"""A node found unhealthy mid-run, held as a repair agent holds it: a NoExecute taint, which the real
kube-controller-manager's taint eviction acts on (it deletes the node's pods, marking them DisruptionTarget)."""


def test_a_node_found_unhealthy_mid_run_has_each_jobs_pods_rescheduled_as_its_launcher_promises(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    """trainjob: JobSet restarts every rank uncounted (NodeFault); indexed: the lost index is replaced
    uncounted. Each job loses a node to quarantine, and both come back whole on healthy nodes."""
    rendered = _dev(tmp_path, [_job("pretrain", "trainjob"), _job("sweep", "indexed")])
    trainjob, indexed = (w for w in rendered.workloads if not w.gate)
    jobs = (trainjob, indexed)
    with simulation.running(rendered, tmp_path / "cluster", 2 * NODES + 2, plane=control_plane()) as cluster:
        client = cluster.client
        for workload in jobs:
            placement = simulation.place(cluster, workload, WAIT)
            assert placement.whole, placement
        before = {w.plan.name: _until(f"{w.plan.name} Running", lambda w=w: _running(client, w, NODES)) for w in jobs}
        sick = {pods[0]["spec"]["nodeName"] for pods in before.values()}
        assert len(sick) == 2, "each pod holds a whole node"
        for name in sick:
            taints = [*(client.get(f"/api/v1/nodes/{name}") or {})["spec"].get("taints", []), QUARANTINE]
            client.request("PATCH", f"/api/v1/nodes/{name}", json.dumps({"spec": {"taints": taints}}).encode(),
                           "application/strategic-merge-patch+json")  # fmt: skip

        jobset_path = jobsets.path(trainjob.workload)
        _until(
            "the JobSet restarted for the node fault",
            lambda: int(status_of(client.get(jobset_path)).get("restarts") or 0),
        )
        assert int(status_of(client.get(jobset_path)).get("restartsCountTowardsMax") or 0) == 0, "no retry used up"
        for workload in jobs:
            old = {p["metadata"]["uid"] for p in before[workload.plan.name] if p["spec"]["nodeName"] in sick}
            assert old
            pods = _until(
                f"{workload.plan.name} whole again on healthy nodes",
                lambda w=workload, old=old: (
                    (p := _running(client, w, NODES))
                    and not old & {x["metadata"]["uid"] for x in p}
                    and not sick & {x["spec"]["nodeName"] for x in p}
                    and p
                ),
            )
            assert len({p["spec"]["nodeName"] for p in pods}) == NODES
        job = client.get(client.path_of(indexed.workload)) or {}
        assert int(status_of(job).get("failed") or 0) == 0, "the indexed job's lost rank is not counted"
        assert _condition(job, "Failed") is None and _condition(client.get(jobset_path), "Failed") is None
