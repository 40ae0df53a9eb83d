"""Run-time repair per provider: which agent, what a stack cannot honour, and what render says per pool."""

from __future__ import annotations

from typing import Any

import pytest

from components import repair
from components.errors import ConfigError
from components.models.health import RepairSpec
from tests.addons.stacks import stack_file


def test_each_provider_gets_its_own_agent_by_default() -> None:
    assert repair.agent(stack_file("prod").config) == "eks-node-monitoring-agent"
    assert repair.agent(stack_file("gke").config) == "gke"
    assert repair.agent(stack_file("dev").config) == "nvsentinel"


def test_off_means_no_agent_and_render_says_so() -> None:
    stack = stack_file("prod", health={"repair": {"enabled": False}})
    assert repair.agent(stack.config) is None and repair.eks(stack.config) is None
    (pool,) = stack.pools.values()
    assert repair.pool_line(stack.config, pool) == "off (health.repair.enabled: false)"
    assert repair.by_pool(stack.config, stack.pools.values()) == {pool.name: None}


def test_an_existing_cluster_without_the_gpu_operator_has_no_agent_rather_than_an_error() -> None:
    stack = stack_file(
        "dev",
        gpuOperator={"enabled": False},
        nodePools=[{"name": "h100", "gpusPerNode": 8, "maxNodes": 2, "nodeSelector": {"gpu": "h100"}}],
        jobs=[],
    )
    assert repair.agent(stack.config) is None
    assert "gpuOperator.enabled is false" in repair.pool_line(stack.config, stack.pools["h100"])


def test_karpenter_and_node_group_pools_say_who_acts() -> None:
    karpenter = stack_file("prod")
    (p5,) = karpenter.pools.values()
    line = repair.pool_line(karpenter.config, p5)
    assert line.startswith("EKS node monitoring agent v1.7.0-eksbuild.1") and "Karpenter node repair" in line
    group = stack_file(
        "prod",
        nodePools=[{"name": "g6e", "instanceType": "g6e.48xlarge", "minNodes": 1, "maxNodes": 4, "zone": "us-east-1b"}],
        health={"repair": {"maxParallelNodes": 2}},
        jobs=[],
    )
    assert "EKS node auto repair replaces or reboots it, 2 node(s)" in repair.pool_line(
        group.config, group.pools["g6e"]
    )
    assert repair.eks(group.config).node_repair_config() == {"enabled": True, "max_parallel_nodes_repaired_count": 2}


def test_gke_says_what_auto_repair_acts_on_and_that_xids_are_not_documented_criteria() -> None:
    stack = stack_file("gke")
    line = repair.pool_line(stack.config, next(iter(stack.pools.values())))
    assert "GKE node auto-repair drains" in line and "XidCriticalError" in line


def test_nvsentinel_evicts_and_reboots_only_when_asked() -> None:
    stack = stack_file("dev")
    line = repair.pool_line(stack.config, stack.pools["h100"])
    assert "evicts" in line and "no reboot" in line
    rebooting = stack_file("dev", health={"repair": {"reboot": True}})
    assert "then reboots it" in repair.pool_line(rebooting.config, rebooting.pools["h100"])


@pytest.mark.parametrize(
    ("stack", "health", "path", "message"),
    [
        ("dev", {"agent": "gke"}, "health.repair.agent", "runs only on GKE clusters"),
        ("gke", {"agent": "eks-node-monitoring-agent"}, "health.repair.agent", "runs only on EKS clusters"),
        ("gke", {"agent": "nvsentinel"}, "health.repair.agent", "set gpuOperator.enabled: true"),
        ("dev", {"maxParallelNodes": 2}, "health.repair.maxParallelNodes", "EKS managed node group setting"),
        ("prod", {"reboot": True}, "health.repair.reboot", "NVSentinel setting"),
        ("prod", {"enabled": False, "agent": "nvsentinel"}, "health.repair.agent", "has no effect"),
    ],
)
def test_combinations_that_cannot_work_are_refused_at_their_key(
    stack: str, health: dict[str, Any], path: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file(stack, health={"repair": health})
    assert [(i.path, message in i.message) for i in caught.value.issues] == [(path, True)]


def test_the_model_refuses_a_setting_of_another_agent() -> None:
    with pytest.raises(ValueError, match="reboot"):
        RepairSpec.model_validate({"agent": "gke", "reboot": True})
    with pytest.raises(ValueError, match="maxParallelNodes"):
        RepairSpec.model_validate({"agent": "nvsentinel", "maxParallelNodes": 3})
    assert RepairSpec().enabled and RepairSpec().agent is None and not RepairSpec().reboot
