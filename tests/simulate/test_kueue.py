"""Kueue on the gke stack: the real Kueue, configured by the stack's Helm values, admits what `render` emits.

The Training Operator is not part of this test, so the stack's job is launched here as an Indexed Job (still
queued to the stack's LocalQueue, still asking for one topology sub-block): Kueue's webhook suspends it on
creation, Kueue admits its Workload against the stack's ClusterQueue and Topology, unsuspends it, and the real
kube-scheduler binds its pods to the kwok nodes Kueue chose. The stack's own PyTorchJob is admitted the same
way by Kueue's PyTorchJob integration (no operator runs, so no pods follow). Every assertion reads the
cluster: the queues' and Workloads' status, the Job, its pods and their nodes' labels.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components import quantity
from components.render import Rendered, render
from components.resolution import resolve_file
from components.simulate import apply, controlplane, engines, kueue, nodes, volumes
from components.simulate.client import Client, conditions_of
from components.stack import Stack
from components.wellknown import POOL_LABEL
from tests.simulate.conftest import _unavailable, cluster_of, indexed_variant
from tests.support import diagnosis, waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
GKE = REPO / "Pulumi.gke.yaml"
NODES = 8
"""Twice the pool's four nodes: two sub-blocks of four (simulate's assumed sizes made small: small_domains), so that
keeping a job in one of them is a choice Kueue makes."""
WAIT = 120.0
KUEUE = "kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
HOSTNAME = "kubernetes.io/hostname"
JOB_KINDS = ("Job", "PyTorchJob")
ONLY_OTHER_LAUNCHERS = ("elastic", "runtime", "deepspeed", "trainingRuntime")


@pytest.fixture(scope="session")
def kueue_binary(binaries: dict[str, Path]) -> Path:
    """Kueue, built from its pinned module (cached after the first run)."""
    try:
        return engines.build(kueue.ENGINE)["kueue"]
    except engines.BuildError as exc:
        _unavailable(f"could not build Kueue: {exc}")
        raise


def _with_indexed_jobs(stack_file: Path, tmp_path: Path) -> Stack:
    """The stack with every job launched as an Indexed Job, keeping its scheduler, queue and topology."""
    return indexed_variant(stack_file, tmp_path, ONLY_OTHER_LAUNCHERS, gang=True)


def _kueue_cluster(
    start: Callable[[], controlplane.ControlPlane], kwok_binary: Path, definitions: list[dict[str, Any]], stack: Stack
) -> tuple[controlplane.ControlPlane, Client, Rendered]:
    """A cluster shaped like the stack with Kueue running and the stack's non-job objects applied."""
    plane = cluster_of(start, kwok_binary, definitions, stack, NODES)
    client = plane.client()
    for pool in stack.pools.values():
        for node in nodes.pool_nodes(pool, NODES):
            client.apply(node)
    rendered = render(stack)
    assert kueue.installed(rendered)
    kueue.start(plane, rendered)
    objects = list(rendered.objects)
    rest = apply.apply_all(client, [o for o in objects if o["kind"] not in JOB_KINDS] + volumes.stand_ins(objects))
    refused = [f"{o.key}: {o.message}" for o in rest if not o.accepted and not o.skipped]
    assert not refused, refused
    return plane, client, rendered


def _condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    conditions = conditions_of(obj)
    return next((c for c in conditions if c["type"] == kind), {})


def _wait(what: str, check: Callable[[], Any], plane: controlplane.ControlPlane, client: Client) -> Any:
    """`check()`'s first truthy value within WAIT seconds; else the test fails with Kueue's log and events (and at
    once if a process of the plane exits)."""

    def seen() -> str:
        return diagnosis.events(client, "training", 10) + "\n" + diagnosis.logs(plane, "kueue", lines=30)

    return waiting.until(what, check, seen, wait=WAIT, plane=plane)


def _workload_of(client: Client, owner: dict[str, Any]) -> dict[str, Any] | None:
    """The Workload Kueue made for `owner` (as stored), if any yet."""
    namespace, uid = owner["metadata"]["namespace"], owner["metadata"]["uid"]
    return next(
        (
            w
            for w in client.list(KUEUE, "Workload", namespace)
            if any(ref["uid"] == uid for ref in w["metadata"].get("ownerReferences", []))
        ),
        None,
    )


def _admitted(client: Client, owner: dict[str, Any]) -> dict[str, Any] | None:
    workload = _workload_of(client, owner)
    return workload if _condition(workload, "Admitted").get("status") == "True" else None


def _pods(client: Client, job: dict[str, Any]) -> list[dict[str, Any]]:
    name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    return client.list("v1", "Pod", namespace, f"batch.kubernetes.io/job-name={name}")


def _cluster_queues_active(client: Client, rendered: Rendered) -> bool:
    names = [o["metadata"]["name"] for o in rendered.objects if o["kind"] == "ClusterQueue"]
    assert names, "the stack has ClusterQueues"
    return all(
        _condition(client.get(f"/apis/{KUEUE}/clusterqueues/{n}"), "Active").get("status") == "True" for n in names
    )


def test_kueue_admits_the_stacks_job_into_one_topology_domain_and_holds_one_beyond_its_quota(
    control_plane, kwok_binary, definitions, kueue_binary, tmp_path, small_domains
) -> None:
    stack = _with_indexed_jobs(GKE, tmp_path)
    plane, client, rendered = _kueue_cluster(control_plane, kwok_binary, definitions, stack)
    _wait("the stack's ClusterQueues Active", lambda: _cluster_queues_active(client, rendered), plane, client)

    job = next(o for o in rendered.objects if o["kind"] == "Job")
    template = job["spec"]["template"]
    topology = next(o for o in rendered.objects if o["kind"] == "Topology")
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    local_queues = [o["metadata"]["name"] for o in rendered.objects if o["kind"] == "LocalQueue"]
    assert job["metadata"]["labels"][QUEUE_LABEL] in local_queues
    level = template["metadata"]["annotations"][REQUIRED_TOPOLOGY]
    assert level in levels
    pool = template["metadata"]["labels"][POOL_LABEL]

    stored = client.apply(job)
    assert stored["spec"].get("suspend") is True, "Kueue's webhook suspends a queued job on creation"
    workload = _wait("the job's Workload admitted", lambda: _admitted(client, stored), plane, client)
    [assignment] = workload["status"]["admission"]["podSetAssignments"]
    assert assignment["flavors"]["nvidia.com/gpu"] == pool
    assert assignment.get("topologyAssignment"), "Kueue placed the job by topology"
    _wait(
        "the job unsuspended",
        lambda: (client.get(client.path_of(job)) or {}).get("spec", {}).get("suspend") is False,
        plane,
        client,
    )
    count = job["spec"]["parallelism"]
    pods = _wait(
        f"{count} pods Running",
        lambda: (
            (p := _pods(client, job))
            and len(p) == count
            and all(x["status"].get("phase") == "Running" for x in p)
            and p
        ),
        plane,
        client,
    )
    placed = {p["spec"]["nodeName"] for p in pods}
    assert len(placed) == count, "one worker per node"
    node_labels = {n: client.get(f"/api/v1/nodes/{n}")["metadata"]["labels"] for n in placed}
    assert all(labels.get(POOL_LABEL) == pool for labels in node_labels.values()), f"left pool {pool}: {placed}"
    assert len({labels[level] for labels in node_labels.values()}) == 1, f"spans {level} domains: {node_labels}"
    # Kueue's topology-aware scheduling, not the scheduler's spreading, chose the nodes: it pins each pod to one.
    assert all(p["spec"].get("nodeSelector", {}).get(HOSTNAME) == p["spec"]["nodeName"] for p in pods), [
        p["spec"].get("nodeSelector") for p in pods
    ]
    client.delete(job)
    _wait(
        "the job and its Workload gone",
        lambda: not _pods(client, job) and not _workload_of(client, stored),
        plane,
        client,
    )

    too_big = copy.deepcopy(job)
    too_big["metadata"]["name"] = f"{job['metadata']['name']}-too-big"
    gpus = sum(int(c["resources"]["requests"].get("nvidia.com/gpu", 0)) for c in template["spec"]["containers"])
    quota = sum(
        int(quantity.parse(r["nominalQuota"]))  # written as Kubernetes stores it: 1k GPUs is "1k"
        for o in rendered.objects
        if o["kind"] == "ClusterQueue"
        for group in o["spec"]["resourceGroups"]
        for flavor in group["flavors"]
        if flavor["name"] == pool
        for r in flavor["resources"]
        if r["name"] == "nvidia.com/gpu"
    )
    workers = quota // gpus + 1
    too_big["spec"]["parallelism"] = too_big["spec"]["completions"] = workers
    stored = client.apply(too_big)
    pending = _wait(
        "a Workload beyond the quota held with Kueue's reason",
        lambda: (
            "insufficient quota" in _condition(_workload_of(client, stored), "QuotaReserved").get("message", "")
            and _workload_of(client, stored)
        ),
        plane,
        client,
    )
    assert _condition(pending, "Admitted").get("status") != "True"
    assert (client.get(client.path_of(too_big)) or {})["spec"]["suspend"] is True
    assert not _pods(client, too_big), "no pod of a job Kueue holds"


def test_kueue_admits_the_stacks_pytorchjob(control_plane, kwok_binary, definitions, kueue_binary, tmp_path) -> None:
    """Kueue's PyTorchJob integration, on because the stack runs the Training Operator for a job that names the
    legacy launcher: the job is queued, admitted and released to its operator."""
    stack = resolve_file(
        variant(GKE, tmp_path, lambda config: config["gpu-training:jobs"][0].update(launcher="pytorch"))
    )
    plane, client, rendered = _kueue_cluster(control_plane, kwok_binary, definitions, stack)
    _wait("the stack's ClusterQueues Active", lambda: _cluster_queues_active(client, rendered), plane, client)
    job = next(o for o in rendered.objects if o["kind"] == "PyTorchJob")
    stored = client.apply(job)
    assert stored["spec"]["runPolicy"].get("suspend") is True, "Kueue's webhook suspends a queued job on creation"
    workload = _wait("the PyTorchJob's Workload admitted", lambda: _admitted(client, stored), plane, client)
    replicas = {k.lower() for k in job["spec"]["pytorchReplicaSpecs"]}
    assert {a["name"] for a in workload["status"]["admission"]["podSetAssignments"]} == replicas
    _wait(
        "the PyTorchJob released",
        lambda: (client.get(client.path_of(job)) or {})["spec"]["runPolicy"].get("suspend") is False,
        plane,
        client,
    )
