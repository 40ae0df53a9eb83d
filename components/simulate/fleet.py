"""A fleet on one machine: a manager cluster whose Kueue dispatches jobs with MultiKueue, and worker clusters that run
them, each its own control plane with its own stack's kwok nodes, Kueue, Trainer and JobSet; which worker took each
job, whether it ran whole there, and where a job went when its worker was taken away.

Every cluster is a simulated stack (simulate/simulation.py `running`): the manager's from its rendered objects with its
jobs held back, each worker's from its own stack. What the fleet adds is what `pulumi up` makes that no rendered file
holds: on the manager, a Secret per worker with a kubeconfig for that worker's API server, read by Kueue from its own
namespace under the key `kubeconfig` (kubernetes-sigs/kueue v0.19.2 apis/kueue/v1beta2/multikueue_types.go:24,
pkg/controller/admissionchecks/multikueue/multikueuecluster.go:1063-1080). Its credentials are the token of the
worker's MultiKueue ServiceAccount when the worker's objects make one (a Secret of type
kubernetes.io/service-account-token, which the worker's token controller fills), so the test is of the least RBAC the
fleet grants; else the worker's admin token, and a note says so.

The kubeconfig carries the worker's CA as data and the token inline: Kueue v0.19.2 refuses file paths in a
MultiKueue kubeconfig (multikueuecluster.go:956-999; MultiKueueAllowInsecureKubeconfigs is locked off,
pkg/features/kube_features.go:773-777). MultiKueue itself is beta and on by default since Kueue 0.9
(kube_features.go:679-682): no feature gate is set.
"""

from __future__ import annotations

import base64
import copy
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from components import kubeconfig as kubeconfigs
from components.manifests.multikueue import (
    CONTROLLER,
    KUBECONFIG_KEY,
    MULTIKUEUE_API,
    SERVICE_ACCOUNT_ANNOTATION,
    TOKEN_TYPE,
)
from components.render import Rendered
from components.simulate import apply, kueue, nodes, simulation
from components.simulate.client import Client, ClientError, conditions_of, status_of

WORKER_LOST_TIMEOUT = "5s"
"""How long the manager keeps a job on a worker it cannot reach before it dispatches the job again (Kueue's
`multiKueue.workerLostTimeout`, 15 minutes by default: apis/config/v1beta2/defaults.go:50). In a real fleet the long
wait rides out a network blip without running a job twice; here a worker goes away only when it is taken away
(`simulate --take-away`, a test), and the loss must be seen within a test's two minutes. The manager waits this long
from the moment its watch of the worker ended (multikueuecluster.go:158-165, workload.go:546-559), so a job lands
elsewhere within seconds."""
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
"""The label JobSet puts on every pod of a JobSet (a TrainJob's JobSet has the TrainJob's name)."""
MANAGER = "manager"
"""The manager's folder in the run folder, and its name in progress messages."""
POLL = 0.5
REFUSED = "refused by the manager's API server: "
CONNECT_TIMEOUT = 90.0


class FleetError(RuntimeError):
    """The fleet did not come up as a deploy would make it: a worker unreachable, a cluster not connected."""


def dispatched(obj: dict[str, Any]) -> bool:
    """Whether an object is a job the manager dispatches (its `spec.managedBy` is MultiKueue's)."""
    return obj.get("kind") == "TrainJob" and (obj.get("spec") or {}).get("managedBy") == CONTROLLER


def with_objects(rendered: Rendered, objects: list[dict[str, Any]]) -> Rendered:
    """The rendered stack with `objects` added, each one it does not already hold (by kind, namespace and name)."""
    held = {apply.key(o) for o in rendered.objects}
    return replace(rendered, objects=(*rendered.objects, *(o for o in objects if apply.key(o) not in held)))


def _multikueue_on(rendered: Rendered, lost_timeout: str) -> Rendered:
    """The manager's stack with its Kueue told to notice a lost worker after `lost_timeout`: the one setting of its
    configuration simulate changes for the fleet (the rest is the stack's, as kueue.configuration changes it)."""
    found = kueue.release(rendered)
    if found is None:
        raise FleetError("the manager's stack does not install Kueue, which dispatches the fleet's jobs")
    config = yaml.safe_load(found.values["managerConfig"]["controllerManagerConfigYaml"])
    config["multiKueue"] = {**(config.get("multiKueue") or {}), "workerLostTimeout": lost_timeout}
    values = {**found.values, "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config)}}
    releases = tuple(replace(r, values=values) if r is found else r for r in rendered.addons.releases)
    return replace(rendered, addons=replace(rendered.addons, releases=releases))


@dataclass
class Job:
    """What the fleet did with one job: where the manager sent it, and how its pods ran there."""

    job: str
    """namespace/name."""
    worker: str | None = None
    """The worker the manager's Workload is admitted to now (its status.clusterName)."""
    seconds: float | None = None
    """From submission (or from its last worker's loss, once re-dispatched) until its pods ran whole on `worker`."""
    redispatched_from: list[str] = field(default_factory=list)
    """Workers it was admitted to before, in order."""
    expected: int = 0
    """Pods the manager admitted it with (its Workload's pod sets)."""
    running: int = 0
    nodes: list[str] = field(default_factory=list)
    pools: list[str] = field(default_factory=list)
    """The pools of the nodes its pods run on, as simulate made them."""
    state: str = "-"
    """The manager's Workload: its MultiKueue check's state and whether it is admitted."""
    reason: str = ""

    @property
    def whole(self) -> bool:
        """Every pod the manager admitted runs on a kwok node of its worker."""
        return self.worker is not None and self.expected > 0 and self.running == self.expected

    def as_dict(self) -> dict[str, Any]:
        """The job for --format json."""
        return {
            "job": self.job,
            "worker": self.worker,
            "whole": self.whole,
            "secondsToRunWhole": self.seconds,
            "redispatchedFrom": self.redispatched_from,
            "podsExpected": self.expected,
            "podsRunning": self.running,
            "nodes": self.nodes,
            "pools": self.pools,
            "manager": self.state,
            "reason": "" if self.whole else self.reason,
        }

    def line(self) -> str:
        """The job as one line of the report."""
        where = f"on {self.worker}" if self.worker else "on no worker"
        since = f" after {self.redispatched_from[-1]} was lost" if self.redispatched_from else ""
        placed = (
            f"placed whole in {self.seconds:.1f} s{since}" if self.whole and self.seconds is not None else "not whole"
        )
        pods = f"{self.running}/{self.expected} pods on {', '.join(self.pools) or 'no pool'}"
        # Re-dispatched once another worker holds it; until then only taken from the lost one.
        verb = "re-dispatched" if self.worker else "taken"
        moved = f"; {verb} from {', '.join(self.redispatched_from)}" if self.redispatched_from else ""
        why = f"; {self.reason}" if self.reason and not self.whole else ""
        return f"{self.job}: {where}, {placed} ({pods}; manager: {self.state}){moved}{why}"


@dataclass
class Fleet:
    """A running fleet: the manager, its workers, the jobs it holds back until `submit`, and what became of them."""

    manager: simulation.Cluster
    workers: dict[str, simulation.Cluster]
    jobs: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    gone: set[str] = field(default_factory=set)
    """Workers taken away."""
    reports: dict[str, Job] = field(default_factory=dict)
    _since: dict[str, float] = field(default_factory=dict, repr=False)

    def submit(self) -> None:
        """Apply the jobs to the manager (each refused one is reported with the API server's words)."""
        started = time.monotonic()
        for obj, outcome in zip(self.jobs, apply.apply_all(self.manager.client, self.jobs), strict=True):
            name = _name(obj)
            self.reports[name] = Job(name, reason="" if outcome.accepted else f"{REFUSED}{outcome.message}")
            self._since[name] = started

    def take_away(self, worker: str) -> None:
        """Stop the worker's API server and everything else it runs, as a cluster that is lost; its jobs' clocks
        start again now."""
        self.workers[worker].plane.stop()
        self.gone.add(worker)
        now = time.monotonic()
        for name, report in self.reports.items():
            if report.worker == worker:
                self._since[name] = now

    def observe(self) -> dict[str, Job]:
        """Look once at each job: the manager's Workload, and its pods on the worker it is admitted to."""
        for obj in self.jobs:
            report = self.reports.get(_name(obj))
            if report is not None and not report.reason.startswith(REFUSED):
                self._observe(obj, report)
        return self.reports

    def wait(self, timeout: float, jobs: list[str] | None = None) -> dict[str, Job]:
        """Observe until every job (of `jobs`, else all) runs whole on a worker still there, or `timeout`."""
        wanted = jobs if jobs is not None else list(self.reports)
        deadline = time.monotonic() + timeout
        while True:
            self.observe()
            if all(self._settled(self.reports[name]) for name in wanted):
                return self.reports
            if time.monotonic() > deadline:
                for name in wanted:
                    report = self.reports[name]
                    if not self._settled(report) and not report.reason:
                        report.reason = f"not whole on a worker within {timeout:.0f} s"
                return self.reports
            time.sleep(POLL)

    def report(self) -> str:
        """Per job: its worker, how long it took to run whole there, and the workers it left."""
        return "\n".join(r.line() for r in self.reports.values())

    def _settled(self, report: Job) -> bool:
        """Whole on a worker still there, or refused by the manager's API server (which waiting does not change)."""
        return (report.whole and report.worker not in self.gone) or report.reason.startswith(REFUSED)

    def _observe(self, obj: dict[str, Any], report: Job) -> None:
        meta = obj["metadata"]
        workload = _workload(self.manager.client, meta["namespace"], meta["name"])
        if workload is None:
            report.state, report.reason = "no Workload", "the manager's Kueue made no Workload"
            return
        report.state = _state(workload)
        report.expected = sum(int(p.get("count", 1)) for p in workload["spec"].get("podSets", []))
        worker = status_of(workload).get("clusterName")
        if worker != report.worker:
            if report.worker is not None and report.worker not in report.redispatched_from:
                report.redispatched_from.append(report.worker)
            report.worker, report.seconds, report.running, report.nodes, report.pools = worker, None, 0, [], []
        if worker is None or worker in self.gone or worker not in self.workers:
            report.reason = _waiting(workload)
            return
        pods, placed = self._pods(worker, meta)
        report.running = len(pods)
        report.nodes = sorted({p["spec"]["nodeName"] for p in pods})
        report.pools = sorted({pool for pool in placed.values() if pool})
        if report.whole and report.seconds is None:
            report.seconds = round(time.monotonic() - self._since[report.job], 1)
            report.reason = ""

    def _pods(self, worker: str, meta: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str | None]]:
        """The job's pods running on the worker's kwok nodes, and each node's pool."""
        client = self.workers[worker].client
        try:
            pods = client.list("v1", "Pod", meta["namespace"], f"{JOBSET_NAME}={meta['name']}")
            known = {n["metadata"]["name"]: n for n in client.list("v1", "Node")}
        except (ClientError, OSError):
            return [], {}
        running = [
            p
            for p in pods
            if not p["metadata"].get("deletionTimestamp")
            and status_of(p).get("phase") == "Running"
            and p["spec"].get("nodeName") in known
        ]
        return running, {name: nodes.pool_of(known[name]) for name in {p["spec"]["nodeName"] for p in running}}


def _name(obj: dict[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def _workload(client: Client, namespace: str, owner: str) -> dict[str, Any] | None:
    """The manager's Workload of a job (the one it owns)."""
    for item in client.list(MULTIKUEUE_API, "Workload", namespace):
        if any(ref.get("name") == owner for ref in item["metadata"].get("ownerReferences", [])):
            return dict(item)
    return None


def _state(workload: dict[str, Any]) -> str:
    """The Workload's MultiKueue check state and admission, in a few words."""
    checks = status_of(workload).get("admissionChecks") or []
    check = ", ".join(f"check {c['name']} {c.get('state', 'Pending')}" for c in checks) or "no check"
    admitted = any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions_of(workload))
    return f"{'admitted' if admitted else 'pending'}, {check}"


def _waiting(workload: dict[str, Any]) -> str:
    """Why the manager holds the job: its false conditions' and checks' messages."""
    said = [c["message"] for c in conditions_of(workload) if c.get("status") == "False" and c.get("message")]
    said += [c["message"] for c in status_of(workload).get("admissionChecks") or [] if c.get("message")]
    return "; ".join(dict.fromkeys(said)) or "not dispatched yet"


def kubeconfig(server: str, ca_pem: bytes, token: str, name: str) -> str:
    """A kubeconfig for one API server, its CA and token inline (the only form Kueue takes for MultiKueue), made as
    `pulumi up` makes the manager's (components/kubeconfig.py)."""
    return kubeconfigs.token_kubeconfig(name, server, base64.b64encode(ca_pem).decode(), token, name)


def _token(cluster: simulation.Cluster, timeout: float = 60.0) -> tuple[str, str]:
    """The token the manager reaches the worker with, and whose it is: the worker's MultiKueue ServiceAccount's, once
    its token controller has filled the Secret the worker's objects make for it; else the admin's."""
    secrets = [o for o in cluster.rendered.objects if o["kind"] == "Secret" and o.get("type") == TOKEN_TYPE]
    if not secrets:
        return cluster.plane.token, "the worker's admin token (its objects make no ServiceAccount token)"
    secret = secrets[0]
    account = secret["metadata"].get("annotations", {}).get(SERVICE_ACCOUNT_ANNOTATION, "?")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stored = cluster.client.get(cluster.client.path_of(secret)) or {}
        if token := (stored.get("data") or {}).get("token"):
            return base64.b64decode(token).decode(), f"ServiceAccount {secret['metadata']['namespace']}/{account}"
        time.sleep(POLL)
    raise FleetError(f"the token controller did not fill Secret {apply.key(secret)} in {timeout:.0f} s")


def _connect(fleet: Fleet, timeout: float) -> None:
    """Give the manager a kubeconfig Secret per worker, where its MultiKueueCluster says, and wait until every
    MultiKueueCluster and AdmissionCheck is Active."""
    client = fleet.manager.client
    namespace = kueue.namespace(fleet.manager.rendered)
    clusters = {o["metadata"]["name"]: o for o in fleet.manager.rendered.objects if o["kind"] == "MultiKueueCluster"}
    for name, worker in fleet.workers.items():
        if name not in clusters:
            raise FleetError(f"the manager has no MultiKueueCluster {name} for worker {name}")
        source = clusters[name]["spec"]["clusterSource"]["kubeConfig"]
        token, whose = _token(worker)
        fleet.notes.append(f"worker {name}: reached as {whose}, at {worker.plane.server}")
        text = kubeconfig(worker.plane.server, worker.plane.ca_file.read_bytes(), token, name)
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": source["location"], "namespace": namespace},
            "type": "Opaque",
            "data": {KUBECONFIG_KEY: base64.b64encode(text.encode()).decode()},
        }
        client.apply(secret)
    deadline = time.monotonic() + timeout
    kinds = ("MultiKueueCluster", "AdmissionCheck")
    while inactive := [
        f"{kind} {o['metadata']['name']}: {_active(client, o)}"
        for kind in kinds
        for o in fleet.manager.rendered.objects
        if o["kind"] == kind and _active(client, o) != "Active"
    ]:
        if time.monotonic() > deadline:
            raise FleetError(f"not connected in {timeout:.0f} s: " + "; ".join(inactive))
        time.sleep(POLL)


def _active(client: Client, obj: dict[str, Any]) -> str:
    """`Active`, or what the object's Active condition says instead."""
    condition = next((c for c in conditions_of(client.get(client.path_of(obj))) if c["type"] == "Active"), None)
    if condition is not None and condition.get("status") == "True":
        return "Active"
    return (condition or {}).get("message") or "no Active condition yet"


@contextmanager
def running(
    manager: Rendered,
    workers: dict[str, Rendered],
    folder: Path,
    progress: Callable[[str], None] = lambda _: None,
    *,
    lost_timeout: str = WORKER_LOST_TIMEOUT,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> Iterator[Fleet]:
    """The manager and every worker started at once, each a simulated stack with its platform applied; the manager
    connected to every worker; its jobs held back until `Fleet.submit`. Every cluster is stopped on exit."""
    if MANAGER in workers:
        raise FleetError(f"a worker is named {MANAGER}, the manager's name in the run folder and the report")
    jobs = [copy.deepcopy(o) for o in manager.objects if dispatched(o)]
    platform = _multikueue_on(
        replace(manager, objects=tuple(o for o in manager.objects if not dispatched(o))), lost_timeout
    )
    stacks = {MANAGER: platform, **workers}
    with ExitStack() as exits:
        started: dict[str, simulation.Cluster] = {}
        with ThreadPoolExecutor(max_workers=len(stacks)) as pool:
            entering = {
                name: (context, pool.submit(context.__enter__))
                for name, context in (
                    (name, simulation.running(r, folder / name, progress=_said(name, progress)))
                    for name, r in stacks.items()
                )
            }
            failures = []
            for name, (context, future) in entering.items():
                try:
                    started[name] = future.result()
                except Exception as exc:  # each start's error is told once the others are stopped
                    failures.append(f"{name}: {exc}")
                else:
                    exits.push(context.__exit__)
        if failures:
            raise FleetError("a cluster of the fleet did not start:\n" + "\n".join(failures))
        fleet = Fleet(started.pop(MANAGER), started, jobs)
        fleet.notes.append(
            f"the manager notices a lost worker after {lost_timeout} (Kueue's multiKueue.workerLostTimeout; 15m by "
            "default)"
        )
        progress("connecting the manager to its workers")
        _connect(fleet, connect_timeout)
        yield fleet


def _said(name: str, progress: Callable[[str], None]) -> Callable[[str], None]:
    return lambda message: progress(f"{name}: {message}")
