"""components/allocatable.py: every pod we emit requests only what a node of its pool advertises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from components.allocatable import GPU_RESOURCE, allocatable, pod_requests, unadvertised
from components.pool import POOL_LABEL, Pool
from components.render import render
from components.rules.pods import templates
from components.validation import resolve_file
from tests.support.factories import pool

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted([*REPO.glob("Pulumi.*.yaml"), *REPO.glob("examples/minimal/Pulumi.*.yaml")])


def _stack_variants(tmp: Path) -> list[Path]:
    """Every stack, and each AWS stack once more with its pools on the other provisioner."""
    variants = list(STACKS)
    for path in STACKS:
        doc = yaml.safe_load(path.read_text())
        pools = doc["config"].get("gpu-training:nodePools", [])
        if doc["config"].get("gpu-training:cluster", {}).get("provider") != "aws" or not pools:
            continue
        for spec in pools:
            spec["provisioner"] = "nodegroup" if spec.get("provisioner", "karpenter") == "karpenter" else "karpenter"
        other = tmp / f"other-provisioner-{path.name}"
        other.write_text(yaml.safe_dump(doc, sort_keys=False))
        variants.append(other)
    return variants


def _pool_of(metadata: dict[str, Any], pools: dict[str, Pool]) -> Pool | None:
    return pools.get((metadata.get("labels") or {}).get(POOL_LABEL, ""))


def test_every_pod_of_every_stack_requests_only_what_its_pools_nodes_advertise(tmp_path: Path) -> None:
    checked = set()
    for path in _stack_variants(tmp_path):
        stack = resolve_file(path)
        for obj in render(stack).objects:
            for template in templates(obj):
                target = _pool_of(template.metadata, stack.pools)
                if target is None:
                    continue
                requests = pod_requests(template.spec)
                assert not unadvertised(requests, target), f"{path.name}: {obj['kind']} {obj['metadata']['name']}"
                checked.add((path.name, target.provisioner, target.fabric))
    # The check reached pods on every provisioner and on the fabrics the stacks use.
    assert {p for _, p, _ in checked} >= {"karpenter", "nodegroup", "gke", None}
    assert {f for _, _, f in checked} >= {"efa", "roce", "tcpxo"}


def test_huge_pages_are_never_advertised_so_never_requested() -> None:
    for fabric in ("efa", "roce", "infiniband", "tcp"):
        assert not [r for r in allocatable(pool(fabric)) if r.startswith("hugepages-")]
    assert unadvertised({"hugepages-2Mi": "5120Mi"}, pool("efa")) == [
        "requests hugepages-2Mi: 5120Mi, which no node of pool 'p5' advertises"
    ]


def test_a_p5_node_advertises_its_gpus_and_every_efa_device() -> None:
    offered = allocatable(pool("efa"))
    assert offered[GPU_RESOURCE] == "8"
    assert offered["vpc.amazonaws.com/efa"] == "32"
    assert {"cpu", "memory"} <= offered.keys()


def test_device_plugin_resources_are_advertised_in_an_amount_the_stack_does_not_fix() -> None:
    roce = pool("roce")
    assert roce.rdma_resource and allocatable(roce)[roce.rdma_resource] is None
    assert not unadvertised({roce.rdma_resource: "1"}, roce)


def test_pod_requests_count_sidecars_and_the_largest_init_container() -> None:
    def c(cpu: str, **extra: Any) -> dict[str, Any]:
        return {"name": "x", "resources": {"requests": {"cpu": cpu}}, **extra}

    spec = {"containers": [c("2"), c("1")], "initContainers": [c("5"), c("1", restartPolicy="Always")]}
    assert pod_requests(spec) == {"cpu": "5"}
    spec["initContainers"] = [c("3"), c("1", restartPolicy="Always")]
    assert pod_requests(spec) == {"cpu": "4"}


@given(gpus=st.integers(min_value=1, max_value=16), efa=st.integers(min_value=0, max_value=64))
def test_a_request_fits_exactly_when_it_is_at_most_what_the_node_has(gpus: int, efa: int) -> None:
    p5 = pool("efa")
    problems = unadvertised({GPU_RESOURCE: str(gpus), "vpc.amazonaws.com/efa": str(efa)}, p5)
    assert bool(problems) == (gpus > p5.gpus_per_node or efa > p5.efa_interfaces)
