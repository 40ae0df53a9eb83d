"""components/simulate/nodes.py and volumes.py: fake nodes shaped like a pool, and stand-in volumes (pure)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from components.allocatable import allocatable
from components.models.platform import TopologyLevelSpec
from components.simulate.nodes import (
    KWOK_ANNOTATION,
    POOL_ANNOTATION,
    UNFIXED_DEVICES,
    UNKNOWN_MEMORY,
    assumptions,
    cpu_nodes,
    pool_nodes,
    pool_of,
)
from components.simulate.volumes import stand_ins
from components.topology import domain_sizes, provider_topology
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


def _counts(nodes: list[dict[str, Any]], label: str) -> list[int]:
    return sorted(Counter(n["metadata"]["labels"][label] for n in nodes).values())


def test_topology_domains_hold_the_catalogs_nodes_and_an_existing_clusters_are_assumed() -> None:
    a3 = pool("tcpxo").model_copy(update={"topology": provider_topology("gcp", "a3-megagpu-8g", [])})
    nodes = pool_nodes(a3, 40)
    sizes = domain_sizes(a3.topology, "gcp", "a3-megagpu-8g")
    subblock, block = sizes["subblock"].nodes, sizes["block"].nodes
    assert block % subblock == 0 and block > subblock
    assert _counts(nodes, "cloud.google.com/gce-topology-subblock") == sorted([subblock, subblock, 40 - 2 * subblock])
    assert _counts(nodes, "cloud.google.com/gce-topology-host") == [1] * 40, "a whole-host VM is its own host"
    assert len({n["metadata"]["labels"]["kubernetes.io/hostname"] for n in nodes}) == 40
    declared = [TopologyLevelSpec(name="rack", node_label="example.com/rack")]
    rack = pool("tcp").model_copy(update={"topology": provider_topology("existing", None, declared)})
    assert domain_sizes(rack.topology, "existing", None)["rack"].assumed
    assert any("rack of 16 nodes" in said for said in assumptions(rack))


def test_an_a4x_sub_block_is_its_nvlink_domain_of_eighteen_as_google_documents() -> None:
    topology = provider_topology("gcp", "a4x-highgpu-4g", [], nvlink=True)
    assert topology is not None
    sizes = domain_sizes(topology, "gcp", "a4x-highgpu-4g", 18)
    assert (sizes["subblock"].nodes, sizes["subblock"].assumed) == (18, False)
    assert sizes["nvlink"].nodes == 18 and sizes["block"].assumed
    # A smaller NVLink partition than the network's finest level: each coarser domain holds whole ones.
    eks = domain_sizes(provider_topology("aws", "p6e-gb200.36xlarge", [], nvlink=True), "aws", "p6e-gb200.36xlarge", 9)
    assert eks["nvlink"].nodes == 9 and eks["layer-3"].nodes % 9 == 0 and eks["layer-3"].assumed


def test_a_pool_of_an_unknown_machine_advertises_what_it_states_else_an_assumption_it_names() -> None:
    unknown = pool("tcp")
    [node] = pool_nodes(unknown, 1)
    assert node["status"]["allocatable"]["memory"] == UNKNOWN_MEMORY
    assert any("memory 512Gi" in said and "allocatable" in said for said in assumptions(unknown))
    stated = pool("tcp", allocatable={"cpu": "190", "memory": "1900Gi"})
    [node] = pool_nodes(stated, 1)
    assert (node["status"]["allocatable"]["cpu"], node["status"]["allocatable"]["memory"]) == ("190", "1900Gi")
    assert assumptions(stated) == []


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
