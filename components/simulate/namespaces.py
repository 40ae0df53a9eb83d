"""Stand-in namespaces: the namespaces a stack's objects go to that an add-on's install creates, not the stack (Helm
creates its release's namespace), made for a simulated cluster, which installs no add-on."""

from __future__ import annotations

from typing import Any

BUILT_IN = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has."""


def stand_ins(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A Namespace for each namespace of `objects` that no Namespace among them declares (nor every cluster has)."""
    declared = BUILT_IN | {o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace"}
    used = sorted({o["metadata"]["namespace"] for o in objects if o.get("metadata", {}).get("namespace")} - declared)
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {"gpu-training/simulated": "true"}},
        }
        for name in used
    ]
