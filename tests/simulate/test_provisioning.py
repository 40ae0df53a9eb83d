"""Capacity-aware admission on the gke-dws example: the real Kueue holds a job on a queued pool until its
ProvisioningRequest is answered, then admits it whole and its pods schedule on the pool's new nodes.

The pool starts with no nodes. simulate's stand-in for GKE's autoscaler (components/simulate/provisioner.py) is
paused while the job waits, so the wait is seen: Kueue reserved the quota, made the request with the worker pod
set only (the MPIJob's launcher needs no GPU: kueue#2260), and keeps the job suspended with its check Pending.
Resumed, the stand-in adds the pool's nodes at once and marks the request Provisioned; Kueue admits the job, the
MPI Operator makes its pods, and the scheduler binds the workers to the new nodes and the launcher to a CPU node.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import pytest

from components.render import render
from components.resolution import resolve_file
from components.simulate import apply, simulation
from components.simulate.client import Client, conditions_of, status_of
from tests.support import waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0
KUEUE = "kueue.x-k8s.io/v1beta2"
CHECK = "a3-provisioning"


def _variant(tmp_path: Path) -> Path:
    """gke-dws with its job as an MPIJob (a launcher without GPUs beside the workers), no fabric check, and no
    Training Operator (the MPI Operator runs the job)."""

    def edit(config: dict[str, Any]) -> None:
        (pool,) = config["gpu-training:nodePools"]
        pool["fabricCheck"] = {"enabled": False}
        config["gpu-training:trainingOperator"] = {"enabled": False, "mpi": True}
        config["gpu-training:jobs"] = [
            {
                "name": "nccl-tests",
                "launcher": "mpi",
                "image": "registry.example.com/nccl-tests:v2.16.9",
                "command": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "8G"],
                "nodes": 2,
            }
        ]

    return variant(REPO / "examples" / "minimal" / "Pulumi.gke-dws.yaml", tmp_path, edit, "Pulumi.dws.yaml")


_until = functools.partial(waiting.until, wait=WAIT)
"""Wait for what the cluster does in its own time (tests/support/waiting.py)."""


def _workload(client: Client, namespace: str) -> dict[str, Any] | None:
    items = client.list(KUEUE, "Workload", namespace)
    return items[0] if items else None


def _condition(obj: dict[str, Any] | None, kind: str) -> str | None:
    return next((c["status"] for c in conditions_of(obj) if c["type"] == kind), None)


def test_a_job_on_a_queued_pool_waits_for_its_nodes_and_is_admitted_whole_once_they_are_provisioned(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    rendered = render(resolve_file(_variant(tmp_path)))
    (workload,) = rendered.workloads
    namespace = workload.plan.namespace
    assert simulation.pool_sizes(rendered, None) == {"a3": 0}, "the queued pool starts empty"
    with simulation.running(rendered, tmp_path / "run", plane=control_plane()) as cluster:
        client = cluster.client
        assert cluster.provisioner is not None and cluster.notes and "stand-in" in cluster.notes[0]
        cluster.provisioner.pause()
        assert apply.apply_awaiting(client, list(workload.objects))

        # Kueue reserves the quota and asks for the nodes, then waits: no nodes, no pods, the check Pending.
        requests = _until(
            "a ProvisioningRequest",
            lambda: client.list("autoscaling.x-k8s.io/v1", "ProvisioningRequest", namespace),
        )
        (request,) = requests
        assert request["spec"]["provisioningClassName"] == "queued-provisioning.gke.io"
        (pod_set,) = request["spec"]["podSets"]
        assert pod_set["count"] == 2, "the two workers; the launcher needs no GPU and stays out (kueue#2260)"
        template = client.get(client.resource("v1", "PodTemplate").path(namespace, pod_set["podTemplateRef"]["name"]))
        assert template is not None
        spec = template["template"]["spec"]
        assert {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in (
            spec["tolerations"]
        )
        _until("the job's Workload made", lambda: _workload(client, namespace))
        _until("quota reserved", lambda: _condition(_workload(client, namespace), "QuotaReserved") == "True")
        time.sleep(3)  # a moment in which nothing would have answered
        held = _workload(client, namespace)
        assert _condition(held, "Admitted") != "True"
        (check,) = status_of(held)["admissionChecks"]
        assert (check["name"], check["state"]) == (CHECK, "Pending")
        assert not [n for n in client.list("v1", "Node") if n["metadata"]["name"].startswith("a3-")]
        pods = client.list("v1", "Pod", namespace)
        reason = simulation._why_waiting(cluster, workload, pods)
        assert f"Kueue: admission check {CHECK} Pending" in reason, reason

        # Answered, the job is admitted whole: workers on the two new a3 nodes, the launcher on a CPU node.
        cluster.provisioner.resume()
        placed = simulation.place(cluster, workload, WAIT)
        assert placed.whole, placed.reason
        assert placed.gang == "admitted"
        assert sorted(n for n in placed.nodes if n.startswith("a3-")) == ["a3-0", "a3-1"]
        assert [n for n in placed.nodes if n.startswith("cpu-")], "the launcher runs on a CPU node"
        (answered,) = client.list("autoscaling.x-k8s.io/v1", "ProvisioningRequest", namespace)
        assert _condition(answered, "Provisioned") == "True"
        (check,) = status_of(_workload(client, namespace))["admissionChecks"]
        assert check["state"] == "Ready"
        assert not cluster.provisioner.errors
