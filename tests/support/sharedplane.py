"""One control plane per test worker, lent to each test that asks the `control_plane` fixture for a plane and put
back as it started (the seed's state) after it.

A plane's start costs about 5 CPU-seconds (the API server's 4 of them: its handlers, the seed's CRDs, then the
controller manager's informers on every kind), which was half of the simulate tier's CPU. Between tests, the
processes the test added (kwok, operators, drivers) are stopped and every object the started plane did not have is
deleted, finalizers dropped (their controllers are gone); the plane is lent again only once a full inventory of the
API server matches the one taken at its start, kind for kind and name for name, and no CRD changed. Anything else
(a test that stopped the plane, changed a definition, or left what cannot be deleted within `RESET_WITHIN`) and the
plane is stopped: the next test gets a fresh one. What stays shared is the controller manager's and the scheduler's
caches, which follow what the API server holds.
"""

from __future__ import annotations

import json
import os
import signal
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from components.simulate.client import Client, ClientError, Resource
from components.simulate.controlplane import ControlPlane

OWN_PROCESSES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
"""The processes controlplane.start runs; whatever a test starts after them is stopped between tests."""
RESET_WITHIN = 30.0
"""How long putting a plane back may take before it is stopped instead (a reset takes a second or two)."""
POLL = 0.1
REMADE = {("v1", "configmaps"): "kube-root-ca.crt", ("v1", "serviceaccounts"): "default"}
"""What the controller manager makes in every namespace, the started plane's own included, on its own schedule."""

CRDS_CHANGED = "a CRD was changed, added or removed"
"""Why a plane is not lent again that is no fault: a stack's operator may install its own versions of CRDs (the
Training Operator without the MPI Operator serves MPIJob v1 in place of v2beta1)."""

Key = tuple[str, str, str, str]
"""An object's identity in an inventory: group/version, resource (plural), namespace ('' when cluster-scoped), name."""


def kinds(client: Client) -> list[Resource]:
    """Every listable, deletable resource, each in its group's preferred version when served there, else in the
    first other version that serves it (as client-go's preferred resources: mpijobs.kubeflow.org is served in
    v2beta1 only, beside the v1 the group prefers)."""
    versions = [("", ["v1"])]
    for group in json.loads(client.request("GET", "/apis")).get("groups") or []:
        preferred = group["preferredVersion"]["groupVersion"]
        others = [v["groupVersion"] for v in group.get("versions") or [] if v["groupVersion"] != preferred]
        versions.append((group["name"], [preferred, *others]))
    found: list[Resource] = []
    for group, group_versions in versions:
        seen: set[str] = set()
        for version in group_versions:
            listing = json.loads(client.request("GET", "/api/v1" if version == "v1" else f"/apis/{version}"))
            for item in listing.get("resources") or []:
                verbs = set(item.get("verbs") or ())
                if "/" not in item["name"] and item["name"] not in seen and {"list", "delete"} <= verbs:
                    seen.add(item["name"])
                    found.append(Resource(version, item["name"], bool(item["namespaced"])))
    return found


@dataclass
class Inventory:
    """What the API server holds: every object's identity, with what a reset needs to delete it."""

    objects: dict[Key, dict[str, object]] = field(default_factory=dict)
    kinds: dict[tuple[str, str], Resource] = field(default_factory=dict)

    def identities(self) -> set[Key]:
        """Every object's identity."""
        return set(self.objects)


def inventory(client: Client, served: list[Resource], into: Inventory | None = None) -> Inventory:
    """Every object of `served`, by identity, with its metadata (no specs); with `into`, those kinds listed again
    there and the rest kept."""
    taken = into or Inventory(kinds={(k.group_version, k.plural): k for k in served})
    for kind in served:
        for key in [k for k in taken.objects if k[:2] == (kind.group_version, kind.plural)]:
            del taken.objects[key]
        for meta in client.list_metadata(kind.path(None)):
            key = (kind.group_version, kind.plural, meta.get("namespace") or "", meta["name"])
            taken.objects[key] = meta
    return taken


def definitions(client: Client) -> dict[str, str]:
    """Each CRD's name and resourceVersion (any change to one changes it)."""
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    return {m["name"]: m["resourceVersion"] for m in client.list_metadata(path)}


@dataclass
class Baseline:
    """A started plane's state: the kinds served, the objects held, the CRDs' versions."""

    served: list[Resource]
    keys: set[Key]
    crds: dict[str, str]


def baseline(plane: ControlPlane) -> Baseline:
    """The plane's state once the controller manager has made what it makes in every namespace."""
    client = plane.client()
    served = kinds(client)
    deadline = time.monotonic() + RESET_WITHIN
    while True:
        taken = inventory(client, served)
        namespaces = {name for (_, plural, _, name) in taken.identities() if plural == "namespaces"}
        made = all(
            (version, plural, namespace, name) in taken.objects
            for (version, plural), name in REMADE.items()
            for namespace in namespaces
        )
        if made or time.monotonic() > deadline:
            return Baseline(served, taken.identities(), definitions(client))
        time.sleep(POLL)


def _extra(taken: Inventory, base: Baseline) -> tuple[list[Key], list[Key]]:
    """What the plane holds that it did not at its start: the objects (webhook configurations and API services
    first: a webhook whose server is gone would refuse the rest), then the namespaces. What the controller manager
    makes again in every live namespace is left to the namespace's deletion."""
    namespaces = {k[3] for k in taken.identities() if k[1] == "namespaces"}
    extra = taken.identities() - base.keys
    objects = [k for k in extra if k[1] != "namespaces" and not (k[2] in namespaces and REMADE.get(k[:2]) == k[3])]
    first = ("mutatingwebhookconfigurations", "validatingwebhookconfigurations", "apiservices")
    objects.sort(key=lambda k: (k[1] not in first, k))
    return objects, sorted(k for k in extra if k[1] == "namespaces")


def _delete(client: Client, kind: Resource, key: Key, meta: dict[str, object]) -> None:
    """Delete one object now: its finalizers dropped (their controllers are gone), no grace period."""
    path = kind.path(key[2] or None, key[3])
    try:
        if meta.get("finalizers"):
            patch = json.dumps({"metadata": {"finalizers": None}}).encode()
            client.request("PATCH", path, patch, "application/merge-patch+json")
        options = json.dumps({"gracePeriodSeconds": 0, "propagationPolicy": "Background"}).encode()
        client.request("DELETE", path, options, "application/json")
    except ClientError as exc:
        if exc.code not in (404, 409):
            raise


def _end_namespace(client: Client, name: str) -> None:
    """Delete a namespace whose own objects are gone, without the namespace controller's pass: its finalizer dropped
    while the namespace is live, then deleted twice (the first marks it terminating, the second removes a namespace
    with no finalizer). The controller took 5 to 6 s a namespace (it waits a second or more between passes), and a
    pass still running once the namespace was gone would delete by name in the next test's namespace of the same
    name; it skips a namespace with no finalizer. A namespace the test was deleting itself is left to it. What the
    controller manager made in the namespace (kube-root-ca.crt, the default account) stays behind, and is deleted
    as what the plane did not hold at its start."""
    path = f"/api/v1/namespaces/{name}"
    options = json.dumps({"gracePeriodSeconds": 0}).encode()
    try:
        namespace = client.get(path)
        if namespace is None or namespace["metadata"].get("deletionTimestamp"):
            return
        if namespace["spec"].get("finalizers"):
            namespace["spec"]["finalizers"] = []
            client.request("PUT", f"{path}/finalize", json.dumps(namespace).encode(), "application/json")
        client.request("DELETE", path, options, "application/json")
        client.request("DELETE", path, options, "application/json")
    except ClientError as exc:
        if exc.code not in (404, 409):
            raise


def _stop_added(plane: ControlPlane) -> None:
    """Stop the processes a test added to the plane, at once."""
    added = [p for p in plane.processes if p.name not in OWN_PROCESSES]
    for process in added:
        if process.popen.poll() is None:
            os.killpg(process.popen.pid, signal.SIGKILL)
        process.popen.wait()
    plane.processes[:] = [p for p in plane.processes if p.name in OWN_PROCESSES]


def reset(plane: ControlPlane, base: Baseline) -> str:
    """Put `plane` back as `base` found it; '' when done, else why it cannot be lent again."""
    running = {p.name for p in plane.processes if p.name in OWN_PROCESSES and p.popen.poll() is None}
    if running != set(OWN_PROCESSES):
        return "the test stopped it, or one of its own processes exited"
    _stop_added(plane)
    plane.drop_client()  # the next test's client discovers afresh
    client = plane.client()
    deadline = time.monotonic() + RESET_WITHIN
    try:
        if definitions(client) != base.crds:
            return CRDS_CHANGED
        taken = inventory(client, base.served)
        while True:
            objects, namespaces = _extra(taken, base)
            missing = base.keys - taken.identities()
            if not objects and not namespaces and not missing:
                # Done when a whole inventory agrees (between rounds only the kinds with leftovers were listed).
                taken = inventory(client, base.served)
                objects, namespaces = _extra(taken, base)
                if not objects and not namespaces and not (missing := base.keys - taken.identities()):
                    return ""
            if time.monotonic() > deadline:
                left = ", ".join("/".join(k[1:]) for k in [*objects, *namespaces][:5])
                gone = ", ".join("/".join(k[1:]) for k in sorted(missing)[:5])
                return f"not back within {RESET_WITHIN:.0f} s: left {left or 'nothing'}; missing {gone or 'nothing'}"
            for key in objects:
                _delete(client, taken.kinds[key[:2]], key, taken.objects[key])
            if not objects:
                for key in namespaces:
                    _end_namespace(client, key[3])
            time.sleep(POLL)
            again = {k[:2] for k in [*objects, *namespaces]} | {("v1", "namespaces")}
            taken = inventory(client, [taken.kinds[k] for k in again], into=taken)
    except (ClientError, OSError) as exc:
        return f"the API server failed a request: {exc}"


class SharedPlane:
    """The worker's plane: started on first use, lent to one test at a time, put back or stopped after it."""

    def __init__(self, start: Callable[[], ControlPlane]) -> None:
        self._start = start
        self._plane: ControlPlane | None = None
        self._base: Baseline | None = None

    def lend(self) -> ControlPlane:
        """The worker's plane as it started: the one the last test gave back, or a fresh one."""
        if self._plane is None:
            self._plane = self._start()
            self._base = baseline(self._plane)
        return self._plane

    def give_back(self) -> None:
        """Put the plane back for the next test, or stop it when it cannot be (with a warning saying why, unless its
        CRDs changed)."""
        if self._plane is None or self._base is None:
            return
        why = reset(self._plane, self._base)
        if why:
            self.stop()
            if why != CRDS_CHANGED:
                warnings.warn(f"the worker's control plane is stopped, not shared further: {why}", stacklevel=1)

    def stop(self) -> None:
        """Stop the plane, if one runs."""
        if self._plane is not None:
            self._plane.stop()
        self._plane, self._base = None, None
