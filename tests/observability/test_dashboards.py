"""Which dashboards a stack gets and what they draw: the GPU one where the GPU Operator's exporter reports, the queue
one of its scheduler, the jobs one."""

from __future__ import annotations

from components.observability import dashboards
from components.observability import pack as packs
from components.observability.dashboards import gpus, jobs, queues
from tests.addons.stacks import stack_file
from tests.observability.stacks import gke_gpu_operator


def _uids(stack) -> list[str]:
    return [d.uid for d in dashboards.dashboards(packs.resolve(stack.config))]


def test_each_stack_gets_the_dashboards_its_metrics_fill() -> None:
    assert _uids(stack_file("dev")) == [gpus.UID, queues.UID, jobs.UID]
    assert _uids(stack_file("gke")) == [queues.UID, jobs.UID], "GKE's managed DCGM draws the GPUs in Cloud Monitoring"
    assert _uids(gke_gpu_operator()) == [gpus.UID, queues.UID, jobs.UID]
    assert _uids(stack_file("dev", scheduler={"type": "none"}, jobs=[], trainer={"enabled": False})) == [
        gpus.UID,
        jobs.UID,
    ]
    assert _uids(stack_file("dev", monitoring={})) == []


def test_the_queue_dashboard_follows_the_scheduler() -> None:
    assert queues.dashboard("kueue").title == "Queues (Kueue)"
    assert queues.dashboard("volcano").title == "Queues (Volcano)"
    assert queues.dashboard("none") is None
    volcano = [q.expr for p in queues.dashboard("volcano").panels for q in p.queries]
    assert all('resource="nvidia.com/gpu"' in e and e.endswith("/ 1000") for e in volcano[:3]), "GPUs, not milli-GPUs"


def test_the_gpu_dashboard_draws_every_fault_the_issue_names() -> None:
    titles = {p.title for p in gpus.dashboard().panels}
    assert {"GPU utilization", "Framebuffer used", "XIDs (last 5 minutes)", "ECC errors", "Remapped rows"} <= titles
    assert {"Time throttled", "Clock event reasons", "NVLink errors", "PCIe replays"} <= titles


def test_the_jobs_dashboard_joins_gpus_to_jobs_only_with_the_exporter() -> None:
    with_gpus = {p.title for p in jobs.dashboard(gpu_metrics=True).panels}
    without = {p.title for p in jobs.dashboard(gpu_metrics=False).panels}
    assert without == {"GPU pods by phase", "GPUs requested"}
    assert {"Idle GPUs (under 1% busy)", "GPU utilization (mean over the job's GPUs)"} <= with_gpus
