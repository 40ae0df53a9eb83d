"""The training jobs dashboard: each job's pods and GPUs, and (with the DCGM exporter) how busy its GPUs are."""

from __future__ import annotations

from components.observability import dcgm, metrics, pods
from components.observability.grafana import Dashboard, Panel, Query, Row, Variable

UID = "gpu-training-jobs"
_JOB = f'{pods.JOB}=~"$job", namespace=~"$namespace"'
_LEGEND = f"{{{{namespace}}}}/{{{{{pods.JOB}}}}}"
_GPU_LEGEND = f"{{{{{dcgm.NAMESPACE}}}}}/{{{{{pods.JOB}}}}}"


def dashboard(*, gpu_metrics: bool) -> Dashboard:
    """The jobs dashboard; `gpu_metrics`: the DCGM exporter runs, so each job's GPU utilization and memory too."""
    job_pods = f"{metrics.POD_LABELS}{{{pods.ROLE}=~{_roles()}, {_JOB}}}"
    phases = (
        f"sum by (namespace, {pods.JOB}, phase) (({metrics.POD_PHASE} == 1) * on (namespace, pod) group_left "
        f"({pods.JOB}) max by (namespace, pod, {pods.JOB}) ({job_pods}))"
    )
    requested = (
        f'sum by (namespace, {pods.JOB}) ({metrics.POD_REQUESTS}{{resource="{metrics.KSM_GPU_RESOURCE}"}} '
        f"* on (namespace, pod) group_left ({pods.JOB}) max by (namespace, pod, {pods.JOB}) ({job_pods}))"
    )
    rows = [
        Row(
            "Pods",
            (
                Panel(
                    "GPU pods by phase",
                    (Query(phases, f"{_LEGEND} {{{{phase}}}}", (metrics.POD_PHASE, metrics.POD_LABELS)),),
                    description="A gang that stays Pending waits for its queue, or for nodes.",
                ),
                Panel(
                    "GPUs requested",
                    (Query(requested, _LEGEND, (metrics.POD_REQUESTS, metrics.POD_LABELS)),),
                ),
            ),
        )
    ]
    if gpu_metrics:
        selected = f'{{{dcgm.NAMESPACE}=~"$namespace"}}'
        utilization = pods.on_job_gpus(f"{metrics.GPU_UTIL}{selected}", _JOB)
        memory = pods.on_job_gpus(f"{metrics.FB_USED}{selected} / ({metrics.FB_USED} + {metrics.FB_FREE})", _JOB)
        idle = pods.on_job_gpus(f"{metrics.GPU_UTIL}{selected} < 1", _JOB)
        rows.append(
            Row(
                "GPUs",
                (
                    Panel(
                        "GPU utilization (mean over the job's GPUs)",
                        (
                            Query(
                                f"avg by ({dcgm.NAMESPACE}, {pods.JOB}) ({utilization})",
                                _GPU_LEGEND,
                                (metrics.GPU_UTIL, metrics.POD_LABELS, metrics.POD_PHASE),
                            ),
                        ),
                        unit="percent",
                        max=100,
                    ),
                    Panel(
                        "GPU memory used (max over the job's GPUs)",
                        (
                            Query(
                                f"max by ({dcgm.NAMESPACE}, {pods.JOB}) ({memory})",
                                _GPU_LEGEND,
                                (metrics.FB_USED, metrics.FB_FREE, metrics.POD_LABELS, metrics.POD_PHASE),
                            ),
                        ),
                        unit="percentunit",
                        max=1,
                    ),
                    Panel(
                        "Idle GPUs (under 1% busy)",
                        (
                            Query(
                                f"count by ({dcgm.NAMESPACE}, {pods.JOB}) ({idle})",
                                _GPU_LEGEND,
                                (metrics.GPU_UTIL, metrics.POD_LABELS, metrics.POD_PHASE),
                            ),
                        ),
                        description="GPUs a running job holds and does not use; after a while they alert.",
                        width=24,
                    ),
                ),
            )
        )
    return Dashboard(
        uid=UID,
        title="Training jobs",
        description="Each training job of the stack (by its app.kubernetes.io/instance label): pods, GPUs, and use.",
        variables=(
            Variable("namespace", "Namespace", f'{metrics.POD_LABELS}{{{pods.ROLE}!=""}}', "namespace"),
            Variable("job", "Job", f'{metrics.POD_LABELS}{{{pods.ROLE}!=""}}', pods.JOB),
        ),
        rows=tuple(rows),
    )


def _roles() -> str:
    return '"' + "|".join(pods.GPU_ROLES) + '"'
