"""kube-prometheus-stack, when the stack installs its own Prometheus (monitoring.install): set up so that it scrapes
and evaluates the observability pack's ServiceMonitors and PrometheusRule, and its Grafana loads the pack's dashboards.

Keys and defaults are the chart's (prometheus-community/helm-charts charts/kube-prometheus-stack values.yaml at
kube-prometheus-stack-88.5.3; its kube-state-metrics subchart 8.4.0 values.yaml).
"""

from __future__ import annotations

from typing import Any

from components.addons.install import HelmRelease
from components.observability import pods
from components.observability.pack import Pack
from components.stack import Stack
from components.versions import KUBE_PROMETHEUS_STACK

NAME = "kube-prometheus-stack"


def release(stack: Stack, pack: Pack) -> HelmRelease | None:
    """kube-prometheus-stack in the pack's namespace, when the stack installs it."""
    if not pack.install:
        return None
    label, value = pack.grafana_label
    values: dict[str, Any] = {
        "prometheus": {
            "prometheusSpec": {
                # By default the chart's Prometheus selects only objects labelled with its own release: the GPU
                # Operator's, Kueue's and the pack's ServiceMonitors and rules carry no such label.
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "podMonitorSelectorNilUsesHelmValues": False,
                "ruleSelectorNilUsesHelmValues": False,
            }
        },
        # kube_pod_labels carries no pod label unless allowed: the pack joins GPUs to jobs by these.
        "kube-state-metrics": {"metricLabelsAllowlist": [pods.ALLOWLIST]},
        "grafana": {"sidecar": {"dashboards": {"label": label, "labelValue": value, "searchNamespace": "ALL"}}},
    }
    return HelmRelease(NAME, KUBE_PROMETHEUS_STACK, pack.namespace, values)
