"""The HyperNode tree Volcano's label discovery builds, and the repair of the one way it breaks on its own.

Volcano v1.14.1's label discoverer (pkg/controllers/hypernode/discovery/label/label.go, buildHyperNodeName) names
a HyperNode by finding the existing one for the same label value in its own HyperNode lister, and else makes a
new random name. When nodes join in a burst (a pool scaling up), a second discovery runs right after the first
one's HyperNodes were created, before that lister has seen them: every HyperNode is made again under new names,
and the controller's reconcile, reading a lister just as stale, deletes none of the first set. Two HyperNodes
then claim the same members; the scheduler's tree (pkg/scheduler/api/hyper_node_info.go, addChild) refuses a
member with two parents, and no job with a networkTopology is placed until a labelled node comes or goes, or a
HyperNode is deleted, and discovery runs again. v1.15.1's discoverer is the same code.

On a cluster, `kubectl delete hypernode <copy>` is the repair; `simulate` makes it and says so.
"""

from __future__ import annotations

from typing import Any

from components.simulate.client import Client

API_VERSION = "topology.volcano.sh/v1alpha1"
KIND = "HyperNode"
SOURCE_LABEL = "volcano.sh/network-topology-source"
"""Set by the controller on every HyperNode a discoverer made, naming the discoverer (pkg/controllers/hypernode/api)."""
LABEL_SOURCE = "label"


def _domain(hypernode: dict[str, Any]) -> tuple[int, tuple[tuple[str, str], ...]] | None:
    """What a label-discovered HyperNode stands for: its tier and the label value its nodes share."""
    meta = hypernode["metadata"]
    labels = dict(meta.get("labels") or {})
    if labels.pop(SOURCE_LABEL, None) != LABEL_SOURCE:
        return None
    return int(hypernode["spec"]["tier"]), tuple(sorted(labels.items()))


def copies(hypernodes: list[dict[str, Any]]) -> list[str]:
    """The names of label-discovered HyperNodes that stand for the same tier and label value as another. Each
    domain keeps its first name in order, the one discovery keeps when it runs again."""
    kept: set[tuple[int, tuple[tuple[str, str], ...]]] = set()
    found = []
    for hypernode in sorted(hypernodes, key=lambda h: h["metadata"]["name"]):
        domain = _domain(hypernode)
        if domain is None:
            continue
        if domain in kept:
            found.append(hypernode["metadata"]["name"])
        kept.add(domain)
    return found


def repair(client: Client) -> list[str]:
    """Delete the copies the discovery race left, so it runs again and rebuilds one tree; the names deleted."""
    doomed = copies(client.list(API_VERSION, KIND))
    for name in doomed:
        client.delete({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name}}, "Background")
    return doomed


def note(deleted: list[str]) -> str:
    """What `simulate` says when it repaired the tree."""
    return (
        f"Volcano's label discovery made HyperNodes twice as nodes joined at once ({', '.join(deleted)}): an "
        "upstream race (label.go reads a HyperNode lister that has not yet seen its own creates) that leaves "
        "members with two parents, and the scheduler places no topology-aware job until discovery runs again. "
        "Deleted the copies, as `kubectl delete hypernode` would on a cluster."
    )
