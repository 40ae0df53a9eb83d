"""GPU Operator values per cloud: driver, toolkit, RDMA, monitoring, tolerations."""

from __future__ import annotations

import pytest

from components.addons import gpu_operator
from components.errors import ConfigError
from tests.addons.stacks import everything_aws, everything_existing, stack_file


def test_existing_roce_cluster_runs_the_driver_with_gpudirect_rdma() -> None:
    values = gpu_operator.release(stack_file("dev")).values
    assert values["driver"] == {"enabled": True, "rdma": {"enabled": True, "useHostMofed": False}}
    assert values["toolkit"] == {"enabled": True}
    assert values["nfd"] == {"enabled": True}
    assert values["daemonsets"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]


def test_eks_uses_the_driver_and_toolkit_of_the_accelerated_ami() -> None:
    values = gpu_operator.release(stack_file("prod")).values
    assert values["driver"]["enabled"] is False and values["toolkit"]["enabled"] is False
    assert values["driver"]["rdma"]["enabled"] is False, "EFA does not go through nvidia-peermem"


def test_host_mofed_and_prometheus() -> None:
    assert gpu_operator.release(everything_existing()).values["driver"]["rdma"] == {
        "enabled": True,
        "useHostMofed": True,
    }
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
