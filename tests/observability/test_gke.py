"""GKE's monitoring config: managed DCGM beside the system metrics, each component from the GKE version it needs."""

from __future__ import annotations

from components.observability import gke
from components.observability import pack as packs
from tests.addons.stacks import stack_file
from tests.observability.stacks import gke_gpu_operator


def test_managed_dcgm_turns_on_dcgm_and_managed_prometheus_beside_the_system_metrics() -> None:
    config = gke.monitoring_config(packs.resolve(stack_file("gke").config), "1.35")
    assert config is not None and config["managed_prometheus"] == {"enabled": True}
    components = config["enable_components"]
    assert components[0] == "SYSTEM_COMPONENTS" and "DCGM" in components
    assert {"JOBSET", "KUBELET", "CADVISOR"} <= set(components)


def test_components_newer_than_the_cluster_are_left_out() -> None:
    pack = packs.resolve(stack_file("gke").config)
    older = gke.monitoring_config(pack, "1.32.1-gke.1357000")
    assert older is not None and "JOBSET" not in older["enable_components"] and "DCGM" in older["enable_components"]


def test_without_managed_dcgm_gke_keeps_its_own_config() -> None:
    assert gke.monitoring_config(packs.resolve(gke_gpu_operator().config), "1.35") is None
    assert (
        gke.monitoring_config(packs.resolve(stack_file("gke", monitoring={"managedDcgm": False}).config), "1.35")
        is None
    )
