"""GPU pods tolerate the taints of the nodes they need: a defect against the stack's pools, advice without them,
nothing on EKS and GKE, which add the GPU toleration themselves."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components import rules
from components.rules.rule import Settings
from components.rules.subjects import from_objects, from_pools
from tests.rules.corpus import EIGHT_RAILS, good
from tests.support.factories import pool


def untolerated() -> dict[str, Any]:
    job = copy.deepcopy(good()[-1])
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        del replica["template"]["spec"]["tolerations"]
    return job


def found(subjects: list[Any], settings: Settings) -> list[tuple[str, str]]:
    return [(f.enforcement, f.message) for f in rules.run(subjects, settings) if f.rule == "gpu-placement"]


def test_against_the_stacks_pools_a_missing_toleration_is_a_defect_naming_the_taint() -> None:
    pools = from_pools([pool("roce", networks=[], rails=EIGHT_RAILS)])
    assert found(from_objects([untolerated()]) + pools, Settings(cluster="existing")) == [
        (
            "mandatory",
            f"{role} pods tolerate no nvidia.com/gpu=true:NoSchedule taint of pool h100, so they stay Pending",
        )
        for role in ("Master", "Worker")
    ]
    assert found(from_objects([good()[-1]]) + pools, Settings(cluster="existing")) == []


@pytest.mark.parametrize("cluster", ["eks", "gke"])
def test_eks_and_gke_add_the_gpu_toleration(cluster: str) -> None:
    pools = from_pools([pool("roce", networks=[], rails=EIGHT_RAILS)])
    assert found(from_objects([untolerated()]) + pools, Settings(cluster=cluster)) == []  # type: ignore[arg-type]


def test_without_pools_or_a_cluster_it_is_advice_and_no_node_selector_is_required() -> None:
    job = untolerated()
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["spec"].pop("nodeSelector", None)
    assert [level for level, _ in found(from_objects([job]), Settings())] == ["advisory", "advisory"]
    assert found(from_objects([good()[-1]]), Settings()) == []
