"""GKE's managed DCGM: the cluster's monitoring config that turns it on.

With DCGM among the cluster's monitoring components, GKE runs its own DCGM exporter on GPU nodes with GKE-managed
drivers and Managed Service for Prometheus collects it into Cloud Monitoring, where GKE's dashboards draw it (GKE,
"Collect and view DCGM metrics"). Cloud Monitoring requires the system metrics whenever it gets any (GKE, "Configure
metrics collection"). The other components are the kube-state packages Google's Cluster Toolkit turns on for its AI
clusters beside DCGM (GoogleCloudPlatform/cluster-toolkit modules/scheduler/gke-cluster, variables.tf
`monitoring_components` and main.tf `monitoring_config`, @104708037), each from the GKE version pulumi-gcp 10.2.0
documents for it (container.ClusterMonitoringConfigArgs.enable_components).
"""

from __future__ import annotations

from typing import Any

from components.gcp.pools import gke_at_least
from components.observability.pack import Pack

_COMPONENTS: tuple[tuple[str, str | None], ...] = (
    ("SYSTEM_COMPONENTS", None),
    ("POD", None),
    ("DAEMONSET", None),
    ("DEPLOYMENT", None),
    ("STATEFULSET", None),
    ("STORAGE", None),
    ("HPA", None),
    ("CADVISOR", "1.29.3-gke.1093000"),
    ("KUBELET", "1.29.3-gke.1093000"),
    ("JOBSET", "1.32.1-gke.1357001"),
    ("DCGM", None),
)
"""GKE monitoring components, each with the least GKE version it needs (None: every version this stack runs)."""


def monitoring_config(pack: Pack, kubernetes_version: str) -> dict[str, Any] | None:
    """The GKE cluster's `monitoring_config` with managed DCGM, or None to leave GKE's own."""
    if not pack.managed_dcgm:
        return None
    components = [name for name, least in _COMPONENTS if least is None or gke_at_least(kubernetes_version, least)]
    return {"enable_components": components, "managed_prometheus": {"enabled": True}}
