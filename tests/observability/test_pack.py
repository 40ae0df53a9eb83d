"""What each stack's observability pack is by default, and the settings it refuses, each at its key."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.observability import pack as packs
from tests.addons.stacks import raw_config, stack_file
from tests.observability.stacks import GKE_OPERATOR_POOL, gke_gpu_operator


def test_without_a_prometheus_operator_nothing_is_on() -> None:
    pack = packs.resolve(stack_file("dev", monitoring={}).config)
    assert not (pack.operator or pack.dashboards or pack.alerts or pack.managed_dcgm or pack.install)
    assert pack.off == {
        "dashboards": "no Prometheus Operator",
        "alerts": "no Prometheus Operator",
        "managedDcgm": "not GKE",
    }


@pytest.mark.parametrize("monitoring", [{"install": True}, {"prometheus": True}])
def test_a_prometheus_operator_turns_on_dashboards_and_alerts_where_the_gpu_operator_reports(monitoring) -> None:
    for name in ("dev", "prod"):
        pack = packs.resolve(stack_file(name, monitoring=monitoring).config)
        assert pack.operator and pack.dashboards and pack.alerts and pack.gpu_exporter
        assert pack.install is bool(monitoring.get("install"))
        assert not pack.managed_dcgm


def test_gke_with_its_own_drivers_gets_managed_dcgm_and_no_alerts() -> None:
    pack = packs.resolve(stack_file("gke").config)
    assert pack.install and pack.dashboards and pack.managed_dcgm
    assert not pack.alerts and not pack.gpu_exporter
    assert "GKE's managed DCGM exports no XID" in pack.off["alerts"]


def test_gke_with_the_gpu_operator_alerts_and_leaves_managed_dcgm_off() -> None:
    pack = packs.resolve(gke_gpu_operator().config)
    assert pack.alerts and pack.gpu_exporter and not pack.managed_dcgm
    assert pack.off["managedDcgm"] == "the GPU Operator's DCGM exporter reports"


def test_managed_dcgm_needs_a_gke_version_that_has_it() -> None:
    # 1.32 before its managed DCGM patch: still offered (GKE's Extended channel), too old for managed DCGM, and past
    # TCPX's least patch (the gke stack's A3 Mega needs a later 1.32 for TCPXO).
    cluster = {**stack_file("gke").config.cluster.to_config(), "kubernetesVersion": "1.32.1-gke.1000000"}
    pools = [{**raw_config("gke")["nodePools"][0], "machineType": "a3-highgpu-8g"}]
    assert not packs.resolve(stack_file("gke", cluster=cluster, nodePools=pools, jobs=[]).config).managed_dcgm
    with pytest.raises(ConfigError, match=r"monitoring.managedDcgm: needs GKE 1.32.1-gke.1357000 or later"):
        stack_file("gke", cluster=cluster, nodePools=pools, jobs=[], monitoring={"managedDcgm": True})


def test_explicit_settings_win() -> None:
    pack = packs.resolve(stack_file("prod", monitoring={"install": True, "dashboards": False, "alerts": False}).config)
    assert not pack.dashboards and not pack.alerts
    assert pack.off["alerts"] == "monitoring.alerts: false"
    assert not packs.resolve(stack_file("gke", monitoring={"managedDcgm": False}).config).managed_dcgm


def test_namespaces_labels_and_the_grafana_sidecar_label() -> None:
    monitoring = {
        "prometheus": True,
        "namespace": "observability",
        "labels": {"release": "prom"},
        "grafana": {"label": "grafana_dashboard", "labelValue": "yes", "namespace": "grafana"},
    }
    pack = packs.resolve(stack_file("dev", monitoring=monitoring).config)
    assert (pack.namespace, pack.dashboards_namespace) == ("observability", "grafana")
    assert pack.labels == {"release": "prom"} and pack.grafana_label == ("grafana_dashboard", "yes")


@pytest.mark.parametrize(
    ("name", "changes", "path", "message"),
    [
        ("prod", {"monitoring": {"managedDcgm": True}}, "monitoring.managedDcgm", "is GKE's"),
        (
            "gke",
            {"nodePools": [GKE_OPERATOR_POOL], "gpuOperator": {"enabled": True}, "monitoring": {"managedDcgm": True}},
            "monitoring.managedDcgm",
            "needs GKE-managed GPU drivers",
        ),
        ("dev", {"monitoring": {"dashboards": True}}, "monitoring.dashboards", "set install: true"),
        ("dev", {"monitoring": {"alerts": True}}, "monitoring.alerts", "or prometheus: true for yours"),
        (
            "gke",
            {"monitoring": {"install": True, "alerts": True}},
            "monitoring.alerts",
            "set gpuOperator.enabled: true with each pool's gpuDriverVersion: INSTALLATION_DISABLED",
        ),
        (
            "dev",
            {
                "gpuOperator": {"enabled": False},
                "health": {"repair": {"enabled": False}},
                "monitoring": {"prometheus": True, "alerts": True},
            },
            "monitoring.alerts",
            "gpuOperator.enabled is false: set gpuOperator.enabled: true, or drop alerts",
        ),
        ("dev", {"monitoring": {"labels": {"release": "x"}}}, "monitoring.labels", "has no effect"),
    ],
)
def test_settings_the_stack_cannot_honour_name_their_key_and_the_fix(name, changes, path, message) -> None:
    with pytest.raises(ConfigError) as raised:
        stack_file(name, **changes)
    assert any(i.path == path and message in i.message for i in raised.value.issues), raised.value


def test_the_idle_time_is_bounded() -> None:
    with pytest.raises(ConfigError, match=r"monitoring.idleGpuMinutes"):
        stack_file("dev", monitoring={"prometheus": True, "idleGpuMinutes": 1})
