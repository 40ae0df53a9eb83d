"""kube-prometheus-stack as the pack needs it, and the order the installs and the pack's objects come in."""

from __future__ import annotations

from components.addons import monitoring, scheduler
from components.addons.plan import plan
from components.observability import dcgm
from components.observability import pack as packs
from components.versions import KUBE_PROMETHEUS_STACK
from tests.addons.stacks import stack_file


def _release(name: str, stack):
    return next(r for r in plan(stack).releases if r.name == name)


def test_the_stack_installs_kube_prometheus_stack_only_when_asked() -> None:
    prod = stack_file("prod")
    release = monitoring.release(prod, packs.resolve(prod.config))
    assert release is not None and release.chart is KUBE_PROMETHEUS_STACK and release.namespace == "monitoring"
    dev = stack_file("dev")
    assert monitoring.release(dev, packs.resolve(dev.config)) is None, "dev uses its own Prometheus Operator"


def test_its_prometheus_selects_every_service_monitor_and_rule_and_grafana_loads_the_dashboards() -> None:
    stack = stack_file("prod", monitoring={"install": True, "grafana": {"label": "dashboards", "labelValue": "gpu"}})
    values = monitoring.release(stack, packs.resolve(stack.config)).values
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False and spec["ruleSelectorNilUsesHelmValues"] is False
    assert values["kube-state-metrics"]["metricLabelsAllowlist"] == [
        "pods=[app.kubernetes.io/instance,gpu-training/role,gpu-training/pool]"
    ]
    assert values["grafana"]["sidecar"]["dashboards"] == {
        "label": "dashboards",
        "labelValue": "gpu",
        "searchNamespace": "ALL",
    }


def test_it_comes_first_and_what_makes_service_monitors_waits_for_it() -> None:
    prod = plan(stack_file("prod"))
    assert prod.releases[0].name == monitoring.NAME
    assert monitoring.NAME in _release("gpu-operator", stack_file("prod")).needs
    gke = stack_file("gke")
    kueue = _release(scheduler.KUEUE_NAME, gke)
    assert kueue.values["enablePrometheus"] is True and monitoring.NAME in kueue.needs
    dev = stack_file("dev")
    assert _release("gpu-operator", dev).needs == (), "the user's operator is already there"


def test_the_pack_s_objects_wait_for_its_crds_and_namespace() -> None:
    prod = plan(stack_file("prod"))
    for obj in prod.objects:
        if obj["kind"] in ("PrometheusRule", "ServiceMonitor") or obj["metadata"].get("namespace") == "monitoring":
            assert prod.owner(obj) == monitoring.NAME, obj["metadata"]["name"]
    dev = plan(stack_file("dev"))
    pack_objects = [o for o in dev.objects if o["metadata"].get("namespace") == "monitoring"]
    assert pack_objects and all(dev.owner(o) is None for o in pack_objects), "nothing of the stack to wait for"


def test_without_a_prometheus_operator_kueue_and_the_exporter_add_no_service_monitor() -> None:
    gke = stack_file("gke", monitoring={})
    assert "enablePrometheus" not in _release(scheduler.KUEUE_NAME, gke).values
    dev = stack_file("dev", monitoring={})
    assert _release("gpu-operator", dev).values["dcgmExporter"] == {"serviceMonitor": {"enabled": False}}


def test_with_one_the_exporter_reports_the_pack_s_fields() -> None:
    values = _release("gpu-operator", stack_file("dev")).values["dcgmExporter"]
    assert values["config"]["name"] == dcgm.CONFIGMAP and values["config"]["data"] == dcgm.csv()
    assert values["serviceMonitor"]["additionalLabels"] == {"release": "prometheus"}
