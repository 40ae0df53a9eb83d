"""The Platform component: one stack's platform from a Stack, a StackConfig or config keys, under one parent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components import Platform
from components.config import parse_stack
from components.kubernetes.objects import StackConfigError
from components.resolution import resolve_file
from tests.support.pulumi_mocks import RecordingMonitor, built_inputs, resolved, run

REPO = Path(__file__).resolve().parents[1]


def _keys(stack: str) -> dict[str, Any]:
    """A stack file's config keys without the project namespace, as a Python or YAML program writes them."""
    config = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {
        key.removeprefix("gpu-training:"): value for key, value in config.items() if key.startswith("gpu-training:")
    }


def _registered(monitor: RecordingMonitor) -> dict[tuple[str, str], dict[str, Any]]:
    found = {(r.type, r.name): built_inputs(r) for r in monitor.registrations}
    monitor.registrations.clear()
    return found


@pytest.mark.parametrize("stack", ["dev", "prod", "gke"])
def test_config_keys_a_stack_config_and_a_stack_build_the_same(pulumi_mocks: RecordingMonitor, stack: str) -> None:
    run(lambda: Platform("gpu-training", _keys(stack)))
    from_keys = _registered(pulumi_mocks)
    run(lambda: Platform("gpu-training", parse_stack(_keys(stack))))
    from_model = _registered(pulumi_mocks)
    run(lambda: Platform("gpu-training", resolve_file(REPO / f"Pulumi.{stack}.yaml")))
    from_file = _registered(pulumi_mocks)
    assert from_keys == from_model == from_file
    assert len(from_keys) > 40


def test_the_cluster_add_ons_objects_checks_and_jobs_are_its_children(pulumi_mocks: RecordingMonitor) -> None:
    platform = run(lambda: Platform("gpu-training", _keys("dev")))
    component = pulumi_mocks.named("gpu-training")
    assert component.type == "gpu-training:index:Platform"
    children = {r.name: r for r in pulumi_mocks.registrations if r.parent == component.urn}
    assert set(children) == {
        "train-dev",
        "addons",
        "platform",
        "fabric-check-h100",
        "training-llama-finetune",
        "training-llama-pretrain",
        "training-ds-finetune",
        "training-nccl-allreduce",
    }
    # Each was made at the stack's root before Platform existed: the alias keeps its URN (tests/test_names.py).
    assert all([a.spec.noParent for a in r.aliases] == [True] for r in children.values())
    assert platform.provider is platform.cluster.provider


def test_outputs(pulumi_mocks: RecordingMonitor) -> None:
    platform = run(lambda: Platform("gpu-training", _keys("dev")))
    assert resolved(platform.kubeconfig)[1], "the kubeconfig is a secret"
    assert resolved(platform.scheduler)[0] == "volcano"
    assert resolved(platform.default_queue)[0] == "research"
    assert resolved(platform.runtimes)[0] == {
        "h100": {
            "torch": "h100-torch",
            "deepspeed": "h100-deepspeed",
            "mpi": "h100-mpi",
            "tensorflow": "h100-tensorflow",
        }
    }
    pools, _ = resolved(platform.pools)
    assert pools["h100"]["gpusPerNode"] == 8 and pools["h100"]["fabric"] == "roce"
    jobs, _ = resolved(platform.jobs)
    assert jobs["training/llama-finetune"] == {"workload": "PyTorchJob/training/llama-finetune", "worldSize": 32}
    checks, _ = resolved(platform.fabric_checks)
    assert checks["h100"]["enabled"] is True


def test_a_config_mistake_is_a_clean_error_naming_the_key(pulumi_mocks: RecordingMonitor) -> None:
    keys = _keys("dev")
    keys["nodePools"][0]["gpusPerNode"] = 0
    with pytest.raises(StackConfigError) as raised:
        Platform("gpu-training", keys)
    message = str(raised.value)
    assert "Platform gpu-training" in message and "nodePools[0].gpusPerNode" in message
    assert not pulumi_mocks.registrations[1:], "nothing but the component itself is registered"
