"""Rack-scale NVLink on the real controllers: a GB200 job's ComputeDomain, its IMEX channel claims, one domain.

dev's platform with a GB200 NVL72 pool instead of its H100 one: four kwok nodes in two NVLink domains of two
(components/simulate/nodes.py labels them `nvidia.com/gpu.clique` as GPU Feature Discovery does). The NVIDIA DRA
driver's real ComputeDomain controller makes each job's channel ResourceClaimTemplate, the controller manager
makes each pod's claim from it, and the scheduler allocates it on the node the pod lands on from the devices the
driver's kubelet plugin would publish (simulate/dra_driver.py). With one free node per domain, a 2-node job waits:
without its pod affinity
the scheduler would take one free node in each domain.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from components import nvlink
from components.render import Rendered, Workload, render
from components.resolution import resolve_file
from components.simulate import simulation
from components.simulate.client import Client, status_of
from tests.support import waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
NODES, DOMAIN = 4, 2
TIMEOUT = 120.0
HELD = 20.0
"""How long a job that no one domain can hold is watched staying unplaced: many scheduling cycles."""


def _stack(tmp_path: Path, scheduler: str = "volcano") -> Rendered:
    def edit(config: dict[str, Any]) -> None:
        if scheduler == "none":
            config["gpu-training:scheduler"] = {"type": "none"}
            config["gpu-training:trainer"] = {"enabled": False}
        elif scheduler == "kueue":
            config["gpu-training:scheduler"] = {
                "type": "kueue",
                "queues": [{"name": "research", "gpus": NODES * 4}],
                "topology": {"enabled": True, "levels": [{"name": "row", "nodeLabel": "example.com/row"}]},
            }
            config["gpu-training:trainer"] = {"enabled": False}
        config["gpu-training:nodePools"] = [
            {
                "name": "gb200",
                "gpusPerNode": 4,
                "gpuModel": "NVIDIA GB200",
                "minNodes": NODES,
                "maxNodes": NODES,
                "nvlinkDomainNodes": DOMAIN,
                "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"},
            }
        ]
        job: dict[str, Any] = {"image": "registry.example.com/training:v2.0", "command": ["train.py"], "nodes": DOMAIN}
        if scheduler == "kueue":
            job["scheduler"] = {"queue": "research"}
        config["gpu-training:jobs"] = [
            {"name": "mnnvl-torch", "launcher": "pytorch", **job},
            {"name": "mnnvl-indexed", "launcher": "indexed", **job},
        ]

    return render(resolve_file(variant(REPO / "Pulumi.dev.yaml", tmp_path, edit, "Pulumi.gb200.yaml")))


def _workload(rendered: Rendered, name: str) -> Workload:
    return next(w for w in rendered.workloads if w.plan.name == name)


_until = functools.partial(waiting.until, wait=TIMEOUT, poll=1)
"""Wait for what the controllers and the scheduler do in their own time (tests/support/waiting.py)."""


def _claims(client: Client, job: str) -> list[dict[str, Any]]:
    """The channel claims of the job's pods, once every one is allocated."""
    pods = client.list("v1", "Pod", "training", selector=f"{nvlink.DOMAIN_LABEL}={job}")
    names = [s["resourceClaimName"] for p in pods for s in status_of(p).get("resourceClaimStatuses", [])]
    claims = [client.get(f"/apis/resource.k8s.io/v1/namespaces/training/resourceclaims/{n}") for n in names]
    return claims if len(claims) == DOMAIN and all(c and status_of(c).get("allocation") for c in claims) else []


def _blocked(client: Client, *nodes: str) -> dict[str, dict[str, Any]]:
    """Another team's pod on each of `nodes`, holding all its GPUs; by node."""
    blockers = {node: _blocker(node) for node in nodes}
    for blocker in blockers.values():
        client.apply(blocker)
    return blockers


def _blocker(node: str) -> dict[str, Any]:
    """A pod that another team runs on `node`, holding all its GPUs (bound by name, as a DaemonSet's would be)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"other-team-{node}", "namespace": "default"},
        "spec": {
            "nodeName": node,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "work",
                    "image": "registry.example.com/other:v1",
                    "resources": {"limits": {"nvidia.com/gpu": "4"}},
                }
            ],
        },
    }


def _one_domain(cluster: simulation.Cluster, workload: Workload, labels: dict[str, dict[str, str]]) -> list[str]:
    """Place the job: whole, in one NVLink domain, its channel template made by the controller and every pod's
    channel allocated on the node it runs on; the job's GPU nodes."""
    client, name = cluster.client, workload.plan.name
    placement = simulation.place(cluster, workload, TIMEOUT)
    assert placement.whole, placement
    gpu_nodes = [n for n in placement.nodes if not n.startswith("cpu-")]
    assert len(gpu_nodes) == DOMAIN, placement
    assert len({labels[n][nvlink.CLIQUE_LABEL] for n in gpu_nodes}) == 1, f"{name} spans NVLink domains"
    template = client.get(f"/apis/resource.k8s.io/v1/namespaces/training/resourceclaimtemplates/{name}-channel")
    assert template is not None, f"the controller made no channel template for {name}"
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == nvlink.CHANNEL_DEVICE_CLASS
    claims = _until(f"{name}'s channel claims allocated", lambda: _claims(client, name))
    allocated = {c["status"]["allocation"]["devices"]["results"][0]["pool"] for c in claims}
    assert allocated == set(gpu_nodes), (allocated, gpu_nodes)
    return gpu_nodes


def _labels(client: Client) -> dict[str, dict[str, str]]:
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in client.list("v1", "Node")}
    cliques = [labels[f"gb200-{i}"][nvlink.CLIQUE_LABEL] for i in range(NODES)]
    assert cliques[0] == cliques[1] != cliques[2] == cliques[3]
    return labels


def test_the_second_pod_waits_for_room_in_the_first_ones_nvlink_domain(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    """The default scheduler, no gang: with one free node in each domain, the job's first pod lands and the second
    waits, where the scheduler alone would take the free node of the other domain; once the first pod's domain has
    room, the second lands there, and the scheduler allocates each pod's channel on its node."""
    rendered = _stack(tmp_path, scheduler="none")
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=NODES, plane=control_plane()) as cluster:
        client = cluster.client
        labels = _labels(client)
        blockers = _blocked(client, "gb200-1", "gb200-2")
        indexed = _workload(rendered, "mnnvl-indexed")
        held = simulation.place(cluster, indexed, HELD)
        assert held.bound == 1, f"the job's pods should wait for one domain: {held}"
        (first,) = held.nodes
        room = "gb200-1" if labels[first][nvlink.CLIQUE_LABEL] == labels["gb200-0"][nvlink.CLIQUE_LABEL] else "gb200-2"
        client.delete(blockers[room], propagation="Background")
        assert room in _one_domain(cluster, indexed, labels)


def test_volcano_places_each_gang_in_one_domain_with_its_channels(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    """dev's Volcano, gang-scheduling two 2-node jobs on four nodes: each takes one domain, and Volcano allocates
    the channels (its DRA predicate, which the stack turns on)."""
    rendered = _stack(tmp_path)
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=NODES, plane=control_plane()) as cluster:
        labels = _labels(cluster.client)
        used = [_one_domain(cluster, _workload(rendered, name), labels) for name in ("mnnvl-indexed", "mnnvl-torch")]
        assert sorted(n for nodes in used for n in nodes) == [f"gb200-{i}" for i in range(NODES)]


def test_kueue_admits_a_domain_job_only_where_one_nvlink_domain_has_room(
    control_plane, binaries, kwok_binary, tmp_path
) -> None:
    """Kueue's topology-aware scheduling, required at the pool's nvlink level: with one free node in each domain
    the job is not admitted (never partly placed); once a domain has room it is admitted there whole."""
    rendered = _stack(tmp_path, scheduler="kueue")
    indexed = _workload(rendered, "mnnvl-indexed")
    placement = indexed.plan.placement
    assert placement is not None and (placement.mode, placement.level.node_label) == ("required", nvlink.CLIQUE_LABEL)
    topology = next(o for o in rendered.objects if o["kind"] == "Topology")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == [
        "example.com/row",
        nvlink.CLIQUE_LABEL,
        "kubernetes.io/hostname",
    ]
    with simulation.running(rendered, tmp_path / "cluster", nodes_per_pool=NODES, plane=control_plane()) as cluster:
        client = cluster.client
        labels = _labels(client)
        blockers = _blocked(client, "gb200-1", "gb200-2")
        held = simulation.place(cluster, indexed, HELD)
        assert held.bound == 0, f"admitted across NVLink domains: {held}"
        client.delete(blockers["gb200-1"], propagation="Background")
        assert sorted(_one_domain(cluster, indexed, labels)) == ["gb200-0", "gb200-1"]
