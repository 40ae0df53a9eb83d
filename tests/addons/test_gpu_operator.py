"""GPU Operator values per cloud: driver, toolkit, RDMA, monitoring, tolerations."""

from __future__ import annotations

import pytest

from components.addons import gpu_operator
from components.errors import ConfigError
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
    assert values["daemonsets"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]


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


def test_an_unknown_rdma_mode_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"gpuOperator.rdma"):
        stack_file("dev", gpuOperator={"rdma": "gpudirect"})


def test_eks_uses_the_driver_and_toolkit_of_the_accelerated_ami() -> None:
    values = gpu_operator.release(stack_file("prod")).values
    assert values["driver"]["enabled"] is False and values["toolkit"]["enabled"] is False
    assert values["driver"]["rdma"]["enabled"] is False, "EFA does not go through nvidia-peermem"


def test_host_mofed_and_prometheus() -> None:
    assert gpu_operator.release(everything_existing()).values["driver"]["rdma"] == {
        "enabled": False,
        "useHostMofed": True,
    }, "DMA-BUF unless peermem is asked for, MOFED or not"
    assert gpu_operator.release(everything_aws()).values["dcgmExporter"]["serviceMonitor"]["enabled"] is True
    assert gpu_operator.release(stack_file("dev")).values["dcgmExporter"]["serviceMonitor"]["enabled"] is False


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
