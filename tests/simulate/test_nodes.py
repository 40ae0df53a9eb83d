"""components/simulate/nodes.py and volumes.py: fake nodes shaped like a pool, and stand-in volumes (pure)."""

from __future__ import annotations

from collections import Counter

from components.allocatable import allocatable
from components.simulate.nodes import KWOK_ANNOTATION, POOL_ANNOTATION, UNFIXED_DEVICES, cpu_nodes, pool_nodes, pool_of
from components.simulate.volumes import stand_ins
from components.topology import Level, Topology
from tests.support.factories import pool


def test_a_fake_node_advertises_what_a_node_of_its_pool_does() -> None:
    p5 = pool("efa")
    [node] = pool_nodes(p5, 1)
    status = node["status"]
    assert status["allocatable"] == status["capacity"]
    for name, amount in allocatable(p5).items():
        assert status["allocatable"][name] == (amount or UNFIXED_DEVICES)
    assert not [r for r in status["allocatable"] if r.startswith("hugepages-")]
    assert node["metadata"]["annotations"][KWOK_ANNOTATION] == "fake", "kwok manages only these"


def test_a_fake_node_carries_the_pools_taints_labels_and_selector() -> None:
    roce = pool("roce")
    [node] = pool_nodes(roce, 1)
    labels = node["metadata"]["labels"]
    assert {k: labels[k] for k in roce.node_selector} == roce.node_selector, "the selector wins over our defaults"
    assert {k: labels[k] for k in roce.labels} == roce.labels
    assert node["spec"]["taints"] == [t.model_dump() for t in roce.taints]
    assert labels["kubernetes.io/hostname"] == node["metadata"]["name"]


def test_topology_blocks_hold_twice_the_nodes_of_their_sub_blocks() -> None:
    levels = [
        Level(name="block", node_label="example.com/block"),
        Level(name="subblock", node_label="example.com/subblock"),
        Level(name="host", node_label="kubernetes.io/hostname", one_node=True),
    ]
    shaped = pool("tcp").model_copy(update={"topology": Topology(name="t", levels=levels)})
    nodes = pool_nodes(shaped, 16)
    blocks = Counter(n["metadata"]["labels"]["example.com/block"] for n in nodes)
    subblocks = Counter(n["metadata"]["labels"]["example.com/subblock"] for n in nodes)
    assert sorted(blocks.values()) == [8, 8]
    assert sorted(subblocks.values()) == [4, 4, 4, 4]
    assert len({n["metadata"]["labels"]["kubernetes.io/hostname"] for n in nodes}) == 16


def test_each_claim_gets_one_volume_bound_to_it_unless_the_stack_makes_it() -> None:
    claims = [
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "ckpt", "namespace": "training"},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "nfs",
                "resources": {"requests": {"storage": "2Ti"}},
            },
        },
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "training"},
            "spec": {"volumeName": "lustre"},
        },
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "own", "namespace": "training"},
            "spec": {"volumeName": "made"},
        },
        {"kind": "PersistentVolume", "metadata": {"name": "made"}, "spec": {}},
    ]
    volumes = {v["metadata"]["name"]: v["spec"] for v in stand_ins(claims)}
    assert set(volumes) == {"simulated-training-ckpt", "lustre"}
    ckpt = volumes["simulated-training-ckpt"]
    assert ckpt["claimRef"] == {"namespace": "training", "name": "ckpt"}
    assert (ckpt["storageClassName"], ckpt["capacity"]["storage"], ckpt["accessModes"]) == (
        "nfs",
        "2Ti",
        ["ReadWriteMany"],
    )


def test_cpu_nodes_are_untainted_and_have_no_gpus() -> None:
    made = cpu_nodes(2)
    assert [n["metadata"]["name"] for n in made] == ["cpu-0", "cpu-1"]
    for node in made:
        assert node["spec"]["taints"] == []
        assert not [r for r in node["status"]["allocatable"] if r.endswith("/gpu")]
        assert node["metadata"]["annotations"][KWOK_ANNOTATION] == "fake"
        assert pool_of(node) is None


def test_a_fake_node_says_which_pool_it_stands_for_in_an_annotation_nothing_schedules_by() -> None:
    roce = pool("roce")
    [node] = pool_nodes(roce, 1)
    assert pool_of(node) == roce.name
    assert POOL_ANNOTATION not in node["metadata"]["labels"]
