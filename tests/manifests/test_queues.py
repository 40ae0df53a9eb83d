"""Tests for Volcano Queues and Kueue ResourceFlavors, ClusterQueues and LocalQueues."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import quantity
from components.fabric import profile
from components.manifests import platform
from components.manifests.queues import (
    DEFAULT_COHORT,
    admission_check,
    cluster_queue,
    default_flavor,
    local_queue,
    pool_capacity,
    provisioning_request_config,
    resource_flavor,
    volcano_queue,
)
from components.models import NetworkConfig, NodePoolSpec, QueueSpec
from components.pool import Pool
from components.pools import resolve_pools
from components.wellknown import NODE_CHECK_NAMESPACE
from tests.addons.stacks import stack_file
from tests.support.factories import SRIOV_NETWORK, pool
from tests.support.schemas import assert_valid, errors


def queue(**fields: Any) -> QueueSpec:
    return QueueSpec.model_validate({"name": "research", "gpus": 32, **fields})


def sriov_pool() -> Pool:
    network = NetworkConfig.model_validate({"networks": [SRIOV_NETWORK], "rdma": {"sharedDevicePlugin": False}})
    spec = NodePoolSpec.model_validate(
        {
            "name": "a100",
            "gpusPerNode": 8,
            "maxNodes": 2,
            "fabric": "roce",
            "networks": ["sriov-net"],
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        }
    )
    pools, issues = resolve_pools([spec], "existing", None, network)
    assert not issues
    return pools["a100"]


def flavors(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    group = obj["spec"]["resourceGroups"][0]
    return {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}


# -- Volcano ------------------------------------------------------------------------------------


def test_volcano_queue_caps_gpus() -> None:
    obj = volcano_queue(queue(gpus=32, weight=3, reclaimable=False))
    assert (obj["apiVersion"], obj["kind"]) == ("scheduling.volcano.sh/v1beta1", "Queue")
    assert obj["metadata"]["name"] == "research"
    assert "namespace" not in obj["metadata"]
    assert obj["spec"]["capability"] == {"nvidia.com/gpu": "32"}
    assert obj["spec"]["weight"] == 3
    assert obj["spec"]["reclaimable"] is False


def test_pulumi_waits_for_a_volcano_queue_to_open_before_the_jobs_on_it() -> None:
    """Volcano's PodGroup webhook refuses a group on a queue not yet Open (seen on the real Volcano in simulate)."""
    annotations = volcano_queue(queue())["metadata"]["annotations"]
    assert annotations["pulumi.com/waitFor"] == "jsonpath={.status.state}=Open"


def test_volcano_queue_defaults() -> None:
    spec = volcano_queue(queue())["spec"]
    assert (spec["weight"], spec["reclaimable"]) == (1, True)


@pytest.mark.parametrize("fields", [{}, {"gpus": 0}, {"weight": 10, "reclaimable": False}])
def test_volcano_queue_validates(fields: dict[str, Any]) -> None:
    assert_valid(volcano_queue(queue(**fields)))


# -- Kueue ResourceFlavor -----------------------------------------------------------------------


def test_flavor_selects_the_pools_nodes_and_carries_its_taints() -> None:
    obj = resource_flavor(pool("tcp"))
    assert obj["kind"] == "ResourceFlavor"
    assert obj["metadata"]["name"] == "h100"
    assert obj["spec"]["nodeLabels"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert obj["spec"]["nodeTaints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]


def test_flavor_of_a_pool_this_stack_creates_selects_its_pool_label() -> None:
    assert resource_flavor(pool("efa"))["spec"]["nodeLabels"] == {"gpu-training/pool": "p5"}


def test_flavor_of_an_untainted_pool_has_no_taints() -> None:
    assert "nodeTaints" not in resource_flavor(pool("tcp", taints=[]))["spec"]


@pytest.mark.parametrize("fabric", ["tcp", "roce", "efa"])
def test_flavor_validates(fabric: str) -> None:
    assert_valid(resource_flavor(pool(fabric)), resource_flavor(pool(fabric, taints=[{"key": "spot"}])))


# -- Kueue ClusterQueue -------------------------------------------------------------------------


def test_cluster_queue_covers_cpu_memory_and_gpus() -> None:
    obj = cluster_queue(queue(), [pool("tcp")])
    covered = obj["spec"]["resourceGroups"][0]["coveredResources"]
    assert covered == ["cpu", "memory", "nvidia.com/gpu"]
    assert "namespace" not in obj["metadata"]


def test_cluster_queue_covers_efa_devices() -> None:
    covered = cluster_queue(queue(), [pool("efa")])["spec"]["resourceGroups"][0]["coveredResources"]
    assert {"cpu", "memory", "nvidia.com/gpu", "vpc.amazonaws.com/efa"} <= set(covered)


def test_cluster_queue_covers_the_rdma_device() -> None:
    covered = cluster_queue(queue(), [pool("roce")])["spec"]["resourceGroups"][0]["coveredResources"]
    assert "rdma/rdma_shared_device_a" in covered


def test_cluster_queue_covers_sriov_vfs() -> None:
    covered = cluster_queue(queue(), [sriov_pool()])["spec"]["resourceGroups"][0]["coveredResources"]
    assert "nvidia.com/sriov_rdma_vf" in covered


@pytest.mark.parametrize("fabric", ["tcp", "roce", "infiniband", "efa"])
def test_cluster_queue_covers_everything_a_worker_requests(fabric: str) -> None:
    p = pool(fabric)
    covered = cluster_queue(queue(), [p])["spec"]["resourceGroups"][0]["coveredResources"]
    assert set(profile(p, "training").resources) <= set(covered)


def test_every_flavor_lists_the_covered_resources_in_order() -> None:
    pools = [pool("tcp"), pool("efa"), sriov_pool()]
    obj = cluster_queue(queue(), pools)
    group = obj["spec"]["resourceGroups"][0]
    covered = group["coveredResources"]
    assert len(covered) == len(set(covered))
    assert [f["name"] for f in group["flavors"]] == ["h100", "p5", "a100", "default-flavor"]
    for flavor in group["flavors"]:
        assert [r["name"] for r in flavor["resources"]] == covered


def test_cpu_only_pods_are_admitted_on_the_untainted_default_flavor_without_gpus() -> None:
    quotas = flavors(cluster_queue(queue(), [pool("efa")]))["default-flavor"]
    assert int(quotas["cpu"]) > 0 and quotas["memory"] != "0"
    assert quotas["nvidia.com/gpu"] == "0" and quotas["vpc.amazonaws.com/efa"] == "0"
    assert default_flavor()["spec"] == {}
    assert_valid(default_flavor())


def test_a_flavor_offers_none_of_a_resource_its_pool_lacks() -> None:
    quotas = flavors(cluster_queue(queue(), [pool("tcp"), pool("efa")]))
    assert quotas["h100"]["vpc.amazonaws.com/efa"] == "0"
    assert quotas["p5"]["vpc.amazonaws.com/efa"] == str(32 * 4)


def test_gpu_quota_is_the_queues_share_of_the_pool() -> None:
    assert flavors(cluster_queue(queue(gpus=16), [pool("tcp")]))["h100"]["nvidia.com/gpu"] == "16"
    assert flavors(cluster_queue(queue(gpus=1000), [pool("tcp")]))["h100"]["nvidia.com/gpu"] == "32"


@settings(max_examples=30, deadline=None)
@given(gpus=st.integers(0, 512), max_nodes=st.integers(1, 32))
def test_gpu_quota_is_the_smaller_of_queue_and_pool(gpus: int, max_nodes: int) -> None:
    p = pool("tcp", maxNodes=max_nodes)
    quota = flavors(cluster_queue(queue(gpus=gpus), [p]))["h100"]["nvidia.com/gpu"]
    assert quota == str(min(gpus, 8 * max_nodes))


def test_catalogued_pool_bounds_cpu_and_memory_by_its_nodes() -> None:
    capacity = pool_capacity(pool("efa"))  # 4 x p5.48xlarge: 192 vCPU, 2048 GiB each
    assert capacity["cpu"] == str(192 * 4)
    assert capacity["memory"] == f"{2048 * 4}Gi"
    assert capacity["nvidia.com/gpu"] == "32"


@pytest.mark.parametrize(
    "pools",
    [["tcp"], ["efa"], ["roce"], ["tcp", "efa"], ["roce", "efa"]],
)
def test_cluster_queue_validates(pools: list[str]) -> None:
    assert_valid(cluster_queue(queue(), [pool(f) for f in pools]))


def test_cluster_queue_with_sriov_validates() -> None:
    assert_valid(cluster_queue(queue(), [pool("tcp"), pool("efa"), sriov_pool()]))


def gpu_entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    group = obj["spec"]["resourceGroups"][0]
    return {f["name"]: next(r for r in f["resources"] if r["name"] == "nvidia.com/gpu") for f in group["flavors"]}


def test_cluster_queues_share_one_cohort_by_default() -> None:
    research = cluster_queue(queue(name="research"), [pool("tcp")])["spec"]
    prod = cluster_queue(queue(name="prod"), [pool("tcp")])["spec"]
    assert research["cohortName"] == prod["cohortName"] == DEFAULT_COHORT == "gpu-training"


def test_a_queue_names_its_own_cohort() -> None:
    assert cluster_queue(queue(cohort="team-a"), [pool("tcp")])["spec"]["cohortName"] == "team-a"


def test_cluster_queue_preempts_lower_priorities_and_reclaims_what_it_lent() -> None:
    spec = cluster_queue(queue(), [pool("tcp")])["spec"]
    assert spec["preemption"] == {
        "withinClusterQueue": "LowerPriority",
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }


def test_cluster_queue_quotas_are_written_as_kueues_webhook_writes_them_back() -> None:
    # Kueue's ClusterQueue webhook rewrites the object at create (kueue v0.19.2 pkg/webhooks/
    # clusterqueue_webhook.go:57), every quantity in its canonical form: 4096Gi written was 4Ti read, and the next
    # `pulumi up` updated the queue back (tests/engine/test_fleet.py saw it).
    queue = cluster_queue(QueueSpec(name="research", gpus=1000), [pool(maxNodes=128, gpusPerNode=8)])
    spec = queue["spec"]
    quotas = [
        value
        for flavor in spec["resourceGroups"][0]["flavors"]
        for entry in flavor["resources"]
        for field, value in entry.items()
        if field != "name"
    ]
    assert quotas and all(quantity.stored(q) == q for q in quotas), quotas
    default = next(f for f in spec["resourceGroups"][0]["flavors"] if f["name"] == "default-flavor")
    assert {r["name"]: r["nominalQuota"] for r in default["resources"]}["memory"] == "16Ti"


def test_cluster_queue_fair_share_weight_is_the_queue_weight() -> None:
    assert cluster_queue(queue(), [pool("tcp")])["spec"]["fairSharing"] == {"weight": "1"}
    assert cluster_queue(queue(weight=3), [pool("tcp")])["spec"]["fairSharing"] == {"weight": "3"}


def test_borrowing_and_lending_are_unlimited_by_default() -> None:
    for entry in gpu_entries(cluster_queue(queue(), [pool("tcp"), pool("efa")])).values():
        assert "borrowingLimit" not in entry and "lendingLimit" not in entry


def test_borrowing_and_lending_limits_bound_the_gpus_of_each_pool() -> None:
    obj = cluster_queue(queue(gpus=16, borrowingLimit=8, lendingLimit=4), [pool("tcp"), pool("efa")])
    entries = gpu_entries(obj)
    for name in ("h100", "p5"):
        assert entries[name] == {
            "name": "nvidia.com/gpu",
            "nominalQuota": "16",
            "borrowingLimit": "8",
            "lendingLimit": "4",
        }
    assert entries["default-flavor"] == {"name": "nvidia.com/gpu", "nominalQuota": "0"}, "launchers borrow no GPUs"
    cpu = obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert set(cpu) == {"name", "nominalQuota"}, "only GPUs are limited"
    assert_valid(obj)


def test_lending_limit_is_capped_at_the_pools_quota() -> None:
    # Kueue's webhook refuses a lendingLimit above the nominalQuota; a 32-GPU pool caps a 100-GPU queue.
    entry = gpu_entries(cluster_queue(queue(gpus=100, lendingLimit=64), [pool("tcp")]))["h100"]
    assert (entry["nominalQuota"], entry["lendingLimit"]) == ("32", "32")


@pytest.mark.parametrize(
    "fields",
    [{}, {"cohort": "team-a"}, {"gpus": 0, "borrowingLimit": 64}, {"lendingLimit": 0, "weight": 5}],
)
def test_cluster_queue_with_sharing_validates(fields: dict[str, Any]) -> None:
    assert_valid(cluster_queue(queue(**fields), [pool("tcp"), pool("efa")]))


def test_the_crd_would_refuse_borrowing_preemption_without_reclaim() -> None:
    # The CRD's rule that our preemption block must satisfy: checked here, so that a change of
    # reclaimWithinCohort to Never cannot pass unnoticed.
    obj = cluster_queue(queue(), [pool("tcp")])
    obj["spec"]["preemption"] = {**obj["spec"]["preemption"], "reclaimWithinCohort": "Never"}
    assert errors(obj) == [
        "ClusterQueue/research: spec.preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"
    ]


# -- Kueue LocalQueue ---------------------------------------------------------------------------


def test_local_queue_points_at_its_cluster_queue() -> None:
    obj = local_queue(queue(name="research"), "training")
    assert obj["kind"] == "LocalQueue"
    assert (obj["metadata"]["name"], obj["metadata"]["namespace"]) == ("research", "training")
    assert obj["spec"]["clusterQueue"] == "research"
    assert_valid(obj)


def test_kueue_objects_share_one_api_version() -> None:
    objs = [resource_flavor(pool("tcp")), cluster_queue(queue(), [pool("tcp")]), local_queue(queue(), "training")]
    assert {o["apiVersion"] for o in objs} == {"kueue.x-k8s.io/v1beta2"}
    assert_valid(*objs)


def queued_pool(provider: str = "gcp", **queued: Any) -> Pool:
    """A pool provisioned through ProvisioningRequests: GKE's a3 (flex-start) or EKS's p5 (node group)."""
    spec = {
        "gcp": {"name": "a3", "machineType": "a3-highgpu-8g", "zone": "us-central1-a"},
        "aws": {"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a"},
    }[provider]
    region = {"gcp": "us-central1", "aws": "us-east-1"}[provider]
    queued_spec = NodePoolSpec.model_validate(
        {**spec, "maxNodes": 4, "queuedProvisioning": {"enabled": True, **queued}}
    )
    pools, issues = resolve_pools([queued_spec], provider, region, NetworkConfig())
    assert not issues, issues
    return pools[queued_spec.name]


@pytest.mark.parametrize("provider", ["gcp", "aws"])
def test_a_queued_pools_check_asks_its_autoscaler_for_the_gpu_pod_sets_only(provider: str) -> None:
    pool = queued_pool(provider)
    config, check = provisioning_request_config(pool), admission_check(pool)
    assert_valid(config, check)
    assert check["metadata"]["name"] == config["metadata"]["name"] == f"{pool.name}-provisioning"
    assert check["spec"] == {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {
            "apiGroup": "kueue.x-k8s.io",
            "kind": "ProvisioningRequestConfig",
            "name": f"{pool.name}-provisioning",
        },
    }
    spec = config["spec"]
    assert spec["provisioningClassName"] == pool.provisioning_class
    assert spec["managedResources"] == ["nvidia.com/gpu"], "an MPIJob's launcher stays out of the request (kueue#2260)"
    assert spec["podSetMergePolicy"] == "IdenticalWorkloadSchedulingRequirements"
    assert spec["retryStrategy"] == {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}


def test_the_pools_retries_are_the_checks() -> None:
    config = provisioning_request_config(queued_pool("aws", retries=0))
    assert config["spec"]["retryStrategy"]["backoffLimitCount"] == 0
    assert_valid(config)


def test_a_pool_without_queued_provisioning_has_no_check() -> None:
    with pytest.raises(ValueError, match="not provisioned through ProvisioningRequests"):
        provisioning_request_config(pool())


def test_the_cluster_queue_applies_each_check_on_its_pools_flavor_only() -> None:
    queued, plain = queued_pool(), pool()
    obj = cluster_queue(queue(), [plain, queued])
    assert_valid(obj)
    assert obj["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "a3-provisioning", "onFlavors": ["a3"]}]
    }
    assert "admissionChecksStrategy" not in cluster_queue(queue(), [plain])["spec"]


def test_the_crd_refuses_a_check_without_a_class() -> None:
    config = provisioning_request_config(queued_pool())
    del config["spec"]["provisioningClassName"]
    assert errors(config), "the CRD requires provisioningClassName"


def test_a_queue_without_namespaces_reaches_every_job_namespace_but_not_the_node_checks() -> None:
    # The node check's DaemonSet pods are not Kueue's to admit: a LocalQueue there would be an unused object.
    stack = stack_file("dev", scheduler={"type": "kueue", "queues": [{"name": "research", "gpus": 32}]})
    assert stack.node_checks and NODE_CHECK_NAMESPACE in stack.namespaces
    locals_ = [o["metadata"]["namespace"] for o in platform.queues(stack) if o["kind"] == "LocalQueue"]
    assert NODE_CHECK_NAMESPACE not in locals_
    assert locals_ == [n for n in stack.namespaces if n != NODE_CHECK_NAMESPACE] and locals_
