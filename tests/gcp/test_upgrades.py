"""How a GKE cluster's versions move: the maintenance window and exclusions."""

from __future__ import annotations

from typing import Any

import pytest

from components.errors import ConfigError
from components.gcp.upgrades import maintenance_policy
from components.models import GcpClusterSpec
from tests.addons.stacks import stack_file

CLUSTER = {"provider": "gcp", "name": "train", "project": "ml-project", "region": "us-central1"}


def spec(**fields: Any) -> GcpClusterSpec:
    return GcpClusterSpec.model_validate({**CLUSTER, **fields})


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
        (
            {
                "maintenance": {
                    "exclusions": [{"name": "freeze", "startTime": "2026-12-01T00:00:00Z", "scope": "NO_UPGRADES"}]
                }
            },
            "cluster.maintenance.exclusions[0].endTime",
            "is required with scope NO_UPGRADES",
        ),
        (
            {
                "maintenance": {
                    "exclusions": [
                        {"name": "freeze", "startTime": "2026-12-01T00:00:00Z"},
                        {"name": "freeze", "startTime": "2027-01-01T00:00:00Z"},
                    ]
                }
            },
            "cluster.maintenance.exclusions[1].name",
            "names another exclusion too",
        ),
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
