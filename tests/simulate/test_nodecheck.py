"""The node check on the real control plane: new GPU nodes join under the startup taint (one under an earlier
release's key, as after an upgrade), the real DaemonSet controller puts the check on each, the verdict script
updates each node with the real kubectl as the check's own service account, and a job lands only on the nodes
that passed.

kwok plays the node: the check's pods run, but no GPU does; the verdict is given what a good node and a node
with an uncorrected ECC error record (tests/data/node-check), as node-check.sh's gathering steps would.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from components.nodecheck import CONDITION, FAILED_TAINT, LEGACY_TAINT, RESULT_LABEL, STARTUP_TAINT
from components.render import render
from components.resolution import resolve_file
from components.simulate import engines, simulation
from components.simulate.client import Client, conditions_of
from components.wellknown import NODE_CHECK_NAMESPACE as NAMESPACE
from tests.support import verdict, waiting

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0
JOB = "nccl-allreduce"


_wait = functools.partial(waiting.until, wait=WAIT)
"""Wait for what the cluster does in its own time (tests/support/waiting.py)."""


def _check_pods(client: Client) -> dict[str, dict[str, Any]]:
    """The node check's pods by node."""
    return {p["spec"].get("nodeName", ""): p for p in client.list("v1", "Pod", NAMESPACE)}


def test_a_failed_node_is_held_and_the_job_lands_only_on_nodes_that_passed(control_plane, tmp_path: Path) -> None:
    kubectl = engines.build(engines.KUBECTL)["kubectl"]
    rendered = render(resolve_file(REPO / "Pulumi.dev.yaml"))
    env = verdict.verdict_env(next(o for o in rendered.objects if o["kind"] == "DaemonSet"))
    scripts = verdict.scripts(tmp_path / "scripts")
    workload = next(w for w in rendered.workloads if w.plan.name == JOB)

    with simulation.running(rendered, tmp_path / "cluster", 3, joining=True, plane=control_plane()) as cluster:
        client = cluster.client
        nodes = sorted(
            n["metadata"]["name"] for n in client.list("v1", "Node") if n["metadata"]["name"].startswith("h100-")
        )
        assert len(nodes) == 3
        pending = {"key": STARTUP_TAINT.key, "value": "pending", "effect": "NoSchedule"}
        legacy = {"key": LEGACY_TAINT.key, "value": "pending", "effect": "NoSchedule"}
        for name in nodes:
            taints = client.get(f"/api/v1/nodes/{name}")["spec"]["taints"]
            assert pending in taints
        # The last node joined before an upgrade, under the earlier release's key: it must not be stranded.
        upgraded = nodes[-1]
        taints = [t for t in client.get(f"/api/v1/nodes/{upgraded}")["spec"]["taints"] if t != pending]
        body = json.dumps({"spec": {"taints": [*taints, legacy]}}).encode()
        client.request("PATCH", f"/api/v1/nodes/{upgraded}", body, "application/merge-patch+json")

        # The real DaemonSet controller runs the check on every joining node, requesting nothing: an autoscaler
        # counts a DaemonSet's requests as overhead of every new node.
        pods = _wait("a running check on each node", lambda: (p := _check_pods(client)).keys() >= set(nodes) and p)
        for pod in pods.values():
            containers = [*pod["spec"]["initContainers"], *pod["spec"]["containers"]]
            assert not [c["name"] for c in containers if c.get("resources")], "the check requests nothing"

        failed, *passed = nodes
        bad = verdict.records(tmp_path / "bad", ecc_errors=3)
        own = verdict.service_account_kubeconfig(cluster.plane, tmp_path)
        out = verdict.verdict(failed, bad, own, scripts, env, kubectl)
        assert "FAIL node" in out and "3 uncorrected ECC errors" in out
        for name in passed:
            good = verdict.records(tmp_path / name)
            assert "PASS node" in verdict.verdict(name, good, own, scripts, env, kubectl)

        held = client.get(f"/api/v1/nodes/{failed}")
        assert held["metadata"]["labels"][RESULT_LABEL] == "failed"
        held_taints = held["spec"]["taints"]
        assert {"key": FAILED_TAINT.key, "value": FAILED_TAINT.value, "effect": FAILED_TAINT.effect} in held_taints
        assert not [t for t in held_taints if t["key"] == STARTUP_TAINT.key], "a failed node is no longer starting"
        condition = next(c for c in conditions_of(held) if c["type"] == CONDITION)
        assert (
            condition["status"] == "True"
            and "GPU 2 (00000000:73:00.0): 3 uncorrected ECC errors" in condition["message"]
        )
        assert "uncorrected ECC" in held["metadata"]["annotations"]["gpu-training/node-check-summary"]
        events = [e for e in client.list("v1", "Event", "default") if e["involvedObject"].get("name") == failed]
        assert events and events[0]["reason"] == CONDITION and events[0]["type"] == "Warning"
        for name in passed:
            node = client.get(f"/api/v1/nodes/{name}")
            assert node["metadata"]["labels"][RESULT_LABEL] == "passed"
            keys = {t["key"] for t in node["spec"].get("taints", [])}
            assert not keys & {STARTUP_TAINT.key, LEGACY_TAINT.key, FAILED_TAINT.key}, (name, keys)

        # A result ends the check on its node: the real DaemonSet controller deletes the pods, freeing the GPUs.
        _wait(
            "every check pod gone", lambda: not [p for p in _check_pods(client).values() if p["spec"].get("nodeName")]
        )

        placement = simulation.place(cluster, workload, WAIT)
        assert placement.whole, placement.reason
        gpu_nodes = {n for n in placement.nodes if n.startswith("h100-")}
        assert gpu_nodes == set(passed), f"the job must avoid {failed}: it landed on {placement.nodes}"
