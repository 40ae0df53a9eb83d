"""Apply a stack's objects to a real API server with server-side apply, in dependency order."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from components.simulate.client import Client, ClientError, conditions_of
from components.simulate.crds import UNAVAILABLE

ESTABLISH_TIMEOUT = 60.0
DIGEST = "gpu-training/definition-digest"
"""The annotation on a CRD we installed: the digest of the definition it was applied from."""
WAIT_FOR = "pulumi.com/waitFor"
WAIT_FOR_TIMEOUT = 60.0


class ApplyError(RuntimeError):
    """The cluster did not take the stack's objects as a deploy would: the API server's or controller's words."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the API server said of one object: accepted, refused (with its message) or skipped (why)."""

    key: str
    accepted: bool
    message: str = ""
    skipped: bool = False


def key(obj: dict[str, Any]) -> str:
    """`Kind/namespace/name` (or `Kind/name` when cluster-scoped)."""
    meta = obj.get("metadata", {})
    parts = [obj.get("kind", "?"), *([meta["namespace"]] if meta.get("namespace") else []), meta.get("name", "?")]
    return "/".join(parts)


def install_crds(client: Client, definitions: Iterable[dict[str, Any]]) -> None:
    """Create or update each CRD the API server does not already hold as given, and wait until it serves all of
    them. A CRD is held as given when it carries the digest of that definition (`DIGEST`): on a seeded control
    plane (simulate/seed.py) nothing is sent again, where applying 3 MB of schemas costs the server 10-20 s."""
    held = {
        meta["name"]: (meta.get("annotations") or {}).get(DIGEST)
        for meta in client.list_metadata("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    }
    names = []
    for crd in definitions:
        name = crd["metadata"]["name"]
        names.append(name)
        digest = digest_of(crd)
        if held.get(name) != digest:
            annotations = {**(crd["metadata"].get("annotations") or {}), DIGEST: digest}
            client.apply({**crd, "metadata": {**crd["metadata"], "annotations": annotations}})
    deadline = time.monotonic() + ESTABLISH_TIMEOUT
    waiting = set(names)
    while waiting and time.monotonic() < deadline:
        # One list a round, not a read per CRD: 38 reads of their schemas cost 2.7 s, the list 0.7 s.
        listing = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions") or {}
        waiting -= {crd["metadata"]["name"] for crd in listing.get("items") or [] if _is_established(crd)}
        if waiting:
            time.sleep(0.2)
    if waiting:
        raise ClientError(f"CRDs not established after {ESTABLISH_TIMEOUT:.0f}s: {', '.join(sorted(waiting))}")


def digest_of(crd: dict[str, Any]) -> str:
    """A digest of a CRD definition as we would apply it (without our own annotation)."""
    meta = dict(crd.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != DIGEST}
    meta["annotations"] = annotations
    return hashlib.sha256(json.dumps({**crd, "metadata": meta}, sort_keys=True).encode()).hexdigest()[:16]


def _is_established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions_of(crd))


def _rank(obj: dict[str, Any]) -> int:
    """Namespaces and cluster-wide definitions first, then everything that may live in them."""
    kind = obj.get("kind")
    if kind == "CustomResourceDefinition":
        return 0
    if kind == "Namespace":
        return 1
    if kind in (
        "PriorityClass",
        "StorageClass",
        "PersistentVolume",
        "ClusterRole",
        "ServiceAccount",
        "ConfigMap",
        "Secret",
    ):
        return 2
    return 3


def apply_all(client: Client, objects: Iterable[dict[str, Any]]) -> list[Outcome]:
    """Server-side apply every object (stable order within a rank); one Outcome each, never raising."""
    outcomes = []
    for obj in sorted(objects, key=_rank):
        group = obj.get("apiVersion", "").rpartition("/")[0]
        if group in UNAVAILABLE:
            outcomes.append(Outcome(key(obj), False, UNAVAILABLE[group], skipped=True))
            continue
        try:
            client.apply(obj)
        except ClientError as exc:
            outcomes.append(Outcome(key(obj), False, str(exc)))
        else:
            outcomes.append(Outcome(key(obj), True))
    return outcomes


def apply_awaiting(client: Client, objects: Iterable[dict[str, Any]]) -> list[Outcome]:
    """`apply_all`, waiting after each object that carries a `pulumi.com/waitFor: jsonpath=...` annotation until the
    cluster shows what it asks, as `pulumi up` does before it creates what depends on it (a ComputeDomain before its
    job: Kueue holds a workload whose claim template is missing for good). One that never does is refused."""
    outcomes = []
    for obj in sorted(objects, key=_rank):
        [outcome] = apply_all(client, [obj])
        condition = ((obj.get("metadata") or {}).get("annotations") or {}).get(WAIT_FOR, "")
        waits = outcome.accepted and condition.startswith("jsonpath=")
        if waits and not _await(client, obj, condition.removeprefix("jsonpath=")):
            outcome = Outcome(key(obj), False, f"not {condition} after {WAIT_FOR_TIMEOUT:.0f}s ({WAIT_FOR})")
        outcomes.append(outcome)
    return outcomes


def _await(client: Client, obj: dict[str, Any], expression: str) -> bool:
    """Whether the stored object comes to satisfy a kubectl-wait style `{.a.b}` (present) or `{.a.b}=value`."""
    path, _, wanted = expression.partition("=")
    fields = path.strip().removeprefix("{").removesuffix("}").strip(".").split(".")
    deadline = time.monotonic() + WAIT_FOR_TIMEOUT
    while time.monotonic() < deadline:
        value: Any = client.get(client.path_of(obj))
        for field in fields:
            value = value.get(field) if isinstance(value, dict) else None
        if value not in (None, "", [], {}) and (not wanted or str(value) == wanted):
            return True
        time.sleep(0.5)
    return False
