"""DaemonSet overhead: a job whose pod does not fit what the node's DaemonSets leave is refused, naming them."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import overhead
from components.allocatable import allocatable
from components.daemonsets import ADDON_DAEMONSETS
from components.errors import ConfigError
from components.manifests import platform
from components.manifests.pod import tolerates, tolerations
from components.models.nodepool import Taint
from components.resolution import resolve_file
from tests.support.stacks import EXAMPLE_STACKS

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted([*REPO.glob("Pulumi.*.yaml"), *EXAMPLE_STACKS])


def _node_check_like(name: str, pool: Any, gpus: int) -> dict[str, Any]:
    """A DaemonSet shaped as the node check was: on the pool's nodes, every GPU held by an init container."""
    wanted = {"nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "gpu-node-check"},
        "spec": {
            "template": {
                "spec": {
                    "nodeSelector": dict(pool.node_selector),
                    "tolerations": tolerations([*pool.taints, *pool.startup_taints]),
                    "initContainers": [{"name": "gpu", "resources": {"requests": wanted, "limits": wanted}}],
                    "containers": [{"name": "verdict"}],
                }
            }
        },
    }


@pytest.mark.parametrize("stack_file", STACKS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_stack_leaves_room_for_each_of_its_jobs(stack_file: Path) -> None:
    assert overhead.issues(resolve_file(stack_file)) == []


def test_a_daemonset_holding_every_gpu_refuses_the_stack_naming_it_the_pool_and_the_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stack = resolve_file(REPO / "Pulumi.prod.yaml")
    pool = stack.pools["p5"]
    rendered = platform.objects
    monkeypatch.setattr(
        platform, "objects", lambda s: [*rendered(s), _node_check_like("node-check-p5", pool, pool.gpus_per_node)]
    )
    with pytest.raises(ConfigError) as raised:
        resolve_file(REPO / "Pulumi.prod.yaml")
    text = str(raised.value)
    assert "DaemonSet gpu-node-check/node-check-p5: 8" in text
    assert "pool 'p5'" in text
    assert "TrainJob training/llama-pretrain" in text
    assert "no DaemonSet may request nvidia.com/gpu" in text
    assert all(i.path.startswith("jobs[") for i in raised.value.issues)


def test_the_init_container_counts_as_karpenter_counts_it_the_larger_of_it_and_the_containers() -> None:
    stack = resolve_file(REPO / "Pulumi.prod.yaml")
    pool = stack.pools["p5"]
    agent = overhead.rendered_agents(pool, [_node_check_like("check", pool, 3)])
    assert [a.requests for a in agent] == [{"nvidia.com/gpu": Decimal(3)}]
    assert overhead.left_over(pool, agent)["nvidia.com/gpu"] == Decimal(pool.gpus_per_node - 3)


def test_a_job_asking_the_whole_cpu_is_told_what_the_daemonsets_leave() -> None:
    stack = resolve_file(REPO / "Pulumi.prod.yaml")
    pool = stack.pools["p5"]
    cpu = allocatable(pool)["cpu"]
    assert cpu is not None
    agents = [overhead.NodeAgent("multus's kube-multus-ds", {"cpu": Decimal("0.1")})]
    found = overhead.shortfalls(pool, agents, {"cpu": cpu}, "PyTorchJob training/big's pods", "jobs[0]")
    assert len(found) == 1
    assert found[0].path == "jobs[0].resources.cpu"
    assert "multus's kube-multus-ds: 100m" in found[0].message
    assert "ask at most" in found[0].message
    assert overhead.shortfalls(pool, [], {"cpu": cpu}, "x", "jobs[0]") == []


def test_a_daemonset_stays_off_a_pool_whose_taint_it_does_not_tolerate_or_whose_labels_it_does_not_select() -> None:
    stack = resolve_file(REPO / "Pulumi.dev.yaml")
    pool = stack.pools["h100"]
    other = copy.deepcopy(_node_check_like("elsewhere", pool, 1))
    key = next(iter(pool.node_selector))
    other["spec"]["template"]["spec"]["nodeSelector"] = {key: "another"}
    intolerant = copy.deepcopy(_node_check_like("intolerant", pool, 1))
    intolerant["spec"]["template"]["spec"]["tolerations"] = []
    assert pool.taints, "the dev pool is tainted"
    assert overhead.rendered_agents(pool, [other, intolerant]) == []


def test_the_add_ons_daemonsets_land_by_their_values_and_the_pools_fabric() -> None:
    stack = resolve_file(REPO / "Pulumi.prod.yaml")
    pool = stack.pools["p5"]
    names = {a.name for a in overhead.addon_agents(pool, {"gpu-operator": {}, "aws-efa-k8s-device-plugin": {}})}
    assert "gpu-operator's nvidia-device-plugin-daemonset (v26.7.0)" in names
    assert "gpu-operator's nvidia-dcgm (v26.7.0)" not in names  # off unless dcgm.enabled
    # The EFA plugin's chart tolerates nothing unless the values say: the tainted p5 keeps it off.
    assert not any("aws-efa" in n for n in names)
    told = {"tolerations": tolerations(pool.taints)}
    assert any("aws-efa" in a.name for a in overhead.addon_agents(pool, {"aws-efa-k8s-device-plugin": told}))
    off = {"gpu-operator": {"driver": {"enabled": False}}}
    assert not any("driver" in a.name for a in overhead.addon_agents(pool, off))


def test_every_add_on_daemonset_names_its_source_and_requests_no_device() -> None:
    for entry in ADDON_DAEMONSETS:
        assert entry.version and (".yaml" in entry.source or ".yml" in entry.source)
        for requests in (*entry.containers, *entry.init):
            assert set(requests) <= {"cpu", "memory"}


_TAINTS = st.builds(
    Taint,
    key=st.sampled_from(["nvidia.com/gpu", "example.com/a", "startup-taint.cluster-autoscaler.kubernetes.io/x"]),
    value=st.sampled_from(["", "true", "pending"]),
    effect=st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]),
)


@given(taint=_TAINTS, other=_TAINTS)
def test_a_pod_tolerates_exactly_the_taints_its_tolerations_were_made_for(taint: Taint, other: Taint) -> None:
    made = tolerations([taint])
    assert tolerates(made, taint.model_dump())
    assert tolerates([{"operator": "Exists"}], other.model_dump())
    if (other.key, other.effect) != (taint.key, taint.effect) or (taint.value and other.value != taint.value):
        assert not tolerates(made, other.model_dump())
    # PreferNoSchedule never keeps a DaemonSet off.
    assert overhead.lands_past([], [Taint(key=other.key, value=other.value, effect="PreferNoSchedule")])
