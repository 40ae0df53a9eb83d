"""Topology-aware placement on the real schedulers: Kueue's TAS on the gke stack, Volcano's HyperNodes on prod.

Each stack runs on eight fake nodes per pool, which nodes.py labels, with simulate's assumed domain sizes made small
(the small_domains fixture), in sub-blocks of four inside blocks of eight (on EKS: layer-3 domains of four inside a
layer-2 of eight), so keeping a job in one domain is a choice the scheduler makes. Jobs of four nodes fit one finest domain; jobs of five do not. Every assertion reads the
cluster: the labels of the nodes the pods were bound to, Kueue's Workloads, Volcano's PodGroups and HyperNodes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.render import Rendered, Workload, render
from components.resolution import resolve_file
from components.simulate import simulation
from components.simulate.client import Client
from tests.support import jobs, waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
NODES = 8
"""Two finest domains of four (small_domains)."""
FITS, SPANS = 4, 5
"""A job of FITS nodes fits one finest domain; one of SPANS nodes needs two."""
TIMEOUT = 60.0
DISCOVERY_TIMEOUT = 180.0
"""Volcano's label discovery rebuilds the HyperNodes on its own period; on a loaded 2-core machine (CI, with the
engine tier beside it) the whole pool took longer than a minute to appear."""
HELD = 20.0
"""How long a job that cannot fit is watched staying unplaced: many of either scheduler's cycles."""
HYPERNODE = "topology.volcano.sh/v1alpha1"


def _variant(stack: str, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Rendered:
    return render(resolve_file(variant(REPO / f"Pulumi.{stack}.yaml", tmp_path, edit)))


def _job(name: str, nodes: int, mode: str, level: str, **extra: Any) -> dict[str, Any]:
    return jobs.indexed(name, nodes, topology={"mode": mode, "level": level}, **extra)


def _workload(rendered: Rendered, name: str) -> Workload:
    return next(w for w in rendered.workloads if w.plan.name == name)


def _domains(client: Client, placed: list[str], label: str) -> set[str]:
    """The `label` values of the nodes the job's GPU pods were bound to."""
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in client.list("v1", "Node")}
    assert all(label in labels[n] for n in placed), f"nodes without {label}: {placed}"
    return {labels[n][label] for n in placed}


def _gpu_nodes(placement: simulation.Placement) -> list[str]:
    return [n for n in placement.nodes if not n.startswith("cpu-")]


def _place(cluster: simulation.Cluster, workload: Workload, timeout: float = TIMEOUT) -> simulation.Placement:
    placement = simulation.place(cluster, workload, timeout)
    assert placement.whole, placement
    assert len(_gpu_nodes(placement)) == workload.plan.nodes, placement
    return placement


def _held(cluster: simulation.Cluster, workload: Workload) -> simulation.Placement:
    """The job placed not at all for HELD seconds (never in part), with the cluster's reason."""
    placement = simulation.place(cluster, workload, HELD)
    assert placement.bound == 0, f"{placement.job} partly placed: {placement}"
    assert placement.reason, placement
    return placement


def test_kueue_keeps_a_job_in_one_sub_block_required_or_preferred_and_spans_two_only_when_preferred(
    control_plane, binaries, kwok_binary, tmp_path, small_domains
) -> None:
    """gke under Kueue's TAS: its fine-tune (required, one sub-block) and jobs like it, as Indexed Jobs (no operator
    runs here; test_kueue.py admits the stack's own PyTorchJob)."""
    level = "subblock"

    def edit(config: dict[str, Any]) -> None:
        config["gpu-training:nodePools"][0]["maxNodes"] = NODES
        config["gpu-training:scheduler"]["queues"][0]["gpus"] = NODES * 8  # quota is not what holds a job
        config["gpu-training:trainingOperator"] = {"enabled": False, "mpi": False}
        [gemma] = config["gpu-training:jobs"]
        assert gemma["topology"] == {"mode": "required", "level": level}
        gemma |= {"launcher": "indexed", "nodes": FITS}
        queue = {"scheduler": {"queue": "research"}}
        config["gpu-training:jobs"] = [
            gemma,
            _job("preferred-fits", FITS, "preferred", level, **queue),
            _job("required-spans", SPANS, "required", level, **queue),
            _job("preferred-spans", SPANS, "preferred", level, **queue),
        ]

    rendered = _variant("gke", tmp_path, edit)
    topology = next(o for o in rendered.objects if o["kind"] == "Topology")
    labels = {lvl["nodeLabel"] for lvl in topology["spec"]["levels"]}
    subblock = _workload(rendered, "gemma-finetune").plan.placement.level.node_label
    block = next(lvl.node_label for lvl in _workload(rendered, "gemma-finetune").plan.pool.topology.levels)
    assert {subblock, block} <= labels
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=NODES, plane=control_plane()) as cluster:
        client = cluster.client
        assert len(_domains(client, [f"a3-{i}" for i in range(NODES)], subblock)) == 2

        for name in ("gemma-finetune", "preferred-fits"):
            workload = _workload(rendered, name)
            placement = _place(cluster, workload)
            assert placement.gang == "admitted"
            assert len(_domains(client, _gpu_nodes(placement), subblock)) == 1, f"{name} spans sub-blocks"
            simulation.remove(cluster, workload)

        held = _held(cluster, _workload(rendered, "required-spans"))
        assert held.gang == "pending", held
        # Kueue names the flavor it tried last: the pool's (its topology cannot fit the pods) or the CPU pods'
        # default flavor (no topology at all); either way topology, not quota, holds it (the same size preferred
        # is admitted below).
        assert "Kueue:" in held.reason and "topology" in held.reason.lower(), held.reason
        # What decided it comes first, as one of simulate's assumptions: the sub-block's size.
        assert held.assumed and held.reason.startswith(f"the job needs {SPANS} nodes in one {level}"), held.reason
        simulation.remove(cluster, _workload(rendered, "required-spans"))

        placement = _place(cluster, _workload(rendered, "preferred-spans"))
        assert len(_domains(client, _gpu_nodes(placement), subblock)) == 2
        assert len(_domains(client, _gpu_nodes(placement), block)) == 1, "not beyond the block it fits"


def _hypernodes(client: Client) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = {}
    for item in client.list(HYPERNODE, "HyperNode"):
        found.setdefault(int(item["spec"]["tier"]), []).append(item)
    return found


def _domains_of_tier(client: Client, tier: int) -> list[list[str]]:
    """The nodes under each distinct HyperNode of `tier`, sorted. Volcano's label discovery sometimes makes
    the HyperNodes twice as nodes join at once (simulate/hypernodes.py), until simulation.place repairs the
    tree; the domains are what placement is judged by, so a copy counts once."""
    found = _hypernodes(client)
    by_name = {h["metadata"]["name"]: h for hs in found.values() for h in hs}

    def nodes(hypernode: dict[str, Any]) -> set[str]:
        under: set[str] = set()
        for member in hypernode["spec"]["members"]:
            name = member["selector"]["exactMatch"]["name"]
            if member["type"] == "Node":
                under.add(name)
            elif name in by_name:
                under |= nodes(by_name[name])
        return under

    return [list(domain) for domain in sorted({tuple(sorted(nodes(h))) for h in found.get(tier, [])})]


_until = functools.partial(waiting.until, wait=TIMEOUT)
"""Wait for what the cluster does in its own time (tests/support/waiting.py)."""


def test_volcano_discovers_hypernodes_and_keeps_a_job_in_one_as_its_podgroup_says(
    control_plane, binaries, kwok_binary, tmp_path, small_domains
) -> None:
    """prod with topology on: HyperNodes from the EKS layer labels, and Indexed Jobs and a TrainJob whose
    PodGroups carry a hard or soft networkTopology at layer-3 (tier 1)."""
    level = "layer-3"

    def edit(config: dict[str, Any]) -> None:
        config["gpu-training:nodePools"][0]["maxNodes"] = NODES
        # A node group: simulate's stand-in makes the whole pool before the jobs, so discovery is seen on all of it
        # (a Karpenter pool starts empty).
        config["gpu-training:nodePools"][0]["provisioner"] = "nodegroup"
        config["gpu-training:scheduler"]["topology"] = {"enabled": True}
        config["gpu-training:trainingOperator"] = {"enabled": False, "mpi": False}
        config["gpu-training:trainer"] = {"enabled": True}
        queue = {"scheduler": {"queue": "pretraining"}, "resources": {"memory": "32000Mi"}}
        config["gpu-training:jobs"] = [
            _job("required-fits", FITS, "required", level, **queue),
            _job("preferred-fits", FITS, "preferred", level, **queue),
            _job("trainjob-fits", FITS, "required", level, launcher="trainjob", **queue),
            _job("required-spans", SPANS, "required", level, **queue),
            _job("preferred-spans", SPANS, "preferred", level, **queue),
        ]

    rendered = _variant("prod", tmp_path, edit)
    pool = _workload(rendered, "required-fits").plan.pool
    assert pool.topology is not None
    finest = pool.topology.level(level).node_label
    above = pool.topology.level("layer-2").node_label
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=NODES, plane=control_plane()) as cluster:
        client = cluster.client
        # The controller's label discovery, configured by the stack's Volcano values: tier 1 is layer-3.
        # Discovery adds nodes as its informer sees them: wait for the whole pool.
        expected = [[f"p5-{i}" for i in range(4)], [f"p5-{i}" for i in range(4, 8)]]
        tiers = _until(
            "two tier-1 HyperNodes of four nodes each, one tier-2 HyperNode above both",
            lambda: (
                _domains_of_tier(client, 1) == expected
                and _domains_of_tier(client, 2) == [expected[0] + expected[1]]
                and _hypernodes(client)
            ),
            lambda: {t: [h["spec"] for h in hs] for t, hs in _hypernodes(client).items()},
            wait=DISCOVERY_TIMEOUT,
        )
        assert {h["spec"]["tierName"] for h in tiers[1]} == {finest}
        assert {h["spec"]["tierName"] for h in tiers[2]} == {above}

        for name in ("required-fits", "preferred-fits", "trainjob-fits"):
            workload = _workload(rendered, name)
            placement = _place(cluster, workload)
            assert placement.gang == "Running", placement
            assert len(_domains(client, _gpu_nodes(placement), finest)) == 1, f"{name} spans {level} domains"
            simulation.remove(cluster, workload)

        held = _held(cluster, _workload(rendered, "required-spans"))
        assert held.gang in ("Pending", "Inqueue"), held
        assert "Volcano:" in held.reason and "hyperNode" in held.reason, held.reason
        assert held.assumed and held.reason.startswith(f"the job needs {SPANS} nodes in one {level}"), held.reason
        simulation.remove(cluster, _workload(rendered, "required-spans"))

        placement = _place(cluster, _workload(rendered, "preferred-spans"))
        assert len(_domains(client, _gpu_nodes(placement), finest)) == 2
        assert len(_domains(client, _gpu_nodes(placement), above)) == 1
