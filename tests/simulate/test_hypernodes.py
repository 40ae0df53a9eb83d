"""Finding the HyperNodes Volcano's label discovery made twice."""

from __future__ import annotations

from typing import Any

from components.simulate import hypernodes

LAYER = "topology.k8s.aws/network-node-layer-3"


def _hypernode(name: str, tier: int, value: str, source: str | None = "label") -> dict[str, Any]:
    labels = {LAYER: value} | ({hypernodes.SOURCE_LABEL: source} if source else {})
    return {"metadata": {"name": name, "labels": labels}, "spec": {"tier": tier, "members": []}}


def test_a_second_hypernode_for_one_label_value_is_a_copy_and_the_first_name_is_kept() -> None:
    """Discovery, run again, keeps the first name in order; the later ones are the copies to delete."""
    found = [
        _hypernode("hypernode-aws-tier1-zzzzz", 1, "nn-a"),
        _hypernode("hypernode-aws-tier1-aaaaa", 1, "nn-a"),
        _hypernode("hypernode-aws-tier1-bbbbb", 1, "nn-b"),
        _hypernode("hypernode-aws-tier1-mmmmm", 1, "nn-a"),
    ]
    assert hypernodes.copies(found) == ["hypernode-aws-tier1-mmmmm", "hypernode-aws-tier1-zzzzz"]


def test_distinct_domains_and_hypernodes_made_by_hand_are_left_alone() -> None:
    """One HyperNode per tier and value is a whole tree; a HyperNode no discoverer made is the user's."""
    found = [
        _hypernode("a", 1, "nn-a"),
        _hypernode("b", 1, "nn-b"),
        _hypernode("c", 2, "nn-a"),
        _hypernode("by-hand", 1, "nn-a", source=None),
    ]
    assert hypernodes.copies(found) == []
