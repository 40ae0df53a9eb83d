"""Queued provisioning: which pools get their nodes through ProvisioningRequests, with what class, and every
combination that cannot work refused with the key that breaks it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from components import provisioning
from components.config import parse_stack
from components.errors import ConfigError
from components.models import NodePoolSpec
from components.render import render
from components.resolution import resolve
from components.stack import Stack

GKE: dict[str, Any] = {"provider": "gcp", "name": "train", "project": "my-project", "region": "us-central1"}
EKS: dict[str, Any] = {"provider": "aws", "name": "train", "region": "us-east-1"}
EXISTING: dict[str, Any] = {"provider": "existing", "name": "lab", "context": "lab"}
A3 = {"name": "a3", "machineType": "a3-highgpu-8g", "zone": "us-central1-a", "maxNodes": 4}
P5 = {"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a", "maxNodes": 4}
H100 = {"name": "h100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": {"gpu": "h100"}}
KUEUE = {"type": "kueue", "queues": [{"name": "research", "gpus": 32}]}


def stack(cluster: dict[str, Any], pool: dict[str, Any], scheduler: dict[str, Any] | None = None) -> Stack:
    return resolve(parse_stack({"cluster": cluster, "nodePools": [pool], "scheduler": scheduler or KUEUE}))


def issues(cluster: dict[str, Any], pool: dict[str, Any], scheduler: dict[str, Any] | None = None) -> list[Any]:
    with pytest.raises(ConfigError) as caught:
        stack(cluster, pool, scheduler)
    return [(i.path, i.message) for i in caught.value.issues]


def test_true_is_short_for_enabled_and_the_defaults_are_kueues() -> None:
    spec = NodePoolSpec.model_validate({**A3, "queuedProvisioning": True})
    assert spec.queued_provisioning.enabled and spec.queued_provisioning.retries == 3
    assert spec.queued_provisioning.class_name is None
    assert not NodePoolSpec.model_validate(A3).queued_provisioning.enabled


def test_a_class_name_that_kueue_would_refuse_is_an_error() -> None:
    with pytest.raises(ValidationError, match="is not a provisioning class name"):
        NodePoolSpec.model_validate({**A3, "queuedProvisioning": {"enabled": True, "className": "Not_A_Class"}})


def test_a_gke_pool_is_flex_start_from_zero_with_gkes_class_and_tolerates_the_queued_taint() -> None:
    pool = stack(GKE, {**A3, "queuedProvisioning": True}).pools["a3"]
    assert pool.provisioning_class == "queued-provisioning.gke.io"
    assert pool.capacity == "flex-start", "queued provisioning on GKE is DWS flex-start"
    assert pool.placement == "none", "flex-start takes no compact placement"
    assert provisioning.GKE_QUEUED_TAINT in pool.taints
    assert pool.scaling() == "0-4 nodes, GKE queued provisioning"


def test_an_eks_pool_is_a_node_group_served_by_the_cluster_autoscalers_atomic_class() -> None:
    pool = stack(EKS, {**P5, "queuedProvisioning": True}).pools["p5"]
    assert (pool.provisioner, pool.min_nodes) == ("nodegroup", 0), "Karpenter would be the default from zero"
    assert pool.provisioning_class == "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    assert provisioning.GKE_QUEUED_TAINT not in pool.taints
    assert pool.scaling() == "0-4 nodes, node group + Cluster Autoscaler (ProvisioningRequests)"


def test_an_eks_pool_may_ask_only_for_a_capacity_check() -> None:
    queued = {"enabled": True, "className": "check-capacity.autoscaling.x-k8s.io"}
    pool = stack(EKS, {**P5, "minNodes": 2, "queuedProvisioning": queued}).pools["p5"]
    assert pool.provisioning_class == "check-capacity.autoscaling.x-k8s.io"


def test_an_existing_cluster_names_the_class_its_autoscaler_serves() -> None:
    assert issues(EXISTING, {**H100, "queuedProvisioning": True}) == [
        (
            "nodePools[0].queuedProvisioning.className",
            "is required on an existing cluster: the ProvisioningRequest class its autoscaler serves (e.g. "
            "best-effort-atomic-scale-up.autoscaling.x-k8s.io with the Cluster Autoscaler's "
            "--enable-provisioning-requests, queued-provisioning.gke.io on GKE)",
        )
    ]
    named = {"enabled": True, "className": "example.com/not-a-path".replace("/", ".")}
    assert stack(EXISTING, {**H100, "queuedProvisioning": named}).pools["h100"].provisioning_class == (
        "example.com.not-a-path"
    )


def test_karpenter_serves_no_provisioning_request() -> None:
    found = issues(EKS, {**P5, "provisioner": "karpenter", "queuedProvisioning": True})
    assert found == [
        (
            "nodePools[0].provisioner",
            "Karpenter serves no ProvisioningRequest (it makes nodes for pending pods, not for requests): use "
            "provisioner: nodegroup, the default with queuedProvisioning, whose Cluster Autoscaler serves them",
        )
    ]


@pytest.mark.parametrize("scheduler", [{"type": "volcano"}, {"type": "none"}], ids=["volcano", "none"])
def test_only_kueue_makes_provisioning_requests(scheduler: dict[str, Any]) -> None:
    ((path, message),) = issues(GKE, {**A3, "queuedProvisioning": True}, scheduler)
    assert path == "nodePools[0].queuedProvisioning.enabled"
    runs = {
        "volcano": "runs volcano (Volcano has no ProvisioningRequest support)",
        "none": "runs no scheduler",
    }[scheduler["type"]]
    assert message == (
        "pool 'a3' is provisioned through ProvisioningRequests, which only Kueue's admission check makes, and the "
        f"stack {runs}: set scheduler.type: kueue, or drop queuedProvisioning"
    )


@pytest.mark.parametrize(
    "capacity",
    [{"type": "spot"}, {"type": "reservation", "reservationId": "r1"}, {"type": "on-demand"}],
    ids=lambda c: c["type"],
)
def test_gkes_queued_provisioning_is_flex_start_and_nothing_else(capacity: dict[str, Any]) -> None:
    found = issues(GKE, {**A3, "capacity": capacity, "queuedProvisioning": True})
    assert found == [
        (
            "nodePools[0].capacity.type",
            f"GKE's queued provisioning is DWS flex-start capacity, not {capacity['type']} (no reservation, no spot): "
            "set flex-start (the default with queuedProvisioning), or drop queuedProvisioning",
        )
    ]


def test_gkes_queued_pools_scale_from_zero_without_compact_placement() -> None:
    found = dict(issues(GKE, {**A3, "minNodes": 1, "placement": "compact", "queuedProvisioning": True}))
    assert found["nodePools[0].minNodes"] == "a flex-start pool scales from zero: set minNodes: 0"
    assert found["nodePools[0].placement"] == "flex-start capacity takes no compact placement: set none"


def test_gke_and_eks_classes_are_derived_and_another_is_refused() -> None:
    other = {"enabled": True, "className": "best-effort-atomic-scale-up.autoscaling.x-k8s.io"}
    assert issues(GKE, {**A3, "queuedProvisioning": other}) == [
        (
            "nodePools[0].queuedProvisioning.className",
            "GKE's queued node pools are provisioned through queued-provisioning.gke.io: drop className",
        )
    ]
    ((path, message),) = issues(EKS, {**P5, "queuedProvisioning": {"enabled": True, "className": "x.example.com"}})
    assert path == "nodePools[0].queuedProvisioning.className" and message.startswith("the Cluster Autoscaler serves")


def test_settings_of_queued_provisioning_that_is_off_are_refused() -> None:
    assert issues(EKS, {**P5, "queuedProvisioning": {"retries": 5}}) == [
        ("nodePools[0].queuedProvisioning.retries", "has no effect while queuedProvisioning is off: drop it")
    ]


def test_an_autoscaler_before_1_30_2_serves_no_atomic_class() -> None:
    found = issues({**EKS, "kubernetesVersion": "1.29"}, {**P5, "queuedProvisioning": True})
    # EKS no longer offers 1.29 at all, which comes first; the autoscaler's own limit follows.
    assert found[0][0] == "cluster.kubernetesVersion" and "EKS has not offered 1.29" in found[0][1]
    assert found[1:] == [
        (
            "cluster.kubernetesVersion",
            "pool 'p5' is provisioned through ProvisioningRequests, which the Cluster Autoscaler serves "
            "(best-effort-atomic-scale-up.autoscaling.x-k8s.io) from v1.30.2, and v1.29.5 is the release for 1.29: "
            "use Kubernetes 1.30 or later",
        )
    ]


def test_render_says_what_a_job_on_the_pool_waits_for() -> None:
    summary = render(stack(GKE, {**A3, "queuedProvisioning": True})).summary()
    assert (
        "    admission: Kueue admits a job once a ProvisioningRequest (queued-provisioning.gke.io) is provisioned: "
        "GKE's Dynamic Workload Scheduler provisions all its nodes at once (flex-start, up to 7 days)"
    ) in summary.splitlines()
    eks = render(stack(EKS, {**P5, "queuedProvisioning": True})).summary()
    assert "the Cluster Autoscaler scales the node group up by all its nodes at once" in eks
    assert "admission:" not in render(stack(EKS, P5)).summary()


def test_a_pool_written_back_with_its_defaults_stays_valid() -> None:
    # to_config() writes every default out: those are not settings of a queued provisioning that is off.
    pool = {**P5, "queuedProvisioning": {"enabled": False, "className": None, "retries": 3}}
    assert stack(EKS, pool).pools["p5"].provisioning_class is None
