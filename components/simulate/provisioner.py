"""simulate's stand-in for the autoscaler that serves ProvisioningRequests: a pool provisioned all at once starts
with no nodes, and this adds them when Kueue asks.

It is ours, not the autoscaler: GKE's `queued-provisioning.gke.io` is served only by GKE's own autoscaler, and the
Cluster Autoscaler (which serves `best-effort-atomic-scale-up.autoscaling.x-k8s.io`) is not served by the Go module
proxy here, so no real one can run. It watches the ProvisioningRequests of the stack's classes, as the autoscaler
does, and for each one not yet answered: reads its pod templates and counts, works out the pool's nodes they need
(the pool whose node selector the template carries; pods per node by GPUs), uses the pool's idle nodes first, adds
the rest as kwok nodes shaped like the pool's, all at once and only within the pool's maxNodes, and then sets the
request's Accepted and Provisioned conditions as the autoscaler does (autoscaling.x-k8s.io/v1 types.go conditions).
A request that does not fit gets Provisioned=False with the reason, and waits for room.

What it proves: Kueue's real admission check creates the request, holds the job while it is unanswered, and admits
the whole job once it is Provisioned, and the pods then schedule on the pool's new nodes. What it does not: that
GKE's Dynamic Workload Scheduler or the Cluster Autoscaler would find the capacity, how long they take, their
booking expiry, scale-down, or that a cloud provider scales a node group atomically.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from components.pool import Pool
from components.rules.podtemplate import gpus_of
from components.simulate import nodes
from components.simulate.client import Client, conditions_of, one_round

API = "autoscaling.x-k8s.io/v1"
KIND = "ProvisioningRequest"
INTERVAL = 0.5
REASON = "SimulatedProvisioning"
"""The reason on the conditions it sets, so a reader of the request knows who answered it."""


class Provisioner:
    """A background loop that answers the stack's ProvisioningRequests with kwok nodes of their pools."""

    def __init__(self, client: Callable[[], Client], pools: Iterable[Pool], node_cap: int) -> None:
        self._client = client
        self._pools = {p.name: p for p in pools if p.provisioning_class is not None}
        self._classes = {p.provisioning_class for p in self._pools.values()}
        self._cap = node_cap
        self._booked: dict[str, list[str]] = {}
        """Nodes each answered request (by uid) holds for its pods, until the request is gone."""
        self._running = threading.Event()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="provisioner", daemon=True)
        self.errors: list[str] = []

    @property
    def serves(self) -> bool:
        """Whether the stack has a pool provisioned through ProvisioningRequests."""
        return bool(self._pools)

    def start(self) -> None:
        """Answer requests from now on, in the background."""
        self._running.set()
        self._thread.start()

    def pause(self) -> None:
        """Leave requests unanswered until `resume` (a test's way to watch a job wait)."""
        self._running.clear()

    def resume(self) -> None:
        """Answer requests again."""
        self._running.set()

    def stop(self) -> None:
        """End the loop."""
        self._stopped.set()
        self._running.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stopped.is_set():
            self._running.wait()
            if self._stopped.is_set():
                return
            one_round(self.sync, self.errors)
            time.sleep(INTERVAL)

    def sync(self) -> None:
        """Answer every request of the stack's classes that has no answer yet."""
        client = self._client()
        requests = [r for r in client.list(API, KIND) if r["spec"].get("provisioningClassName") in self._classes]
        live = {r["metadata"]["uid"] for r in requests}
        self._booked = {uid: held for uid, held in self._booked.items() if uid in live}
        for request in requests:
            states = {c["type"]: c.get("status") for c in conditions_of(request)}
            if states.get("Provisioned") == "True" or states.get("Failed") == "True":
                continue
            self._answer(client, request)

    def _answer(self, client: Client, request: dict[str, Any]) -> None:
        meta = request["metadata"]
        demand: dict[str, int] = {}
        for pod_set in request["spec"]["podSets"]:
            path = client.resource("v1", "PodTemplate").path(meta["namespace"], pod_set["podTemplateRef"]["name"])
            template = client.get(path)
            if template is None:
                return  # Kueue makes the templates first; next round
            spec = template["template"]["spec"]
            pool = self._pool_of(spec)
            if pool is None:
                self._set(client, request, "Failed", "True", f"no pool of the stack matches {meta['name']}'s pods")
                return
            per_node = max(1, pool.gpus_per_node // max(1, gpus_of(spec)))
            demand[pool.name] = demand.get(pool.name, 0) + math.ceil(int(pod_set["count"]) / per_node)
        held: list[str] = []
        for name, count in demand.items():
            pool = self._pools[name]
            idle = self._idle(client, pool)
            present = len(self._nodes_of(client, pool))
            most = min(pool.max_nodes, self._cap)
            new = max(0, count - len(idle))
            if present + new > most:
                message = (
                    f"pool {name} needs {count} nodes for this request and has {len(idle)} idle of {present}, at most "
                    f"{most} (maxNodes): waiting for room (simulate's stand-in autoscaler)"
                )
                self._set(client, request, "Provisioned", "False", message, accepted=True)
                return
            held += idle[:count]
            made = nodes.pool_nodes(pool, new, first=_next_index(self._nodes_of(client, pool)))
            for node in made:
                client.apply(node)
            held += [n["metadata"]["name"] for n in made]
        self._booked[meta["uid"]] = held
        counts = ", ".join(f"{n} x {p}" for p, n in demand.items())
        message = f"provisioned {counts} at once (simulate's stand-in for the autoscaler)"
        self._set(client, request, "Provisioned", "True", message, accepted=True)

    def _pool_of(self, spec: dict[str, Any]) -> Pool | None:
        selector = spec.get("nodeSelector") or {}
        return next((p for p in self._pools.values() if p.node_selector.items() <= selector.items()), None)

    def _nodes_of(self, client: Client, pool: Pool) -> list[dict[str, Any]]:
        return [n for n in client.list("v1", "Node") if nodes.pool_of(n) == pool.name]

    def _idle(self, client: Client, pool: Pool) -> list[str]:
        """The pool's nodes that no GPU pod runs on and no answered request holds."""
        busy = {
            p["spec"].get("nodeName")
            for p in client.list("v1", "Pod")
            if gpus_of(p["spec"]) and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
        }
        held = {name for names in self._booked.values() for name in names}
        return [n["metadata"]["name"] for n in self._nodes_of(client, pool) if n["metadata"]["name"] not in busy | held]

    def _set(
        self, client: Client, request: dict[str, Any], kind: str, status: str, message: str, *, accepted: bool = False
    ) -> None:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        known = {c["type"]: c for c in conditions_of(request)}
        wanted = [("Accepted", "True", "the request's class is served")] if accepted else []
        wanted.append((kind, status, message))
        conditions = dict(known)
        for type_, value, text in wanted:
            same = known.get(type_, {}).get("status") == value
            conditions[type_] = {
                "type": type_,
                "status": value,
                "reason": REASON,
                "message": text,
                "lastTransitionTime": known[type_]["lastTransitionTime"] if same else now,
            }
        if conditions == known:
            return
        path = client.path_of(request) + "/status"
        body = {"status": {"conditions": list(conditions.values())}}
        client.request("PATCH", path, json.dumps(body).encode(), "application/merge-patch+json")


def _next_index(existing: list[dict[str, Any]]) -> int:
    """The index the pool's next node is named with: one past the highest of its nodes."""
    indexes = [int(n["metadata"]["name"].rpartition("-")[2]) for n in existing]
    return max(indexes, default=-1) + 1
