"""GKE's pool rules (components/gcp/pools.py): version floors of GPUDirect, the accelerator network profile and
DRANET, compact placement and the 1x72 sub-block, GKE's own taints."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import catalog
from components.errors import Issue
from components.models import NetworkConfig, NodePoolSpec
from components.pool import Pool
from components.pools import resolve_pools
from tests.support.pools import A3, issue_at, one, resolve


@pytest.mark.parametrize(
    ("spec", "placement"),
    [
        (A3, "compact"),
        ({**A3, "zone": None}, "none"),
        ({**A3, "capacity": {"type": "reservation", "reservationId": "a3-res"}}, "none"),
    ],
)
def test_default_placement(spec: dict[str, Any], placement: str) -> None:
    assert one("gcp", spec).placement == placement


def test_placement_of_the_other_cloud() -> None:
    _, issues = resolve("gcp", {**A3, "placement": "cluster"})
    assert issue_at(issues, "nodePools[0].placement")


def test_gkes_autoscaler_makes_a_gke_pools_nodes() -> None:
    assert one("gcp", A3).provisioner == "gke"


def test_an_eks_provisioner_on_a_gke_pool_names_the_key() -> None:
    _, issues = resolve("gcp", {**A3, "provisioner": "karpenter"})
    assert "GKE pools scale with GKE's autoscaler" in issue_at(issues, "nodePools[0].provisioner").message


# GKE versions: each GPUDirect machine's least GKE patch (a catalog fact), for a minor alone or an exact version.

GPUDIRECT_MACHINES = [m for m in catalog.names("gcp") if (found := catalog.lookup("gcp", m)) and found.gpudirect]


def version_issues(machine: str, version: str, **spec: Any) -> list[Issue]:
    """The issues a GKE pool of `machine` on its own fabric has on cluster version `version`."""
    pools = [
        NodePoolSpec.model_validate(
            {"name": "gpu", "machineType": machine, "maxNodes": 2, "zone": "us-central1-a", **spec}
        )
    ]
    _, issues = resolve_pools(pools, "gcp", "us-central1", NetworkConfig(), kubernetes_version=version)
    return issues


@pytest.mark.parametrize(
    ("machine", "version", "least"),
    [
        ("a3-megagpu-8g", "1.31.9-gke.1000", "1.31.14-gke.1243000"),
        ("a3-highgpu-8g", "1.29.1-gke.1", "1.29.15-gke.2467000"),
        ("a3-ultragpu-8g", "1.31.3-gke.9", "1.31.4-gke.1183000"),
        ("a3-ultragpu-8g", "1.30.14-gke.1", "1.31.4-gke.1183000"),
        ("a4-highgpu-8g", "1.32.1-gke.1", "1.32.2-gke.1422000"),
        ("a4-highgpu-8g", "1.31", "1.32.2-gke.1422000"),
    ],
)
def test_a_version_below_the_machines_least_gke_patch_names_cluster_kubernetes_version(
    machine: str, version: str, least: str
) -> None:
    issue = issue_at(version_issues(machine, version), "cluster.kubernetesVersion")
    assert least in issue.message and machine in issue.message, issue.message


@pytest.mark.parametrize(
    ("machine", "version"),
    [
        ("a3-megagpu-8g", "1.31"),
        ("a3-megagpu-8g", "1.31.14-gke.1243000"),
        ("a3-megagpu-8g", "1.33.5-gke.1"),
        ("a3-ultragpu-8g", "1.31"),
        ("a4-highgpu-8g", "1.32"),
        ("a4-highgpu-8g", "1.35.1-gke.1396000"),
    ],
)
def test_a_minor_alone_or_a_version_at_the_least_patch_runs_the_fabric(machine: str, version: str) -> None:
    assert not version_issues(machine, version)


@settings(max_examples=60, deadline=None)
@given(
    machine=st.sampled_from(GPUDIRECT_MACHINES),
    minor=st.integers(29, 37),
    patch=st.integers(0, 20),
    build=st.integers(0, 3_000_000),
)
def test_a_minor_alone_stands_for_its_newest_patch_and_a_newer_one_never_breaks_a_fabric(
    machine: str, minor: int, patch: int, build: int
) -> None:
    def fine(version: str) -> bool:
        return not [i for i in version_issues(machine, version) if i.path == "cluster.kubernetesVersion"]

    exact = f"1.{minor}.{patch}-gke.{build}"
    assert fine(f"1.{minor}") == fine(f"1.{minor}.999-gke.99999999"), "GKE takes a minor to its newest patch"
    if fine(exact):
        assert fine(f"1.{minor}.{patch + 1}-gke.0") and fine(f"1.{minor + 1}")


def test_gke_managed_rdma_needs_its_first_version_even_on_an_exact_134_patch() -> None:
    issues = version_issues("a4-highgpu-8g", "1.34.0-gke.5", acceleratorNetworkProfile="auto")
    assert "1.34.1-gke.1829001" in issue_at(issues, "nodePools[0].acceleratorNetworkProfile").message
    assert not version_issues("a4-highgpu-8g", "1.34.1-gke.1829001", acceleratorNetworkProfile="auto")


# -- GKE rack-scale pools (A4X, A4X Max) ------------------------------------------------------------

A4X = {
    "name": "gb200",
    "machineType": "a4x-highgpu-4g",
    "maxNodes": 18,
    "zone": "us-central1-a",
    "capacity": {"type": "reservation", "reservationId": "gb200-block"},
}


A4X_MAX = {**A4X, "name": "gb300", "machineType": "a4x-maxgpu-4g-metal"}


def gke_resolve(spec: dict[str, Any], version: str) -> tuple[dict[str, Pool], list[Issue]]:
    return resolve_pools(
        [NodePoolSpec.model_validate(spec)], "gcp", "us-central1", NetworkConfig(), kubernetes_version=version
    )


def test_an_arm64_gke_pool_tolerates_gkes_arm_taint_beside_its_own() -> None:
    gb200 = one("gcp", A4X)
    assert gb200.arch == "arm64" and gb200.nvlink_domain_nodes == 18
    assert [(t.key, t.value) for t in gb200.taints] == [("nvidia.com/gpu", "present"), ("kubernetes.io/arch", "arm64")]
    custom = one("gcp", {**A4X, "taints": [{"key": "team", "value": "llm"}]})
    assert [t.key for t in custom.taints] == ["team", "kubernetes.io/arch"], "GKE puts it whatever the pool says"
    assert all(t.key != "kubernetes.io/arch" for t in one("gcp", A3).taints), "x86 nodes carry no Arm taint"


def test_a_gke_rack_scale_pool_is_placed_in_its_sub_block_even_on_a_reservation() -> None:
    assert one("gcp", A4X).placement == "compact", "the 1x72 workload policy"
    assert one("gcp", {**A4X, "placement": "none"}).placement == "none"
    assert one("gcp", {**A4X, "zone": None}).placement == "none", "a workload policy keeps its pool in one zone"
    assert one("gcp", {**A3, "capacity": {"type": "reservation", "reservationId": "r"}}).placement == "none"


def test_a_gke_rack_scale_pool_holds_at_most_one_1x72_sub_block() -> None:
    _, issues = resolve("gcp", {**A4X, "maxNodes": 36})
    assert "one pool per sub-block" in issue_at(issues, "nodePools[0].maxNodes").message
    _, issues = resolve("gcp", {**A4X, "maxNodes": 36, "placement": "none"})
    assert not issues, "without the workload policy the pool may span sub-blocks"
    _, issues = resolve("gcp", {**A4X, "nvlinkDomainNodes": 19})
    assert "at most 18" in issue_at(issues, "nodePools[0].nvlinkDomainNodes").message


def test_a4x_on_gke_1_35_claims_its_nics_through_gkes_accelerator_network_profile() -> None:
    pools, issues = gke_resolve(A4X, "1.35")
    assert not issues
    assert pools["gb200"].dranet and not pools["gb200"].roce_metal
    assert (pools["gb200"].gpu_nics, pools["gb200"].extra_gvnics) == (4, 0), "GKE makes them all"


def test_a4x_max_is_bare_metal_rdma_over_the_metal_roce_network_with_dranet() -> None:
    pools, issues = gke_resolve(A4X_MAX, "1.34")
    assert not issues, "a minor alone is GKE's newest patch of it, past 1.34.3-gke.1318000"
    gb300 = pools["gb300"]
    assert gb300.fabric == "rdma" and gb300.dranet and gb300.roce_metal
    assert (gb300.gpu_nics, gb300.extra_gvnics, gb300.fabric_gbps) == (8, 1, 3200)


@pytest.mark.parametrize("profile", ["none", "auto"])
def test_a4x_max_takes_no_accelerator_network_profile(profile: str) -> None:
    _, issues = gke_resolve({**A4X_MAX, "acceleratorNetworkProfile": profile}, "1.35")
    assert "vpc-roce-metal" in issue_at(issues, "nodePools[0].acceleratorNetworkProfile").message


def test_a4x_max_needs_gke_1_34_3_gke_1318000() -> None:
    _, issues = gke_resolve(A4X_MAX, "1.34.1-gke.1829001")
    assert "1.34.3-gke.1318000 or later" in issue_at(issues, "cluster.kubernetesVersion").message
    _, issues = gke_resolve(A4X_MAX, "1.33")
    assert "1.34.3-gke.1318000" in issue_at(issues, "cluster.kubernetesVersion").message
    _, issues = gke_resolve(A4X_MAX, "1.34.3-gke.1318000")
    assert not issues
