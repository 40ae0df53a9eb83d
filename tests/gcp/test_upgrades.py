"""How a GKE cluster's versions move: the least GPUDirect patch, the maintenance window and exclusions."""

from __future__ import annotations

from typing import Any

import pytest

from components.errors import ConfigError
from components.gcp.upgrades import maintenance_policy, master_version
from components.models import GcpClusterSpec, NetworkConfig, NodePoolSpec
from components.models.cluster import DEFAULT_KUBERNETES_VERSION
from components.pool import Pool, resolve_pools, version_numbers
from components.versions import CLUSTER_AUTOSCALER_IMAGES
from tests.addons.stacks import stack_file

CLUSTER = {"provider": "gcp", "name": "train", "project": "ml", "region": "us-central1"}


def spec(**fields: Any) -> GcpClusterSpec:
    return GcpClusterSpec.model_validate({**CLUSTER, **fields})


def pools(*machines: str, version: str = "1.31") -> list[Pool]:
    specs = [
        NodePoolSpec.model_validate({"name": f"p{i}", "machineType": m, "maxNodes": 2, "zone": "us-central1-a"})
        for i, m in enumerate(machines)
    ]
    found, issues = resolve_pools(specs, "gcp", "us-central1", NetworkConfig(), kubernetes_version=version)
    assert not issues, issues
    return list(found.values())


def test_the_default_minor_is_one_every_provider_supports_and_the_autoscaler_has() -> None:
    assert DEFAULT_KUBERNETES_VERSION == "1.35" and DEFAULT_KUBERNETES_VERSION in CLUSTER_AUTOSCALER_IMAGES
    assert spec().kubernetes_version == "1.35"


@pytest.mark.parametrize(
    ("machines", "version", "expected"),
    [
        (("a3-megagpu-8g",), "1.31", "1.31.14-gke.1243000"),
        (("a3-megagpu-8g", "a3-highgpu-8g"), "1.29", "1.29.15-gke.2467000"),
        (("a3-megagpu-8g",), "1.33", "1.33"),
        (("g2-standard-48",), "1.31", "1.31"),
        (("a3-megagpu-8g",), "1.31.20-gke.1", "1.31.20-gke.1"),
    ],
)
def test_a_minor_is_raised_to_the_least_patch_its_gpudirect_pools_run_on(
    machines: tuple[str, ...], version: str, expected: str
) -> None:
    assert master_version(version, pools(*machines, version=version)) == expected


def test_patches_compare_by_number_not_by_text() -> None:
    assert version_numbers("1.31.14-gke.1243000") > version_numbers("1.31.9-gke.9999999")


@pytest.mark.parametrize(
    ("machine", "version", "least"),
    [("a3-megagpu-8g", "1.31.9-gke.1000", "1.31.14-gke.1243000"), ("a3-highgpu-8g", "1.29.1-gke.1", "1.29.15")],
)
def test_an_exact_version_below_the_fabrics_least_patch_names_cluster_kubernetes_version(
    machine: str, version: str, least: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file(
            "gke",
            cluster={**CLUSTER, "kubernetesVersion": version},
            nodePools=[{"name": "gpu", "machineType": machine, "maxNodes": 2, "zone": "us-central1-a"}],
        )
    (issue,) = [i for i in caught.value.issues if i.path == "cluster.kubernetesVersion"]
    assert least in issue.message and "or the minor alone" in issue.message


def test_an_exact_version_at_the_least_patch_or_on_a_newer_minor_is_fine() -> None:
    for version in ("1.31.14-gke.1243000", "1.35.1-gke.1396000"):
        stack_file(
            "gke",
            cluster={**CLUSTER, "kubernetesVersion": version},
            nodePools=[{"name": "gpu", "machineType": "a3-megagpu-8g", "maxNodes": 2, "zone": "us-central1-a"}],
        )


def test_gpu_pools_hold_minor_and_node_upgrades_back_until_the_end_of_support() -> None:
    assert maintenance_policy(spec(), has_gpu_pools=True) == {
        "daily_maintenance_window": {"start_time": "09:00"},
        "maintenance_exclusions": [
            {
                "exclusion_name": "gpu-training-no-minor-or-node-upgrades",
                "start_time": "2026-01-01T00:00:00Z",
                "exclusion_options": {
                    "scope": "NO_MINOR_OR_NODE_UPGRADES",
                    "end_time_behavior": "UNTIL_END_OF_SUPPORT",
                },
            }
        ],
    }
    assert maintenance_policy(spec(), has_gpu_pools=False)["maintenance_exclusions"] == []


def test_the_users_window_and_exclusions_replace_the_default() -> None:
    own = spec(
        maintenance={
            "dailyWindowStart": "03:30",
            "exclusions": [
                {"name": "launch", "startTime": "2026-12-01T00:00:00Z", "endTime": "2026-12-20T00:00:00Z"},
                {"name": "freeze", "startTime": "2026-12-01T00:00:00Z", "scope": "NO_MINOR_UPGRADES"},
            ],
        }
    )
    policy = maintenance_policy(own, has_gpu_pools=True)
    assert policy["daily_maintenance_window"] == {"start_time": "03:30"}
    assert policy["maintenance_exclusions"] == [
        {
            "exclusion_name": "launch",
            "start_time": "2026-12-01T00:00:00Z",
            "end_time": "2026-12-20T00:00:00Z",
            "exclusion_options": {"scope": "NO_MINOR_OR_NODE_UPGRADES"},
        },
        {
            "exclusion_name": "freeze",
            "start_time": "2026-12-01T00:00:00Z",
            "exclusion_options": {"scope": "NO_MINOR_UPGRADES", "end_time_behavior": "UNTIL_END_OF_SUPPORT"},
        },
    ]
    none = spec(maintenance={"exclusions": []})
    assert maintenance_policy(none, has_gpu_pools=True)["maintenance_exclusions"] == [], "an explicit opt-out"


@pytest.mark.parametrize(
    ("fields", "path", "message"),
    [
        ({"kubernetesVersion": "1.35.1"}, "cluster.kubernetesVersion", "nor a GKE version"),
        ({"maintenance": {"dailyWindowStart": "9:00"}}, "cluster.maintenance.dailyWindowStart", "HH:MM"),
        (
            {"maintenance": {"exclusions": [{"name": "x", "startTime": "2026-12-01"}]}},
            "cluster.maintenance.exclusions[0].startTime",
            "RFC 3339",
        ),
        (
            {
                "maintenance": {
                    "exclusions": [
                        {"name": "x", "startTime": "2026-12-02T00:00:00Z", "endTime": "2026-12-01T00:00:00Z"}
                    ]
                }
            },
            "cluster.maintenance.exclusions[0].endTime",
            "is not after startTime",
        ),
    ],
)
def test_a_bad_version_or_maintenance_setting_names_its_path(fields: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file("gke", cluster={**CLUSTER, **fields})
    assert any(i.path == path and message in i.message for i in caught.value.issues), caught.value.issues
