"""Every Kubernetes object of a stack's observability pack, in apply order."""

from __future__ import annotations

from typing import Any

from components.observability import alerts, dashboards, scrape
from components.observability import pack as packs
from components.stack import Stack
from components.versions import KUBE_PROMETHEUS_STACK


def objects(stack: Stack) -> list[dict[str, Any]]:
    """The pack's ServiceMonitors, its PrometheusRule and its dashboards' ConfigMaps (none when it is off)."""
    pack = packs.resolve(stack.config)
    found = scrape.service_monitors(pack)
    if pack.alerts:
        found.append(alerts.prometheus_rule(stack, pack))
    found += dashboards.configmaps(pack)
    return found


def summary(stack: Stack) -> list[str]:
    """`render`'s monitoring lines: who runs Prometheus, the dashboards, the alerts, and on GKE its managed DCGM; one
    line saying how to turn the pack on where the stack has none of them."""
    pack = packs.resolve(stack.config)
    gke = stack.config.cluster.provider == "gcp"
    if not (pack.operator or pack.managed_dcgm or gke):
        return [
            "monitoring: none (no Prometheus Operator: monitoring.install: true installs kube-prometheus-stack "
            f"{KUBE_PROMETHEUS_STACK.version} with the GPU dashboards and fault alerts; monitoring.prometheus: true "
            "uses the cluster's own)"
        ]
    if pack.install:
        where = f"kube-prometheus-stack {KUBE_PROMETHEUS_STACK.version} in {pack.namespace} (installed by the stack)"
    else:
        where = "your Prometheus Operator" if pack.operator else "no Prometheus Operator (monitoring.install: false)"
    found = dashboards.dashboards(pack)
    label, value = pack.grafana_label
    drawn = (
        f"{', '.join(d.uid for d in found)} (ConfigMaps in {pack.dashboards_namespace}, label {label}={value})"
        if found
        else f"none ({pack.off['dashboards']})"
    )
    if pack.alerts:
        rules = alerts.alerts(stack, pack)
        paging = ", ".join(a.name for a in rules if a.severity == "critical")
        alerted = f"{len(rules)} rules in PrometheusRule {pack.namespace}/{packs.RULE_NAME}; critical: {paging}"
    else:
        alerted = f"none ({pack.off['alerts']})"
    lines = [f"monitoring: {where}", f"  dashboards: {drawn}", f"  alerts: {alerted}"]
    if gke:
        managed = "on (Cloud Monitoring)" if pack.managed_dcgm else f"off ({pack.off['managedDcgm']})"
        lines.append(f"  GKE managed DCGM: {managed}")
    return lines
