"""GPU Operator values per cloud: driver, toolkit, RDMA, monitoring, tolerations."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import pytest

from components.addons import gpu_operator
from components.addons.plan import plan
from components.errors import ConfigError
from components.stack import Stack
from tests.addons.stacks import everything_aws, everything_existing, stack_file


def test_existing_roce_cluster_runs_the_open_driver_with_gpudirect_rdma_through_dma_buf() -> None:
    values = gpu_operator.release(stack_file("dev")).values
    # DMA-BUF: the open kernel modules and the inbox NIC drivers; no nvidia-peermem waiting for a MOFED.
    assert values["driver"] == {
        "enabled": True,
        "rdma": {"enabled": False, "useHostMofed": False},
        "kernelModuleType": "open",
    }
    assert values["toolkit"] == {"enabled": True}
    assert values["nfd"] == {"enabled": True}
    # The driver and device plugin come up before the node check, which needs them.
    assert values["daemonsets"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "operator": "Equal",
            "value": "pending",
            "effect": "NoSchedule",
        },
    ]
    # NFD's labels are what the operator deploys those by: its worker runs under the startup taint too, and keeps
    # the chart's own tolerations (control plane, any nvidia.com/gpu).
    worker = values["node-feature-discovery"]["worker"]["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in worker
    assert any(t["key"] == "node-role.kubernetes.io/control-plane" for t in worker)
    assert values["daemonsets"]["tolerations"][1] in worker


@pytest.mark.parametrize(
    ("asked", "mode"), [(None, "dmabuf"), (True, "dmabuf"), ("dmabuf", "dmabuf"), ("peermem", "peermem"), (False, None)]
)
def test_gpudirect_rdma_is_dma_buf_unless_peermem_is_asked_for(asked: object, mode: str | None) -> None:
    stack = stack_file("dev", gpuOperator={"rdma": asked} if asked is not None else {})
    assert gpu_operator.rdma(stack) == mode
    driver = gpu_operator.release(stack).values["driver"]
    assert driver["rdma"]["enabled"] is (mode == "peermem")
    assert driver.get("kernelModuleType") == ("open" if mode == "dmabuf" else None)


def test_no_gpudirect_rdma_where_no_pool_runs_roce_or_infiniband() -> None:
    assert gpu_operator.rdma(stack_file("prod")) is None
    assert "kernelModuleType" not in gpu_operator.release(stack_file("prod")).values["driver"]


def test_peermem_without_host_mofed_gets_the_network_operators_driver_container() -> None:
    assert gpu_operator.needs_mofed_container(stack_file("dev", gpuOperator={"rdma": "peermem"}))
    hosts = stack_file("dev", gpuOperator={"rdma": "peermem", "useHostMofed": True})
    assert not gpu_operator.needs_mofed_container(hosts)
    assert gpu_operator.release(hosts).values["driver"]["rdma"] == {"enabled": True, "useHostMofed": True}
    assert not gpu_operator.needs_mofed_container(stack_file("dev"))


@pytest.mark.parametrize(
    ("rdma", "why"),
    [
        (True, "rdma: true here means DMA-BUF"),
        ("dmabuf", "rdma: dmabuf needs no MOFED"),
        (None, "rdma is unset, so pools that run infiniband or roce use DMA-BUF"),
        (False, "rdma: false turns GPUDirect RDMA off"),
    ],
)
def test_host_mofed_without_peermem_is_an_error_naming_both_readings(rdma: object, why: str) -> None:
    # The GPU Operator reads driver.rdma.useHostMofed only for nvidia-peermem; here it would do nothing.
    asked = {"useHostMofed": True} | ({"rdma": rdma} if rdma is not None else {})
    with pytest.raises(ConfigError) as caught:
        stack_file("dev", gpuOperator=asked)
    message = str(caught.value)
    assert message.startswith("gpuOperator.useHostMofed: has no effect:") and why in message
    assert "set rdma: peermem" in message and "drop useHostMofed" in message


@pytest.mark.parametrize(
    ("gpu_operator", "key", "why"),
    [
        ({"enabled": False, "rdma": "peermem"}, "rdma", "the GPU Operator is not installed"),
        ({"enabled": False, "driver": True}, "driver", "the GPU Operator is not installed"),
        ({"driver": False, "rdma": "dmabuf"}, "rdma", "gpuOperator.driver is off"),
        ({"driver": False, "rdma": "peermem", "useHostMofed": True}, "rdma", "gpuOperator.driver is off"),
    ],
)
def test_a_gpu_operator_setting_that_cannot_take_effect_is_an_error(
    gpu_operator: dict[str, object], key: str, why: str
) -> None:
    with pytest.raises(ConfigError, match=rf"gpuOperator\.{key}: has no effect: [^\n]*{why}"):
        stack_file("dev", gpuOperator=gpu_operator)


def test_peermem_without_an_rdma_pool_is_an_error_not_a_driver_waiting_forever() -> None:
    # prod runs EFA: no pool would bring the MOFED nvidia-peermem waits for.
    with pytest.raises(ConfigError, match=r"gpuOperator\.rdma: peermem registers GPU memory with InfiniBand"):
        stack_file("prod", gpuOperator={"rdma": "peermem", "driver": True})


def test_an_unknown_rdma_mode_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"gpuOperator.rdma"):
        stack_file("dev", gpuOperator={"rdma": "gpudirect"})


def test_eks_uses_the_driver_and_toolkit_of_the_accelerated_ami() -> None:
    values = gpu_operator.release(stack_file("prod")).values
    assert values["driver"]["enabled"] is False and values["toolkit"]["enabled"] is False
    assert values["driver"]["rdma"]["enabled"] is False, "EFA does not go through nvidia-peermem"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_one_dcgm_host_engine_per_node_on_the_hosts_network(stack: str) -> None:
    # The operator's standalone DCGM, which its exporter, the repair agents and the node check share on
    # localhost:5555, rather than an engine embedded in the exporter beside theirs.
    assert gpu_operator.release(stack_file(stack)).values["dcgm"] == {"enabled": True, "hostNetwork": True}


def test_host_mofed_and_prometheus() -> None:
    assert gpu_operator.release(everything_existing()).values["driver"]["rdma"] == {
        "enabled": True,
        "useHostMofed": True,
    }, "nvidia-peermem, built against the hosts' MOFED"
    assert gpu_operator.release(everything_aws()).values["dcgmExporter"]["serviceMonitor"]["enabled"] is True
    unmonitored = gpu_operator.release(stack_file("dev", monitoring={})).values["dcgmExporter"]
    assert unmonitored == {"serviceMonitor": {"enabled": False}}, "no Prometheus Operator, no ServiceMonitor"


def test_gke_leaves_it_off_unless_the_pools_drop_managed_drivers() -> None:
    assert not gpu_operator.enabled(stack_file("gke"))
    with pytest.raises(ConfigError, match=r"nodePools\[0\].gpuDriverVersion: GKE installs the driver"):
        stack_file("gke", gpuOperator={"enabled": True})
    pools = [
        {
            "name": "a3",
            "machineType": "a3-highgpu-8g",
            "maxNodes": 2,
            "zone": "us-central1-a",
            "gpuDriverVersion": "INSTALLATION_DISABLED",
        }
    ]
    values = gpu_operator.release(stack_file("gke", gpuOperator={"enabled": True}, nodePools=pools, jobs=[])).values
    assert values["hostPaths"]["driverInstallDir"] == values["toolkit"]["installDir"] == "/home/kubernetes/bin/nvidia"
    assert values["driver"]["enabled"] is False and values["cdi"] == {"enabled": True}


# -- no gpuOperator setting is silently ignored --------------------------------------------------------------

SETTINGS: dict[str, tuple[Any, ...]] = {
    "enabled": (None, True, False),
    "driver": (None, True, False),
    "rdma": (None, True, False, "dmabuf", "peermem"),
    "useHostMofed": (False, True),
}
UNSET: dict[str, Any] = {"enabled": None, "driver": None, "rdma": None, "useHostMofed": False}


def operator_effect(stack: Stack) -> tuple[Any, ...]:
    """What the nodes get, as the GPU Operator v26.7.0 reads its values: driver.rdma and kernelModuleType act on
    its driver DaemonSet only, useHostMofed only with driver.rdma.enabled (api/nvidia/v1/clusterpolicy_types.go
    IsHostMOFED, controllers/object_controls.go); and whether the Network Operator brings a MOFED container."""
    addons = plan(stack)
    policy = next((o for o in addons.objects if o["kind"] == "NicClusterPolicy"), None)
    ofed = policy is not None and "ofedDriver" in policy["spec"]
    release = next((r for r in addons.releases if r.name == gpu_operator.NAME), None)
    if release is None:
        return ("no GPU Operator", ofed)
    driver = release.values["driver"]
    if not driver["enabled"]:
        return ("the node image's driver", ofed)
    rdma = driver["rdma"]
    peermem = ("nvidia-peermem", "host MOFED" if rdma["useHostMofed"] else "MOFED container") if rdma["enabled"] else ()
    return ("containerized driver", driver.get("kernelModuleType"), peermem, ofed)


@cache
def outcome(stack: str, settings: tuple[tuple[str, Any], ...]) -> tuple[Any, ...] | None:
    """The effect of these gpuOperator settings on a stack, or None when they are a config error."""
    stated = {k: v for k, v in settings if v != UNSET[k]}
    try:
        return operator_effect(stack_file(stack, gpuOperator=stated, jobs=[]))
    except ConfigError as exc:
        assert all(i.path.startswith(("gpuOperator.", "nodePools[")) for i in exc.issues), exc.issues
        return None


@pytest.mark.parametrize("stack", ["dev", "prod", "gke"])
def test_every_gpu_operator_setting_that_is_accepted_changes_what_the_nodes_get(stack: str) -> None:
    # A key is ignored when every value one may write for it (None is leaving it out) is accepted alike and
    # gives the nodes the same; then writing it must be an error. A key with one accepted value is not ignored.
    for values in itertools.product(*SETTINGS.values()):
        settings = tuple(zip(SETTINGS, values, strict=True))
        if outcome(stack, settings) is None:
            continue
        for index, (key, value) in enumerate(settings):
            if value == UNSET[key]:
                continue
            effects = {
                found
                for written in SETTINGS[key]
                if written is not None
                and (found := outcome(stack, (*settings[:index], (key, written), *settings[index + 1 :]))) is not None
            }
            accepted = [
                w
                for w in SETTINGS[key]
                if w is not None and outcome(stack, (*settings[:index], (key, w), *settings[index + 1 :])) is not None
            ]
            assert len(accepted) < 2 or len(effects) > 1, (
                f"{stack}: gpuOperator.{key} is accepted as any of {accepted} with {dict(settings)}, "
                "and changes nothing"
            )
