"""The ServiceMonitors the pack adds where no chart makes one: Volcano's scheduler and controllers.

The GPU Operator makes the DCGM exporter's (components/observability/dcgm.py) and the Kueue chart makes Kueue's
(`enablePrometheus`); Volcano's chart only annotates its Services for annotation-based scraping, and its
`custom.metrics_enable` would install a Prometheus of its own. Volcano v1.15.1 installer/helm/chart/volcano
templates/scheduler.yaml and controllers.yaml: Services `<release>-scheduler-service` (label app: volcano-scheduler,
port `metrics`, 8080) and `<release>-controllers-service` (app: volcano-controller, port `metrics`, 8081), both on
by default (custom.scheduler_metrics_enable, custom.controller_metrics_enable).
"""

from __future__ import annotations

from typing import Any

from components.addons import scheduler
from components.manifests.meta import metadata
from components.observability.pack import Pack

VOLCANO_APPS = ("volcano-scheduler", "volcano-controller")
"""The `app` labels of Volcano's metrics Services."""
INTERVAL = "30s"


def service_monitors(pack: Pack) -> list[dict[str, Any]]:
    """The ServiceMonitors of the stack's scheduler, in the pack's namespace (none for Kueue, whose chart makes
    its own, or without a Prometheus Operator)."""
    if not pack.scrapes or pack.scheduler != "volcano":
        return []
    return [
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": metadata("volcano", pack.namespace, labels=pack.labels),
            "spec": {
                "namespaceSelector": {"matchNames": [scheduler.VOLCANO_NAMESPACE]},
                "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": list(VOLCANO_APPS)}]},
                "endpoints": [{"port": "metrics", "path": "/metrics", "interval": INTERVAL}],
            },
        }
    ]
