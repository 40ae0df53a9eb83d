"""Fabric device resources come from the stack and the objects under review, or a documented list; never from
the shape of a name."""

from __future__ import annotations

import copy
from typing import Any

from components import rules
from components.rules import devices
from components.rules.rule import Settings
from components.rules.subjects import from_objects, from_pools
from tests.rules.corpus import good
from tests.support.factories import pool

RAILS = [f"nvidia.com/ib_rail{n}" for n in range(8)]


def roce_job(resources: dict[str, int]) -> dict[str, Any]:
    """Our RoCE PyTorchJob (NCCL_IB_DISABLE=0) with the worker's device resources replaced."""
    job = copy.deepcopy(good()[-1])
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        limits = replica["template"]["spec"]["containers"][0]["resources"]
        for section in ("limits", "requests"):
            limits[section] = {"nvidia.com/gpu": 8, **resources}
    return job


def nad(name: str, resource: str) -> dict[str, Any]:
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {
            "name": name,
            "namespace": "training",
            "annotations": {"k8s.v1.cni.cncf.io/resourceName": resource},
        },
        "spec": {"config": "{}"},
    }


def blocking(subjects: list[Any]) -> list[str]:
    return [
        f.message for f in rules.run(subjects, Settings()) if f.rule == "rdma-devices" and f.enforcement == "mandatory"
    ]


def test_eight_sriov_rails_named_by_their_nads_are_rdma_devices() -> None:
    job = roce_job({r: 1 for r in RAILS})
    assert blocking(from_objects([job, *(nad(f"rail{n}", r) for n, r in enumerate(RAILS))])) == []
    assert blocking(from_objects([job])) == [], (
        "an extended resource the rules cannot place is given the benefit of the doubt"
    )


def test_a_pod_with_no_device_at_all_is_caught_and_a_stack_makes_the_list_complete() -> None:
    assert blocking(from_objects([roce_job({})])) == [
        f"{role}/pytorch: turns InfiniBand verbs on (NCCL_IB_DISABLE=0) but requests no RDMA device resource"
        for role in ("Master", "Worker")
    ]
    stack = from_pools([pool("roce")])
    assert devices.known(stack)[1], "a stack's pools state every device resource of the cluster"
    assert len(blocking(from_objects([roce_job({"example.com/not-a-nic": 1})]) + stack)) == 2
    assert blocking(from_objects([roce_job({"rdma/rdma_shared_device_a": 1})]) + stack) == []


def test_the_nic_cluster_policys_shared_device_plugin_names_its_resources() -> None:
    policy = {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": "NicClusterPolicy",
        "metadata": {"name": "nic-cluster-policy"},
        "spec": {
            "rdmaSharedDevicePlugin": {"config": '{"configList": [{"resourceName": "hca_rail", "rdmaHcaMax": 63}]}'}
        },
    }
    known, complete = devices.known(from_objects([policy]))
    assert "rdma/hca_rail" in known and not complete
