"""An existing cluster's pool rules (components/existing/pools.py): any type, catalogued or not; nothing about
making nodes applies."""

from __future__ import annotations

from tests.support.pools import EXISTING, SELECTOR, issue_at, one, resolve


def test_an_existing_clusters_pool_needs_no_instance_type_and_may_name_any() -> None:
    for extra in ({}, {"instanceType": "dgx-h100-custom"}):
        spec = {"name": "x", "gpusPerNode": 8, "maxNodes": 1, "nodeSelector": {"a": "b"}, **extra}
        assert one("existing", spec).gpus_per_node == 8


def test_existing_cluster_with_a_catalogued_type_derives_gpus() -> None:
    p = one(
        "existing",
        {"name": "h100", "instanceType": "p5.48xlarge", "maxNodes": 2, "nodeSelector": SELECTOR, "fabric": "tcp"},
    )
    assert p.gpus_per_node == 8


def test_existing_cluster_takes_no_capacity_type() -> None:
    _, issues = resolve("existing", {**EXISTING, "capacity": {"type": "spot"}})
    assert issue_at(issues, "nodePools[0].capacity.type")


def test_default_placement() -> None:
    assert one("existing", EXISTING).placement == "none"


def test_nothing_makes_an_existing_clusters_nodes() -> None:
    assert one("existing", EXISTING).provisioner is None


def test_an_eks_provisioner_on_an_existing_cluster_names_the_key() -> None:
    _, issues = resolve("existing", {**EXISTING, "provisioner": "nodegroup"})
    assert "nodes are not made here" in issue_at(issues, "nodePools[0].provisioner").message
