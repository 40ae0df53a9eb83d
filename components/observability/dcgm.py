"""The GPU Operator's DCGM exporter as the pack needs it: our metrics list, and labels a rule can rely on.

Sources: NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator (values.yaml `dcgmExporter`, commented `config`;
templates/dcgm_exporter_config.yaml writes `config.data` to the ConfigMap `config.name` under the key
dcgm-metrics.csv, which the operator mounts and points DCGM_EXPORTER_COLLECTORS at; controllers/object_controls.go
applyServiceMonitorCustomEdits copies `serviceMonitor` interval, honorLabels, relabelings and additionalLabels into
the ServiceMonitor it makes, and makes it only when the ServiceMonitor CRD exists). dcgm-exporter
internal/pkg/transformation/kubernetes.go labels a GPU's series with the `pod`, `namespace` and `container` holding
it, and leaves them out for a GPU no pod holds.
"""

from __future__ import annotations

from typing import Any

from components.observability import metrics

CONFIGMAP = "gpu-training-dcgm-metrics"
"""The exporter's metrics list, which the GPU Operator chart creates in its namespace."""
NODE = "node"
"""The node a GPU is in: the exporter pod's node, set by our relabeling. Not the exporter's own Hostname label,
which dcgm-exporter renamed to `hostname` after 4.8.2 (commit d5e5f51)."""
POD = "exported_pod"
NAMESPACE = "exported_namespace"
CONTAINER = "exported_container"
"""The pod, namespace and container holding a GPU. The exporter calls them pod, namespace and container; with the
ServiceMonitor's honorLabels false (the chart's default, kept) Prometheus keeps the target's own pod and namespace
labels (the exporter's) and renames the exporter's to exported_*, so a GPU no pod holds has none of them."""
GPU = "gpu"
MODEL = "modelName"
UUID = "UUID"

RELABELINGS: tuple[dict[str, Any], ...] = (
    {
        "sourceLabels": ["__meta_kubernetes_pod_node_name"],
        "targetLabel": NODE,
        "action": "replace",
    },
)
"""The ServiceMonitor's relabeling that puts the node's name on every series of its exporter."""


def csv() -> str:
    """The exporter's metrics list (dcgm-metrics.csv): one `FIELD, type, help` line per field the pack reads."""
    lines = ["# DCGM FIELD, Prometheus metric type, help message (written by gpu-training: the observability pack)"]
    lines += [f"{m.name}, {m.kind}, {m.help}" for m in metrics.DCGM_FIELDS]
    return "\n".join(lines) + "\n"


def exporter_values(*, service_monitor: bool, labels: dict[str, str]) -> dict[str, Any]:
    """The GPU Operator chart's `dcgmExporter` values: our metrics list, and a ServiceMonitor (when a Prometheus
    Operator scrapes) whose series carry the node's name."""
    values: dict[str, Any] = {"config": {"name": CONFIGMAP, "create": True, "data": csv()}}
    monitor: dict[str, Any] = {"enabled": service_monitor}
    if service_monitor:
        monitor["honorLabels"] = False
        monitor["relabelings"] = [dict(r) for r in RELABELINGS]
        if labels:
            monitor["additionalLabels"] = dict(labels)
    values["serviceMonitor"] = monitor
    return values
