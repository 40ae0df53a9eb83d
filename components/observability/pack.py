"""What a stack's observability pack is: who runs Prometheus, which dashboards and alerts it gets, and GKE's
managed DCGM. One place decides it (`resolve`); the add-on plan, the builders, the GKE cluster and `render` read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.errors import Issue
from components.gcp.pools import gke_at_least
from components.models import StackConfig

MANAGED_DCGM_LEAST = "1.32.1-gke.1357000"
"""The GKE version from which new clusters get the DCGM metrics package by default (GKE, "Collect and view DCGM
metrics"): the least version this stack turns it on for."""
RULE_NAME = "gpu-training-gpu-faults"
"""The pack's PrometheusRule."""


@dataclass(frozen=True, slots=True)
class Pack:
    """A stack's observability pack, resolved: what is installed, scraped, drawn and alerted on."""

    install: bool
    """kube-prometheus-stack is installed by the stack."""
    operator: bool
    """A Prometheus Operator runs (the one installed, or the user's): ServiceMonitors and PrometheusRules work."""
    gpu_exporter: bool
    """The GPU Operator's DCGM exporter runs, with the pack's metrics list."""
    dashboards: bool
    alerts: bool
    managed_dcgm: bool
    """GKE's managed DCGM (the cluster's monitoring config)."""
    namespace: str
    """Where kube-prometheus-stack, the PrometheusRule and the pack's ServiceMonitors go."""
    dashboards_namespace: str
    grafana_label: tuple[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    idle_gpu_minutes: int = 30
    scheduler: str = "none"
    """volcano | kueue | none: whose queues the queue dashboard draws, and whose metrics are scraped."""
    off: dict[str, str] = field(default_factory=dict)
    """Why each part that is off is off (dashboards, alerts, managed DCGM), in words for `render`."""

    @property
    def scrapes(self) -> bool:
        """Whether the pack adds scrape configuration (ServiceMonitors, Kueue's enablePrometheus)."""
        return self.operator


def resolve(config: StackConfig) -> Pack:
    """The stack's pack, each part as configured or by default (see MonitoringSpec)."""
    spec = config.monitoring
    operator = spec.install or spec.prometheus
    exporter = config.runs_gpu_operator
    off: dict[str, str] = {}
    managed = spec.managed_dcgm if spec.managed_dcgm is not None else _managed_dcgm_default(config)
    if not managed:
        off["managedDcgm"] = _why_no_managed_dcgm(config)
    dashboards = spec.dashboards if spec.dashboards is not None else operator
    if not dashboards:
        off["dashboards"] = "monitoring.dashboards: false" if operator else "no Prometheus Operator"
    alerts = spec.alerts if spec.alerts is not None else operator and exporter
    if not alerts:
        off["alerts"] = (
            "monitoring.alerts: false"
            if spec.alerts is False
            else ("no Prometheus Operator" if not operator else _why_no_exporter(config))
        )
    return Pack(
        install=spec.install,
        operator=operator,
        gpu_exporter=exporter,
        dashboards=dashboards,
        alerts=alerts,
        managed_dcgm=managed,
        namespace=spec.namespace,
        dashboards_namespace=spec.grafana.namespace or spec.namespace,
        grafana_label=(spec.grafana.label, spec.grafana.label_value),
        labels=dict(spec.labels),
        idle_gpu_minutes=spec.idle_gpu_minutes,
        scheduler=config.scheduler.type,
        off=off,
    )


def _managed_dcgm_default(config: StackConfig) -> bool:
    cluster = config.cluster
    return (
        cluster.provider == "gcp"
        and not config.runs_gpu_operator
        and gke_at_least(cluster.kubernetes_version, MANAGED_DCGM_LEAST)
    )


def _why_no_managed_dcgm(config: StackConfig) -> str:
    if config.monitoring.managed_dcgm is False:
        return "monitoring.managedDcgm: false"
    if config.cluster.provider != "gcp":
        return "not GKE"
    if config.runs_gpu_operator:
        return "the GPU Operator's DCGM exporter reports"
    return f"GKE older than {MANAGED_DCGM_LEAST}"


def _why_no_exporter(config: StackConfig) -> str:
    if config.cluster.provider == "gcp":
        return (
            "GKE's managed DCGM exports no XID, ECC, row-remap, NVLink-error or clock-event field, which the alerts "
            "read; the GPU Operator's DCGM exporter does"
        )
    return "the alerts read the GPU Operator's DCGM exporter, and gpuOperator.enabled is false"


def issues(config: StackConfig) -> list[Issue]:
    """The monitoring settings the stack cannot honour, each at its config key with the fix."""
    spec = config.monitoring
    cluster = config.cluster
    operator = spec.install or spec.prometheus
    found: list[Issue] = []
    if spec.managed_dcgm:
        if cluster.provider != "gcp":
            found.append(
                Issue("monitoring.managedDcgm", f"is GKE's, and this cluster's provider is {cluster.provider}: drop it")
            )
        elif config.runs_gpu_operator:
            found.append(
                Issue(
                    "monitoring.managedDcgm",
                    "GKE's managed DCGM needs GKE-managed GPU drivers, and this stack runs the GPU Operator, whose "
                    "DCGM exporter reports already: drop managedDcgm, or gpuOperator.enabled to use GKE's drivers",
                )
            )
        elif not gke_at_least(cluster.kubernetes_version, MANAGED_DCGM_LEAST):
            found.append(
                Issue(
                    "monitoring.managedDcgm",
                    f"needs GKE {MANAGED_DCGM_LEAST} or later, and cluster.kubernetesVersion is "
                    f"{cluster.kubernetes_version}: raise it, or drop managedDcgm",
                )
            )
    for key, value in (("dashboards", spec.dashboards), ("alerts", spec.alerts)):
        if value and not operator:
            found.append(
                Issue(
                    f"monitoring.{key}",
                    "read series that a Prometheus Operator scrapes through the pack's ServiceMonitors, and none "
                    "runs: set install: true (kube-prometheus-stack), or prometheus: true for yours",
                )
            )
    if spec.alerts and operator and not config.runs_gpu_operator:
        fix = (
            "set gpuOperator.enabled: true with each pool's gpuDriverVersion: INSTALLATION_DISABLED, or drop alerts"
            if cluster.provider == "gcp"
            else "set gpuOperator.enabled: true, or drop alerts"
        )
        found.append(Issue("monitoring.alerts", f"{_why_no_exporter(config)}: {fix}"))
    if spec.labels and not operator:
        found.append(Issue("monitoring.labels", "has no effect without a Prometheus Operator: drop it"))
    return found
