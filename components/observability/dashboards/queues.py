"""The queue dashboard: the gang scheduler's queues, their GPUs in use against their share, and the jobs waiting.
Kueue's ClusterQueues or Volcano's Queues, whichever the stack runs."""

from __future__ import annotations

from components.allocatable import GPU_RESOURCE
from components.observability import metrics
from components.observability.grafana import Dashboard, Panel, Query, Row, Variable

UID = "gpu-training-queues"
_GPUS = f'resource="{GPU_RESOURCE}"'


def dashboard(scheduler: str) -> Dashboard | None:
    """The queue dashboard of `scheduler` (kueue | volcano), or None when the stack has no queues (none)."""
    if scheduler == "kueue":
        return _kueue()
    if scheduler == "volcano":
        return _volcano()
    return None


def _kueue() -> Dashboard:
    queue = 'cluster_queue=~"$queue"'
    usage = f"sum by (cluster_queue) ({metrics.KUEUE_USAGE}{{{queue}, {_GPUS}}})"
    quota = f"sum by (cluster_queue) ({metrics.KUEUE_QUOTA}{{{queue}, {_GPUS}}})"
    wait = (
        f"histogram_quantile(0.9, sum by (cluster_queue, le) "
        f"(rate({metrics.KUEUE_WAIT}_bucket{{{queue}}}[$__rate_interval])))"
    )
    return Dashboard(
        uid=UID,
        title="Queues (Kueue)",
        description="Each ClusterQueue: GPUs in use against its nominal quota, workloads waiting and admitted.",
        variables=(Variable("queue", "ClusterQueue", str(metrics.KUEUE_QUOTA), "cluster_queue"),),
        rows=(
            Row(
                "GPUs",
                (
                    Panel(
                        "GPUs in use and nominal quota",
                        (
                            Query(usage, "{{cluster_queue}} in use", (metrics.KUEUE_USAGE,)),
                            Query(quota, "{{cluster_queue}} quota", (metrics.KUEUE_QUOTA,)),
                        ),
                        description="Above its quota a queue is borrowing from its cohort.",
                    ),
                    Panel(
                        "Share of quota in use",
                        (Query(f"{usage} / {quota}", "{{cluster_queue}}", (metrics.KUEUE_USAGE, metrics.KUEUE_QUOTA)),),
                        unit="percentunit",
                        kind="stat",
                    ),
                ),
            ),
            Row(
                "Workloads",
                (
                    Panel(
                        "Pending workloads",
                        (
                            Query(
                                f"sum by (cluster_queue, status) ({metrics.KUEUE_PENDING}{{{queue}}})",
                                "{{cluster_queue}} {{status}}",
                                (metrics.KUEUE_PENDING,),
                            ),
                        ),
                        description="active: waiting for quota; inadmissible: cannot be admitted as things are.",
                    ),
                    Panel(
                        "Admitted workloads",
                        (
                            Query(
                                f"sum by (cluster_queue) ({metrics.KUEUE_ADMITTED_ACTIVE}{{{queue}}})",
                                "{{cluster_queue}}",
                                (metrics.KUEUE_ADMITTED_ACTIVE,),
                            ),
                        ),
                    ),
                    Panel(
                        "Time to admission (p90)", (Query(wait, "{{cluster_queue}}", (metrics.KUEUE_WAIT,)),), unit="s"
                    ),
                    Panel(
                        "Evictions",
                        (
                            Query(
                                f"sum by (cluster_queue, reason) "
                                f"(increase({metrics.KUEUE_EVICTED}{{{queue}}}[$__rate_interval]))",
                                "{{cluster_queue}} {{reason}}",
                                (metrics.KUEUE_EVICTED,),
                            ),
                        ),
                        description="Preempted, PodsReadyTimeout (gangs not ready in 30 minutes), NodeFailures ...",
                    ),
                ),
            ),
        ),
    )


def _volcano() -> Dashboard:
    queue = 'queue_name=~"$queue"'

    def gpus(metric: metrics.Metric, name: str) -> Query:
        # Volcano counts scalar resources in thousandths (pkg/scheduler/api/resource_info.go: MilliValue).
        return Query(
            f"sum by (queue_name) ({metric}{{{queue}, {_GPUS}}}) / 1000", f"{{{{queue_name}}}} {name}", (metric,)
        )

    def groups(metric: metrics.Metric, name: str) -> Query:
        return Query(f"sum by (queue_name) ({metric}{{{queue}}})", f"{{{{queue_name}}}} {name}", (metric,))

    return Dashboard(
        uid=UID,
        title="Queues (Volcano)",
        description="Each Volcano Queue: GPUs allocated, requested and deserved, and its PodGroups by phase.",
        variables=(Variable("queue", "Queue", str(metrics.VOLCANO_DESERVED), "queue_name"),),
        rows=(
            Row(
                "GPUs",
                (
                    Panel(
                        "GPUs allocated, requested and deserved",
                        (
                            gpus(metrics.VOLCANO_ALLOCATED, "allocated"),
                            gpus(metrics.VOLCANO_REQUEST, "requested"),
                            gpus(metrics.VOLCANO_DESERVED, "deserved"),
                        ),
                        description="Deserved is the queue's share by weight; above it, its jobs may be reclaimed.",
                        width=24,
                    ),
                ),
            ),
            Row(
                "PodGroups",
                (
                    Panel(
                        "PodGroups by phase",
                        (
                            groups(metrics.VOLCANO_PENDING, "pending"),
                            groups(metrics.VOLCANO_INQUEUE, "inqueue"),
                            groups(metrics.VOLCANO_RUNNING, "running"),
                        ),
                        width=24,
                    ),
                ),
            ),
        ),
    )
