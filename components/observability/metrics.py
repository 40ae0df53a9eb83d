"""Every series the pack's alerts and dashboards read, and the exporter that serves it.

A rule or a panel names its series through these constants, and a test checks that every series name in every
expression is one of them, and that every DCGM field is in the exporter's metrics list (`dcgm.csv`): a series no
exporter serves would make an alert that never fires, which is the failure this module exists to prevent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Source = Literal["dcgm-exporter", "kube-state-metrics", "kueue", "volcano"]
Kind = Literal["gauge", "counter", "histogram", "label"]


@dataclass(frozen=True, slots=True)
class Metric:
    """One series (or histogram) an exporter serves, as the pack reads it."""

    name: str
    source: Source
    kind: Kind
    help: str
    """What it measures, in the exporter's own words where it has them."""

    def __str__(self) -> str:
        return self.name


def _dcgm(name: str, kind: Kind, help_: str) -> Metric:
    return Metric(name, "dcgm-exporter", kind, help_)


# DCGM fields, by the names dcgm-exporter's metrics list takes (the DCGM_FI_* names of go-dcgm's
# pkg/dcgm/const_fields.go at ec245c09fe3e, the commit dcgm-exporter 4.5.3-4.8.2 builds on; the GPU Operator
# v26.7.0 runs dcgm-exporter 4.6.0-4.8.3). Deprecated aliases are avoided: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS is
# DCGM_FI_DEV_CLOCKS_EVENT_REASONS now. Types and help follow dcgm-exporter's etc/default-counters.csv; most of
# the error fields below are commented out there, which is why the pack ships its own list.
GPU_UTIL = _dcgm("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).")
GR_ENGINE_ACTIVE = _dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.")
TENSOR_ACTIVE = _dcgm("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.")
DRAM_ACTIVE = _dcgm(
    "DCGM_FI_PROF_DRAM_ACTIVE",
    "gauge",
    "Ratio of cycles the device memory interface is active sending or receiving data.",
)
FB_USED = _dcgm("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).")
FB_FREE = _dcgm("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).")
GPU_TEMP = _dcgm("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).")
MEMORY_TEMP = _dcgm("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).")
POWER_USAGE = _dcgm("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).")
SM_CLOCK = _dcgm("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).")
CLOCKS_EVENT_REASONS = _dcgm(
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*)."
)
THERMAL_VIOLATION = _dcgm(
    "DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in ns)."
)
POWER_VIOLATION = _dcgm(
    "DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in ns)."
)
XID_ERRORS = _dcgm("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.")
XID_ERRORS_COUNT = _dcgm("DCGM_EXP_XID_ERRORS_COUNT", "counter", "Reported XIDs during the last window.")
"""dcgm-exporter's own field: per `xid` label, the XIDs of the last window (DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE,
5 minutes by default; internal/pkg/collector/xid_collector.go). Unlike DCGM_FI_DEV_XID_ERRORS, which keeps only the
last XID, it loses none of a burst."""
ECC_SBE_VOLATILE = _dcgm("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.")
ECC_DBE_VOLATILE = _dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.")
ECC_DBE_AGGREGATE = _dcgm(
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors."
)
UNCORRECTABLE_REMAPPED_ROWS = _dcgm(
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors."
)
CORRECTABLE_REMAPPED_ROWS = _dcgm(
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors."
)
ROW_REMAP_FAILURE = _dcgm("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed.")
ROW_REMAP_PENDING = _dcgm(
    "DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether remapping of rows is pending (a GPU reset applies it)."
)
NVLINK_CRC_FLIT_ERRORS = _dcgm(
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."
)
NVLINK_CRC_DATA_ERRORS = _dcgm(
    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink data CRC errors."
)
NVLINK_REPLAY_ERRORS = _dcgm(
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries."
)
NVLINK_RECOVERY_ERRORS = _dcgm(
    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink recovery errors."
)
NVLINK_TX_BYTES = _dcgm(
    "DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge", "The rate of data transmitted over NVLink in bytes per second."
)
NVLINK_RX_BYTES = _dcgm(
    "DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge", "The rate of data received over NVLink in bytes per second."
)
PCIE_REPLAY = _dcgm("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.")
PCIE_TX_BYTES = _dcgm(
    "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus in bytes per second."
)
PCIE_RX_BYTES = _dcgm(
    "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus in bytes per second."
)
DRIVER_VERSION = _dcgm("DCGM_FI_DRIVER_VERSION", "label", "Driver Version")

DCGM_FIELDS: tuple[Metric, ...] = (
    GPU_UTIL,
    GR_ENGINE_ACTIVE,
    TENSOR_ACTIVE,
    DRAM_ACTIVE,
    FB_USED,
    FB_FREE,
    GPU_TEMP,
    MEMORY_TEMP,
    POWER_USAGE,
    SM_CLOCK,
    CLOCKS_EVENT_REASONS,
    THERMAL_VIOLATION,
    POWER_VIOLATION,
    XID_ERRORS,
    XID_ERRORS_COUNT,
    ECC_SBE_VOLATILE,
    ECC_DBE_VOLATILE,
    ECC_DBE_AGGREGATE,
    UNCORRECTABLE_REMAPPED_ROWS,
    CORRECTABLE_REMAPPED_ROWS,
    ROW_REMAP_FAILURE,
    ROW_REMAP_PENDING,
    NVLINK_CRC_FLIT_ERRORS,
    NVLINK_CRC_DATA_ERRORS,
    NVLINK_REPLAY_ERRORS,
    NVLINK_RECOVERY_ERRORS,
    NVLINK_TX_BYTES,
    NVLINK_RX_BYTES,
    PCIE_REPLAY,
    PCIE_TX_BYTES,
    PCIE_RX_BYTES,
    DRIVER_VERSION,
)
"""The DCGM exporter's metrics list: every field the pack's rules and panels read, and the driver version label."""

# kube-state-metrics (v2, as kube-prometheus-stack 88.5.3's subchart 8.4.0 runs it; docs/metrics/workload/pod-metrics.md
# and docs/metrics/cluster/node-metrics.md). Extended resources are named with '.' and '/' as '_'.
POD_LABELS = Metric(
    "kube_pod_labels",
    "kube-state-metrics",
    "gauge",
    "Kubernetes labels converted to Prometheus labels (only the labels --metric-labels-allowlist names).",
)
POD_PHASE = Metric("kube_pod_status_phase", "kube-state-metrics", "gauge", "The pods current phase.")
POD_REQUESTS = Metric(
    "kube_pod_container_resource_requests",
    "kube-state-metrics",
    "gauge",
    "The number of requested request resource by a container.",
)
NODE_CAPACITY = Metric(
    "kube_node_status_capacity", "kube-state-metrics", "gauge", "The capacity for different resources of a node."
)
KSM_GPU_RESOURCE = "nvidia_com_gpu"
"""nvidia.com/gpu as kube-state-metrics names it in its `resource` label."""

# Kueue v0.19.2 pkg/metrics/metrics.go (subsystem kueue). The cluster queue resource series need the manager's
# metrics.enableClusterQueueResources (components/addons/scheduler.py sets it).
KUEUE_PENDING = Metric(
    "kueue_pending_workloads", "kueue", "gauge", "The number of pending workloads, per 'cluster_queue' and 'status'."
)
KUEUE_ADMITTED_ACTIVE = Metric(
    "kueue_admitted_active_workloads", "kueue", "gauge", "The number of admitted Workloads that are active."
)
KUEUE_USAGE = Metric(
    "kueue_cluster_queue_resource_usage", "kueue", "gauge", "The cluster_queue's total resource usage, per flavor."
)
KUEUE_QUOTA = Metric(
    "kueue_cluster_queue_nominal_quota", "kueue", "gauge", "The cluster_queue's resource nominal quota, per flavor."
)
KUEUE_WAIT = Metric(
    "kueue_admission_wait_time_seconds",
    "kueue",
    "histogram",
    "The time between a workload was created or requeued until admission, per 'cluster_queue'.",
)
KUEUE_EVICTED = Metric(
    "kueue_evicted_workloads_total",
    "kueue",
    "counter",
    "The number of evicted workloads, per 'cluster_queue' and 'reason'.",
)

# Volcano v1.15.1: the scheduler's pkg/scheduler/metrics/queue.go and the controllers' pkg/controllers/metrics/queue.go
# (subsystem volcano), labelled by queue_name (and resource for scalar resources such as nvidia.com/gpu).
VOLCANO_ALLOCATED = Metric(
    "volcano_queue_allocated_scalar_resources", "volcano", "gauge", "Allocated scalar resources for one queue."
)
VOLCANO_REQUEST = Metric(
    "volcano_queue_request_scalar_resources", "volcano", "gauge", "Request scalar resources for one queue."
)
VOLCANO_DESERVED = Metric(
    "volcano_queue_deserved_scalar_resources", "volcano", "gauge", "Deserved scalar resources for one queue."
)
VOLCANO_PENDING = Metric(
    "volcano_queue_pod_group_pending_count", "volcano", "gauge", "The number of Pending PodGroup in this queue."
)
VOLCANO_INQUEUE = Metric(
    "volcano_queue_pod_group_inqueue_count", "volcano", "gauge", "The number of Inqueue PodGroup in this queue."
)
VOLCANO_RUNNING = Metric(
    "volcano_queue_pod_group_running_count", "volcano", "gauge", "The number of Running PodGroup in this queue."
)

ALL: tuple[Metric, ...] = (
    *DCGM_FIELDS,
    POD_LABELS,
    POD_PHASE,
    POD_REQUESTS,
    NODE_CAPACITY,
    KUEUE_PENDING,
    KUEUE_ADMITTED_ACTIVE,
    KUEUE_USAGE,
    KUEUE_QUOTA,
    KUEUE_WAIT,
    KUEUE_EVICTED,
    VOLCANO_ALLOCATED,
    VOLCANO_REQUEST,
    VOLCANO_DESERVED,
    VOLCANO_PENDING,
    VOLCANO_INQUEUE,
    VOLCANO_RUNNING,
)
"""Every series the pack reads."""


def series_names(metric: Metric) -> tuple[str, ...]:
    """The series names a metric appears under in PromQL (a histogram's _bucket, _sum and _count)."""
    if metric.kind == "histogram":
        return tuple(f"{metric.name}_{suffix}" for suffix in ("bucket", "sum", "count"))
    return (metric.name,)
