"""simulate's own assumptions about a stack's nodes, on the real control plane: where a figure is published or stated,
nodes are shaped by it and the job is placed; where simulate had to assume one and the job does not fit it, the report
says the assumption held the job, not the stack, and names the figure that decided it.

Two stacks a user tried: an 8-node job that must fit one GKE sub-block (sub-blocks were once 4 nodes here, and what
the user read was Kueue's last flavor), and 1000Gi workers on an existing cluster's H100 pool with no instanceType
(whose nodes were assumed to have 512Gi).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.render import Rendered, render
from components.resolution import resolve_file
from components.simulate import simulation
from components.simulate.report import Report
from tests.support import jobs

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WIDE = 8
"""The job's nodes, all in one sub-block."""
TIMEOUT = 90.0
HELD = 20.0
"""How long a job that cannot fit is watched staying unplaced."""
SUBBLOCK = "cloud.google.com/gce-topology-subblock"


def _gke(tmp_path: Path) -> Rendered:
    """gke with 16 nodes in its pool and one job of WIDE nodes required in one sub-block."""
    doc = yaml.safe_load((REPO / "Pulumi.gke.yaml").read_text())
    config = doc["config"]
    config["gpu-training:nodePools"][0]["maxNodes"] = 2 * WIDE
    config["gpu-training:scheduler"]["queues"][0]["gpus"] = 2 * WIDE * 8
    config["gpu-training:trainingOperator"] = {"enabled": False, "mpi": False}
    topology = {"mode": "required", "level": "subblock"}
    config["gpu-training:jobs"] = [jobs.indexed("wide", WIDE, topology=topology, scheduler={"queue": "research"})]
    return _write(tmp_path, "gke", doc)


def _existing(tmp_path: Path, pool: Callable[[dict[str, Any]], None]) -> Rendered:
    """An existing cluster's H100 pool without instanceType, and a job whose two workers ask 1000Gi each."""
    spec: dict[str, Any] = {
        "name": "h100",
        "gpusPerNode": 8,
        "maxNodes": 2,
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
    }
    pool(spec)
    doc = {
        "config": {
            "gpu-training:cluster": {"provider": "existing", "name": "lab", "context": "lab"},
            "gpu-training:nodePools": [spec],
            "gpu-training:scheduler": {"type": "none"},
            "gpu-training:trainingOperator": {"enabled": False, "mpi": False},
            "gpu-training:jobs": [jobs.indexed("big", 2, resources={"memory": "1000Gi"})],
        }
    }
    return _write(tmp_path, "lab", doc)


def _write(tmp_path: Path, stack: str, doc: dict[str, Any]) -> Rendered:
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return render(resolve_file(path))


def _report(cluster: simulation.Cluster, placement: simulation.Placement) -> str:
    stack = cluster.rendered.stack
    return Report(
        stack="t", scheduler=stack.scheduler, kubeconfig="-", nodes={}, controllers=cluster.controllers,
        notes=cluster.notes, placements=[placement],
    ).table()  # fmt: skip


def test_an_eight_node_job_required_in_one_gke_sub_block_fits_simulates_sub_block(
    control_plane, binaries, kwok_binary, tmp_path
):
    rendered = _gke(tmp_path)
    [workload] = rendered.workloads
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=2 * WIDE, plane=control_plane()) as cluster:
        placement = simulation.place(cluster, workload, TIMEOUT)
        assert placement.whole, placement
        labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in cluster.client.list("v1", "Node")}
        assert len({labels[n][SUBBLOCK] for n in placement.nodes if not n.startswith("cpu-")}) == 1
        # The sub-block's size is assumed for A3 Mega (Google publishes none), and the report says so.
        assert any(n.startswith("assumed: pool a3: topology domains") and "subblock of 16" in n for n in cluster.notes)


def test_a_job_held_by_the_assumed_sub_block_size_is_reported_as_simulates_assumption(
    control_plane, binaries, kwok_binary, tmp_path, small_domains
):
    rendered = _gke(tmp_path)
    [workload] = rendered.workloads
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=2 * WIDE, plane=control_plane()) as cluster:
        placement = simulation.place(cluster, workload, HELD)
        assert placement.bound == 0 and placement.assumed, placement
        assert placement.reason.startswith(f"the job needs {WIDE} nodes in one subblock, and a subblock of pool a3 "
                                           "holds 4 (simulate's assumption"), placement.reason  # fmt: skip
        assert "Kueue:" in placement.reason, "the cluster's own words follow what decided it"
        text = _report(cluster, placement)
    assert "NOT SCHEDULED (simulate's assumption)" in text
    assert "training/wide: simulate's assumption, not the stack: the job needs 8 nodes in one subblock" in text


def test_workers_beyond_an_unknown_machines_assumed_memory_are_reported_as_simulates_assumption(
    control_plane, binaries, kwok_binary, tmp_path
):
    rendered = _existing(tmp_path, lambda spec: None)
    [workload] = rendered.workloads
    with simulation.running(rendered, tmp_path / "cluster", plane=control_plane()) as cluster:
        assert any("a node's allocatable cpu 64 and memory 512Gi" in n for n in cluster.notes), cluster.notes
        placement = simulation.place(cluster, workload, HELD)
        assert placement.bound == 0 and placement.assumed, placement
        assert "request memory 1000Gi, more than the 512Gi of a node of pool h100" in placement.reason
        assert "state nodePools[].allocatable.memory" in placement.reason
        assert "Insufficient memory" in placement.reason, "the scheduler's words follow"
        text = _report(cluster, placement)
    assert "NOT SCHEDULED (simulate's assumption)" in text


def test_workers_fit_the_allocatable_an_unknown_machines_pool_states(control_plane, binaries, kwok_binary, tmp_path):
    rendered = _existing(tmp_path, lambda spec: spec.update(allocatable={"cpu": "190", "memory": "1900Gi"}))
    [workload] = rendered.workloads
    with simulation.running(rendered, tmp_path / "cluster", plane=control_plane()) as cluster:
        assert not [n for n in cluster.notes if n.startswith("assumed:")], cluster.notes
        placement = simulation.place(cluster, workload, TIMEOUT)
        assert placement.whole, placement
