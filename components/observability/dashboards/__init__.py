"""The pack's Grafana dashboards: GPUs (DCGM), queues (Kueue or Volcano) and training jobs, one module each."""

from __future__ import annotations

from typing import Any

from components.observability import grafana
from components.observability.dashboards import gpus, jobs, queues
from components.observability.grafana import Dashboard
from components.observability.pack import Pack


def dashboards(pack: Pack) -> list[Dashboard]:
    """The stack's dashboards: the GPU one where the GPU Operator's DCGM exporter reports (GKE's managed DCGM goes
    to Cloud Monitoring, which has its own), the queue one of its scheduler, and the jobs one."""
    if not pack.dashboards:
        return []
    found = [gpus.dashboard()] if pack.gpu_exporter else []
    queue = queues.dashboard(pack.scheduler)
    if queue is not None:
        found.append(queue)
    found.append(jobs.dashboard(gpu_metrics=pack.gpu_exporter))
    return found


def configmaps(pack: Pack) -> list[dict[str, Any]]:
    """Each dashboard as the ConfigMap Grafana's sidecar loads."""
    return [grafana.configmap(d, pack.dashboards_namespace, pack.grafana_label) for d in dashboards(pack)]
