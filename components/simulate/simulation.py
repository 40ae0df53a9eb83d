"""A stack on a simulated cluster: the real control plane, schedulers and operators, and kwok nodes shaped like its
pools; each of its jobs placed in turn, and what the cluster did with it.

What is real: the API server (schemas, defaults, CEL, webhooks), kube-scheduler, the gang schedulers and the
operators the stack installs, configured as the stack configures them, and Karpenter where the stack's pools are
Karpenter's (it makes their nodes through its KWOK provider). What is not: the cloud (other pools' nodes exist from
the start, as if their autoscaler had made them), device plugins and drivers (nodes advertise their resources directly),
the DaemonSets of the Helm add-ons, and the fabric itself (pods run, nothing in them does).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from components import quantity
from components.allocatable import allocatable, pod_requests
from components.manifests.meta import INSTANCE_LABEL
from components.podfit import pool_pods
from components.render import Rendered, Workload
from components.simulate import (
    apply,
    controlplane,
    crds,
    devices,
    dra_driver,
    engines,
    hypernodes,
    jobset,
    karpenter,
    kueue,
    kwok,
    mpi_operator,
    namespaces,
    nodes,
    runtimes,
    seed,
    trainer,
    training_operator,
    volcano,
    volumes,
)
from components.simulate.client import Client, conditions_of, status_of
from components.simulate.provisioner import Provisioner
from components.topology import domain_sizes

NOT_SIMULATED = (
    "the cloud: a pool's nodes exist from the start, as if its autoscaler had made them, but a Karpenter pool's, "
    "which the real Karpenter makes as its pods need them (with its KWOK provider: no EC2, our catalog's instance "
    "types), and a pool provisioned through ProvisioningRequests, whose nodes simulate's stand-in makes when it "
    "answers its requests",
    "device plugins and drivers: nodes advertise GPUs, EFA and RDMA devices directly",
    "the DaemonSets of the Helm add-ons (GPU Operator, Network Operator, Multus, CSI drivers)",
    "the fabric: pods run, but nothing runs in them (no NCCL, no bandwidth)",
)
"""What `simulate` does not simulate, said with every report."""

CONTROLLERS: tuple[ModuleType, ...] = (
    volcano,
    kueue,
    jobset,
    trainer,
    training_operator,
    mpi_operator,
    dra_driver,
    karpenter,
)
"""The controllers a stack may install, in the order the report lists them."""
NODE_CAP = 64
"""Fake nodes per pool at most, unless --nodes says otherwise: enough for every job we have seen planned."""
CPU_NODES = 2
"""Untainted nodes without GPUs, for the pods that need none (MPI launchers, controllers' helpers)."""
SETTLE = 0.2
SETTLE_TIME = 10.0
SETTLED = ("Running", "admitted", "-")
"""A placed job's gang status once its scheduler has caught up."""


@dataclass
class Cluster:
    """A running simulated cluster: its control plane, and the controllers started for the stack."""

    plane: controlplane.ControlPlane
    rendered: Rendered
    controllers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Versions that differ from the stack's pins, stand-ins that play a cloud's part, and why."""
    provisioner: Provisioner | None = None
    """The stand-in that answers the ProvisioningRequests of pools provisioned all at once, when the stack has one."""
    joiner: karpenter.Joiner | None = None
    """What labels and checks the nodes Karpenter makes, when the stack has Karpenter pools."""
    makers: dict[str, str] = field(default_factory=dict)
    """Pool -> what made its nodes: simulate's stand-in, or the real Karpenter."""

    @property
    def client(self) -> Client:
        """A client of the cluster's API server."""
        return self.plane.client()


@dataclass
class Placement:
    """What the cluster did with one job: its gang, its pods, where they landed, and why any wait."""

    job: str
    """namespace/name."""
    kind: str
    pool: str
    gate: bool
    expected: int
    """Pods the job runs at once (workers, and an MPI launcher)."""
    created: int = 0
    bound: int = 0
    nodes: list[str] = field(default_factory=list)
    off_pool: list[str] = field(default_factory=list)
    """Nodes outside the job's pool that got one of its GPU pods."""
    gang: str = "-"
    """Kueue: the Workload admitted or pending; Volcano: the PodGroup's phase; no gang scheduler: -."""
    seconds: float | None = None
    """From apply until every pod was bound."""
    reason: str = ""
    assumed: bool = False
    """What kept the job from its nodes is one of simulate's assumptions about them (a topology domain's size, an
    unknown machine's cpu or memory), not the stack: `reason` says which."""

    @property
    def whole(self) -> bool:
        """Every pod of the job bound, its GPU pods on its own pool."""
        return self.bound == self.expected and self.created == self.expected and not self.off_pool

    def as_dict(self) -> dict[str, Any]:
        """The placement for --format json."""
        return {
            "job": self.job,
            "kind": self.kind,
            "pool": self.pool,
            "fabricCheck": self.gate,
            "whole": self.whole,
            "gang": self.gang,
            "podsExpected": self.expected,
            "podsCreated": self.created,
            "podsBound": self.bound,
            "nodes": self.nodes,
            "offPool": self.off_pool,
            "secondsToSchedule": self.seconds,
            "reason": self.reason,
            "assumed": self.assumed,
        }


def engines_for(rendered: Rendered) -> list[engines.Engine]:
    """The engines a stack's simulation runs: the control plane, kwok, and each controller it installs."""
    return [engines.KUBERNETES, engines.KWOK, *(c.ENGINE for c in CONTROLLERS if c.installed(rendered))]


def build(rendered: Rendered, progress: Callable[[str], None]) -> dict[str, Path]:
    """Every binary the simulation needs, built into the cache on first use."""
    binaries: dict[str, Path] = {}
    for engine in engines_for(rendered):
        binaries |= engines.build(engine, progress)
    return binaries


def pool_sizes(rendered: Rendered, nodes_per_pool: int | None) -> dict[str, int]:
    """Fake nodes per pool at the start: `nodes_per_pool`, else the pool's maxNodes up to NODE_CAP; none for a pool
    provisioned all at once through ProvisioningRequests, whose nodes come when a job's request is answered, nor for a
    Karpenter pool, whose nodes Karpenter makes."""
    autoscaled = {pool.name for pool in karpenter.pools(rendered)}
    return {
        name: 0
        if pool.provisioning_class or name in autoscaled
        else nodes_per_pool
        if nodes_per_pool is not None
        else min(pool.max_nodes, NODE_CAP)
        for name, pool in rendered.stack.pools.items()
    }


STAND_IN = "simulate's stand-in"
MAKERS_NOTE = "pool {pool}: nodes made by {maker}"


def makers(rendered: Rendered) -> dict[str, str]:
    """Pool -> what makes its nodes in the simulation: the real Karpenter for its pools, else simulate's stand-in (at
    the start, or when it answers a ProvisioningRequest)."""
    real = {pool.name for pool in karpenter.pools(rendered)}
    return {
        name: f"{karpenter.made_by()}, none at the start"
        if name in real
        else f"{STAND_IN} for the autoscaler, when it answers a ProvisioningRequest"
        if pool.provisioning_class
        else f"{STAND_IN}, all at the start"
        for name, pool in rendered.stack.pools.items()
    }


PROVISIONER_NOTE = (
    "pool(s) {pools} start with no nodes: simulate's stand-in for the autoscaler answers their ProvisioningRequests "
    "({classes}) with kwok nodes, all at once within maxNodes; Kueue's admission check is real, the capacity is not"
)


@contextmanager
def running(
    rendered: Rendered,
    folder: Path,
    nodes_per_pool: int | None = None,
    progress: Callable[[str], None] = lambda _: None,
    keep: bool = False,
    *,
    with_platform: bool = True,
    checks_pass: bool = False,
    joining: bool = False,
    plane: controlplane.ControlPlane | None = None,
) -> Iterator[Cluster]:
    """A simulated cluster with the stack's platform applied (no jobs yet); stopped on exit unless `keep`.

    With `with_platform=False` it has the nodes, the CRDs, the controllers and a volume for each of the stack's
    claims, and nothing of the stack's own: what a stack finds when the platform team installs its add-ons
    another way (`addons.install: false`), ready for `pulumi up`. With `checks_pass`, the fabric checks' pods
    succeed once they run, as on a fabric that meets its floor. With `joining`, the pools' nodes come up as they
    join, under their node check's startup taint, instead of as once their check passed. With `plane`, on that
    running control plane as started from the seed (its caller stops it) instead of a new one in `folder`."""
    binaries = build(rendered, progress)
    own = plane is None
    if plane is None:
        plane = controlplane.start(folder, binaries, progress, seed=seed.etcd(binaries, seed.definitions(), progress))
    try:
        cluster = Cluster(plane, rendered)
        # The seed holds every CRD, and the API server is ready only once it serves them (crd-informer-synced).
        progress("starting kwok")
        kwok.start(plane, binaries["kwok"], checks_pass=checks_pass)
        client = plane.client()
        sizes = pool_sizes(rendered, nodes_per_pool)
        progress("making nodes: " + ", ".join(f"{n} x {name}" for name, n in sizes.items()) + f", {CPU_NODES} x cpu")
        for name, pool in rendered.stack.pools.items():
            for node in nodes.pool_nodes(pool, sizes[name], checked=not joining):
                client.apply(node)
        for node in nodes.cpu_nodes(CPU_NODES):
            client.apply(node)
        cluster.makers = makers(rendered)
        cluster.notes += [MAKERS_NOTE.format(pool=pool, maker=maker) for pool, maker in cluster.makers.items()]
        cluster.notes += [f"assumed: {said}" for p in rendered.stack.pools.values() for said in nodes.assumptions(p)]
        if autoscaled := karpenter.pools(rendered):
            cluster.joiner = karpenter.Joiner(plane.client, autoscaled, checked=not joining)
            cluster.joiner.start()
        devices.publish(client, rendered.stack.pools.values())
        stand_in = Provisioner(plane.client, rendered.stack.pools.values(), nodes_per_pool or NODE_CAP)
        if stand_in.serves:
            queued = [p for p in rendered.stack.pools.values() if p.provisioning_class]
            classes = sorted({str(p.provisioning_class) for p in queued})
            cluster.notes.append(
                PROVISIONER_NOTE.format(pools=", ".join(p.name for p in queued), classes=", ".join(classes))
            )
            stand_in.start()
            cluster.provisioner = stand_in
        start_controllers(cluster, progress)
        if not with_platform:
            # The add-ons installed elsewhere serve their CRDs (stand-ins where no module has them) and
            # provision the stack's claims (the storage driver).
            apply.install_crds(client, crds.stand_ins(list(rendered.objects)))
            stand_ins = [
                *namespaces.stand_ins(rendered),
                *volumes.stand_ins(list(rendered.objects)),
                *runtimes.stand_ins(rendered),
            ]
            apply.apply_all(client, stand_ins)
            yield cluster
            return
        progress("applying the stack's platform objects")
        jobs = {apply.key(o) for w in rendered.workloads for o in w.objects}
        # Karpenter's NodePools as rendered, but for the node class its KWOK provider serves.
        platform = karpenter.repointed([o for o in rendered.objects if apply.key(o) not in jobs])
        stand_ins = [
            *namespaces.stand_ins(rendered),
            *volumes.stand_ins(list(rendered.objects)),
            *runtimes.stand_ins(rendered),
        ]
        outcomes = apply.apply_all(client, [*platform, *stand_ins])
        refused = [f"{o.key}: {o.message}" for o in outcomes if not o.accepted and not o.skipped]
        if refused:
            raise apply.ApplyError("the API server refused the stack's objects:\n  " + "\n  ".join(refused))
        progress("waiting for the claims to bind and the queues to open")
        _wait_claims_bound(client)
        progress("claims bound")
        _wait_queues_open(client, platform)
        yield cluster
    finally:
        if cluster.provisioner is not None:
            cluster.provisioner.stop()
        if cluster.joiner is not None:
            cluster.joiner.stop()
        if own and not keep:
            plane.stop()


def start_controllers(cluster: Cluster, progress: Callable[[str], None]) -> None:
    """Start every controller the stack installs at once, each waiting for its own readiness; return once all are
    ready, or raise the first one's error. The one exception: a Training Operator without the MPI Operator replaces
    the MPIJob CRD (v2beta1 by its v1), so it starts first, and no other controller watches a kind being replaced.
    Every other CRD a start installs (Volcano's chart's, the Training Operator's schemes) is in the seed already."""
    installed = [c for c in CONTROLLERS if c.installed(cluster.rendered)]
    first = [training_operator] if training_operator in installed and mpi_operator not in installed else []
    for wave in (first, [c for c in installed if c not in first]):
        if not wave:
            continue
        with ThreadPoolExecutor(max_workers=len(wave)) as pool:
            started = [pool.submit(_start, c, cluster, progress) for c in wave]
            for future in started:
                future.result()
    for controller in installed:
        cluster.controllers.append(_label(controller))
        if controller.VERSION_NOTE:
            cluster.notes.append(controller.VERSION_NOTE)


def _label(controller: ModuleType) -> str:
    return controller.__name__.rpartition(".")[2].replace("_", "-")


def _start(controller: ModuleType, cluster: Cluster, progress: Callable[[str], None]) -> None:
    started = time.monotonic()
    label = _label(controller)
    progress(f"starting {label}")
    controller.start(cluster.plane, cluster.rendered, progress)
    progress(f"{label} ready in {time.monotonic() - started:.1f} s")


def _wait_claims_bound(client: Client, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while pending := [c for c in client.list("v1", "PersistentVolumeClaim") if status_of(c).get("phase") != "Bound"]:
        if time.monotonic() > deadline:
            names = ", ".join(f"{c['metadata']['namespace']}/{c['metadata']['name']}" for c in pending)
            raise apply.ApplyError(f"claims not bound to their stand-in volumes: {names}")
        time.sleep(SETTLE)


def _wait_queues_open(client: Client, objects: list[dict[str, Any]], timeout: float = 60.0) -> None:
    """Until Volcano has opened the stack's queues: its webhook refuses a PodGroup on a queue not yet Open, which
    a deploy meets too when a job follows its queue at once (the queue controller opens it shortly after)."""
    names = [
        o["metadata"]["name"]
        for o in objects
        if o["apiVersion"] == "scheduling.volcano.sh/v1beta1" and o["kind"] == "Queue"
    ]
    deadline = time.monotonic() + timeout
    while closed := [n for n in names if not volcano.queue_open(client, n)]:
        if time.monotonic() > deadline:
            raise apply.ApplyError(f"Volcano did not open queue(s) {', '.join(closed)} in {timeout:.0f} s")
        time.sleep(SETTLE)


def place(cluster: Cluster, workload: Workload, timeout: float) -> Placement:
    """Apply the job's objects and watch until its pods are all bound (or `timeout`): what the cluster did."""
    client = cluster.client
    top = workload.workload
    meta = top["metadata"]
    result = Placement(
        job=f"{meta['namespace']}/{meta['name']}",
        kind=top["kind"],
        pool=workload.plan.pool.name,
        gate=workload.gate,
        expected=workload.pods,
    )
    outcomes = apply.apply_awaiting(client, list(workload.objects))
    refused = [f"{o.key}: {o.message}" for o in outcomes if not o.accepted]
    if refused:
        result.reason = "refused by the API server: " + "; ".join(refused)
        return result
    started = time.monotonic()
    # Only where Volcano discovers HyperNodes (topology placement on) can its discovery race leave copies.
    config = cluster.rendered.stack.config
    discovers = cluster.rendered.stack.scheduler == "volcano" and config.scheduler.topology.enabled
    while True:
        if discovers and (deleted := hypernodes.repair(client)):
            cluster.notes.append(hypernodes.note(deleted))
        pods = _pods(client, workload)
        _observe(cluster, workload, pods, result)
        if result.whole and result.seconds is None:
            result.seconds = round(time.monotonic() - started, 1)
            result.reason = ""
        # Once placed, a moment more for the gang's own status to say so (Volcano's PodGroup turns Running
        # when its pods run), so the report shows what the scheduler settled on.
        if result.whole and (result.gang in SETTLED or time.monotonic() - started > result.seconds + SETTLE_TIME):
            return result
        if time.monotonic() - started > timeout:
            said = _why_waiting(cluster, workload, pods) or f"not scheduled whole in {timeout:.0f} s"
            decided = refusal(workload)
            if decided is None:
                result.reason = said
            else:
                # What decides it comes first; the schedulers' words (Kueue names the last flavor it tried) follow.
                reason, result.assumed = decided
                result.reason = f"{reason}; the cluster said: {said}"
            return result
        time.sleep(SETTLE)


def refusal(workload: Workload) -> tuple[str, bool] | None:
    """Why the job's GPU pods cannot all land on its pool's nodes as simulate shapes them, when the stack and those
    shapes alone decide it, and whether that rests on one of simulate's assumptions: a required topology domain
    smaller than the job, or a pod requesting more cpu or memory than a node advertises. None when neither holds."""
    plan = workload.plan
    pool = plan.pool
    placed = plan.placement
    if placed is not None and placed.mode == "required" and pool.topology is not None:
        size = domain_sizes(pool.topology, pool.provider, pool.machine_type, pool.nvlink_domain_nodes)
        domain = size.get(placed.level.name)
        if domain is not None and plan.nodes > domain.nodes:
            said = f"simulate's assumption: {domain.source}" if domain.assumed else domain.source
            return (
                f"the job needs {plan.nodes} nodes in one {placed.level.name}, and a {placed.level.name} of pool "
                f"{pool.name} holds {domain.nodes} ({said})",
                domain.assumed,
            )
    stated = allocatable(pool)
    offered = nodes.advertised(pool)
    for obj, template in pool_pods(pool, list(workload.objects), plan):
        requests = pod_requests(template.spec)
        for resource in ("cpu", "memory"):
            wanted = requests.get(resource)
            if wanted is None or quantity.parse(wanted) <= quantity.parse(offered[resource]):
                continue
            assumed = not stated.get(resource)
            whose = (
                f"simulate's assumption for a machine it does not know: state nodePools[].allocatable.{resource}"
                if assumed
                else f"what a node of pool {pool.name} advertises"
            )
            pods = "pods" if template.role in ("", "pod") else f"{template.role} pods"
            return (
                f"{obj['kind']} {obj['metadata']['name']}'s {pods} request {resource} {wanted}, more "
                f"than the {offered[resource]} of a node of pool {pool.name} ({whose})",
                assumed,
            )
    return None


def remove(cluster: Cluster, workload: Workload, timeout: float = 120.0) -> None:
    """Delete the job's objects and wait until its pods are gone, so the next job finds the pool empty."""
    client = cluster.client
    # In the background: a Job in foreground deletion still has its controller making pods for kwok to run.
    for obj in reversed(workload.objects):
        client.delete(obj, "Background")
    deadline = time.monotonic() + timeout
    while _pods(client, workload) or any(client.get(client.path_of(o)) for o in workload.objects):
        if time.monotonic() > deadline:
            raise apply.ApplyError(f"{apply.key(workload.workload)}: its pods were not deleted in {timeout:.0f} s")
        time.sleep(SETTLE)


def _pods(client: Client, workload: Workload) -> list[dict[str, Any]]:
    meta = workload.workload["metadata"]
    return client.list("v1", "Pod", meta["namespace"], f"{INSTANCE_LABEL}={meta['name']}")


def _requests_gpus(pod: dict[str, Any]) -> bool:
    return any(
        any(name.endswith("/gpu") for name in c.get("resources", {}).get("limits", {}))
        for c in pod["spec"].get("containers", [])
    )


def _observe(cluster: Cluster, workload: Workload, pods: list[dict[str, Any]], result: Placement) -> None:
    client = cluster.client
    live = [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp") and status_of(p).get("phase") not in ("Failed", "Succeeded")
    ]
    bound = [p for p in live if p["spec"].get("nodeName")]
    result.created, result.bound = len(live), len(bound)
    result.nodes = sorted({p["spec"]["nodeName"] for p in bound})
    node_pool = {n["metadata"]["name"]: nodes.pool_of(n) for n in _nodes(client, result.nodes)}
    result.off_pool = sorted(
        {p["spec"]["nodeName"] for p in bound if _requests_gpus(p)}
        - {n for n, pool in node_pool.items() if pool == result.pool}
    )
    result.gang = _gang(cluster, workload, live)


def _nodes(client: Client, names: list[str]) -> list[dict[str, Any]]:
    return [n for n in client.list("v1", "Node") if n["metadata"]["name"] in names] if names else []


def _gang(cluster: Cluster, workload: Workload, pods: list[dict[str, Any]]) -> str:
    """How the stack's gang scheduler holds the job: Kueue's Workload, or Volcano's PodGroup phase."""
    scheduler = cluster.rendered.stack.scheduler
    client = cluster.client
    meta = workload.workload["metadata"]
    if scheduler == "kueue":
        for item in _owned(client, "kueue.x-k8s.io/v1beta2", "Workload", meta):
            conditions = {c["type"]: c for c in conditions_of(item)}
            admitted = conditions.get("Admitted", {}).get("status") == "True"
            return "admitted" if admitted else "pending"
        return "no Workload"
    if scheduler == "volcano":
        group = _podgroup(client, meta, pods)
        return status_of(group).get("phase") or "Pending" if group else "no PodGroup"
    return "-"


def _owned(client: Client, api_version: str, kind: str, owner_meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Objects of `kind` in the owner's namespace whose owner (or owner's owner's name) is the job."""
    return [
        item
        for item in client.list(api_version, kind, owner_meta["namespace"])
        if any(ref.get("name") == owner_meta["name"] for ref in item["metadata"].get("ownerReferences", []))
    ]


def _podgroup(client: Client, meta: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    names = {p["metadata"].get("annotations", {}).get("scheduling.k8s.io/group-name") for p in pods} - {None}
    groups = client.list("scheduling.volcano.sh/v1beta1", "PodGroup", meta["namespace"])
    for group in groups:
        if group["metadata"]["name"] in names:
            return dict(group)
    owned = [g for g in groups if any(r.get("name") == meta["name"] for r in g["metadata"].get("ownerReferences", []))]
    named = [g for g in groups if g["metadata"]["name"] == meta["name"]]
    return dict((owned or named)[0]) if owned or named else None


def _why_waiting(cluster: Cluster, workload: Workload, pods: list[dict[str, Any]]) -> str:
    """The cluster's own words for why the job is not placed whole: gang, pods, or the job's events."""
    client = cluster.client
    meta = workload.workload["metadata"]
    reasons: list[str] = []
    if cluster.rendered.stack.scheduler == "kueue":
        for item in _owned(client, "kueue.x-k8s.io/v1beta2", "Workload", meta):
            for condition in conditions_of(item):
                if condition.get("status") == "False" and condition.get("message"):
                    reasons.append(f"Kueue: {condition['message']}")
            # A ProvisioningRequest check holds a job whose quota is reserved until its nodes are provisioned.
            for check in status_of(item).get("admissionChecks", []):
                if check.get("state") != "Ready":
                    said = f": {check['message']}" if check.get("message") else ": no answer to its ProvisioningRequest"
                    reasons.append(f"Kueue: admission check {check['name']} {check.get('state', 'Pending')}{said}")
    if cluster.rendered.stack.scheduler == "volcano" and (group := _podgroup(client, meta, pods)):
        for condition in conditions_of(group):
            if condition.get("type") == "Unschedulable" and condition.get("message"):
                reasons.append(f"Volcano: {condition['message']}")
    for pod in pods:
        for condition in conditions_of(pod):
            if condition["type"] == "PodScheduled" and condition["status"] == "False" and condition.get("message"):
                reasons.append(f"pod {pod['metadata']['name']}: {condition['message']}")
                break
    if cluster.joiner is not None and (said := karpenter.why_not_launched(client, pods)):
        reasons.append(f"Karpenter: {said}")
    if not pods:
        events = client.list("v1", "Event", meta["namespace"])
        mine = [e for e in events if e.get("involvedObject", {}).get("name") == meta["name"]]
        reasons += [f"{e.get('reason')}: {e.get('message')}" for e in mine[-3:]]
        if not reasons:
            reasons.append(f"no pods created by the {workload.workload['kind']} controller")
    return "; ".join(dict.fromkeys(reasons))
