"""Stand-in namespaces: those a stack's objects go to that the stack does not create, because an add-on's install
does (Helm creates its release's namespace: kube-prometheus-stack's `monitoring`) or the cluster already has them (a
Prometheus Operator of yours, in its namespace). A simulated cluster installs no add-on and has nothing of yours."""

from __future__ import annotations

from typing import Any

from components.observability import pack as packs
from components.render import Rendered

BUILT_IN = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has."""


def provided(rendered: Rendered) -> set[str]:
    """The namespaces the stack relies on others for: its add-ons' and its monitoring's."""
    pack = packs.resolve(rendered.stack.config)
    names = {r.namespace for r in rendered.addons.releases}
    if pack.operator:
        names |= {pack.namespace, pack.dashboards_namespace}
    return names - BUILT_IN


def stand_ins(rendered: Rendered) -> list[dict[str, Any]]:
    """A Namespace for each namespace the stack's objects use and others provide (none the stack creates: a stack
    that forgot one of its own still fails in simulate)."""
    declared = {o["metadata"]["name"] for o in rendered.objects if o["kind"] == "Namespace"}
    used = {o["metadata"]["namespace"] for o in rendered.objects if o["metadata"].get("namespace")}
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {"gpu-training/simulated": "true"}},
        }
        for name in sorted((used & provided(rendered)) - declared)
    ]
