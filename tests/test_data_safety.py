"""Checkpoint and dataset storage outlives everything else: removing jobs, pools or networks never touches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import stacks
from tests.support.pulumi_mocks import RecordingMonitor, run, use_stack

REPO = Path(__file__).resolve().parents[1]
DEV = REPO / "Pulumi.dev.yaml"
STORAGE_KINDS = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "Namespace")


def storage(monitor: RecordingMonitor) -> dict[tuple[str, str], tuple[Any, bool, bool]]:
    return {
        (r.type, r.name): (r.inputs, r.protect, r.retain_on_delete)
        for r in monitor.registrations
        if r.inputs.get("kind") in STORAGE_KINDS
    }


def deploy(monitor: RecordingMonitor, config: dict[str, Any]) -> dict[tuple[str, str], tuple[Any, bool, bool]]:
    monitor.registrations.clear()
    use_stack(monitor, DEV, config)
    run(lambda: stacks.run(stacks.load()))
    return storage(monitor)


def dev() -> dict[str, Any]:
    return yaml.safe_load(DEV.read_text())["config"]


def without_jobs(config: dict[str, Any]) -> dict[str, Any]:
    config["gpu-training:jobs"] = []
    return config


def without_network(config: dict[str, Any]) -> dict[str, Any]:
    config["gpu-training:jobs"] = []
    config["gpu-training:network"] = {"networks": []}
    config["gpu-training:nodePools"][0].update({"fabric": "tcp", "networks": []})
    for key in ("rails", "trafficClass", "serviceLevel"):
        config["gpu-training:nodePools"][0].pop(key, None)
    return config


def with_another_pool(config: dict[str, Any]) -> dict[str, Any]:
    config["gpu-training:nodePools"].append(
        {
            "name": "a100",
            "gpusPerNode": 8,
            "maxNodes": 2,
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        }
    )
    return config


@pytest.mark.parametrize("change", [without_jobs, without_network, with_another_pool], ids=lambda f: f.__name__)
def test_storage_is_untouched(pulumi_mocks: RecordingMonitor, monkeypatch, change) -> None:
    monkeypatch.chdir(REPO)
    before = deploy(pulumi_mocks, dev())
    after = deploy(pulumi_mocks, change(dev()))
    assert after == before
    claims = [v for (t, _), v in before.items() if t.endswith("PersistentVolumeClaim")]
    assert claims and all(protect and retain for _, protect, retain in claims)
    classes = [v for (t, _), v in before.items() if t.endswith("StorageClass")]
    assert classes and all(inputs["reclaimPolicy"] == "Retain" and retain for inputs, _, retain in classes)


def test_a_volume_removed_from_config_is_a_protected_resource_pulumi_will_not_delete(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    # With protect, `pulumi up` after removing a volume fails rather than deleting the claim; with
    # retainOnDelete, an explicit unprotect-and-delete still leaves the data on the cluster.
    monkeypatch.chdir(REPO)
    found = deploy(pulumi_mocks, dev())
    claim = next(v for (t, n), v in found.items() if n.endswith("training-checkpoints") and t.endswith("Claim"))
    assert claim[1] and claim[2]
