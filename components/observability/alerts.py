"""The alerts for GPU faults that must page, as one PrometheusRule: XIDs 48, 63, 64, 79, 94 and 95, uncorrectable
ECC errors, row remaps, NVLink errors, a GPU gone from its node, thermal throttling, and idle GPUs in a running
training job.

Each names the node, the GPU and the pod holding it, and says what to do. Where the stack's repair agent acts on a
fault itself (the EKS node monitoring agent or NVSentinel, on XIDs and the memory errors that raise them), its alert
is a warning that says what the agent does, not a page: the page is for what nothing here acts on.

XID meanings and actions: NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors, "Analyzing Xid Errors with the
Xid Catalog": the immediate-action buckets RESTART_APP, RESET_GPU, NODE_REBOOT) and NVIDIA Health Validation's Xid
checks (docs.nvidia.com/health-validation/reference/checks/xid: 48 CRITICAL, drain and reset the GPU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from components import repair
from components.manifests.meta import metadata
from components.nodecheck import FAILED_TAINT, RESULT_LABEL, STARTUP_TAINT
from components.observability import dcgm, metrics, pods
from components.observability.metrics import Metric
from components.observability.pack import RULE_NAME, Pack
from components.stack import Stack

Severity = Literal["critical", "warning"]
Fault = Literal["xid", "memory", "nvlink", "bus", "thermal", "idle"]
# What each repair agent acts on by itself (components/repair.py): both read XIDs, and the memory faults (ECC, row
# remaps) and a GPU off the bus raise XIDs 48, 63, 64, 79, 94 and 95. GKE's auto-repair does not list XIDs among its
# criteria, so on GKE nothing but this alert acts.
_ACTS_ON: dict[str, frozenset[str]] = {
    "eks-node-monitoring-agent": frozenset({"xid", "memory", "bus"}),
    "nvsentinel": frozenset({"xid", "memory", "bus"}),
}
_ACTOR = {
    "eks-node-monitoring-agent": "The EKS node monitoring agent sets AcceleratedHardwareReady=False on the node, and "
    "node repair replaces or reboots it",
    "nvsentinel": "NVSentinel cordons the node and evicts the training pods on it",
}
GPU = (
    f"GPU {{{{ $labels.{dcgm.GPU} }}}} ({{{{ $labels.{dcgm.MODEL} }}}}, {{{{ $labels.{dcgm.UUID} }}}}) "
    f"of node {{{{ $labels.{dcgm.NODE} }}}}"
)
"""How a summary names the GPU: its index, model and UUID, and its node."""
HOLDER = f"{{{{ with $labels.{dcgm.POD} }}}}, held by pod {{{{ $labels.{dcgm.NAMESPACE} }}}}/{{{{ . }}}}{{{{ end }}}}"
"""The pod holding the GPU, when one does."""
_GPU_CAPACITY = f'max by ({dcgm.NODE}) ({metrics.NODE_CAPACITY}{{resource="{metrics.KSM_GPU_RESOURCE}"}})'
"""Each node's GPUs, as kube-state-metrics reports the device plugin's capacity (its `node` label)."""


@dataclass(frozen=True, slots=True)
class Alert:
    """One alerting rule and what it reads."""

    name: str
    expr: str
    severity: Severity
    summary: str
    description: str
    reads: tuple[Metric, ...]
    fault: Fault
    for_: str = "0m"

    def rule(self) -> dict[str, Any]:
        """The rule as a PrometheusRule (and a Prometheus rule file) holds it."""
        rule: dict[str, Any] = {"alert": self.name, "expr": self.expr}
        if self.for_ != "0m":
            rule["for"] = self.for_
        rule["labels"] = {"severity": self.severity}
        rule["annotations"] = {"summary": self.summary, "description": self.description}
        return rule


@dataclass(frozen=True, slots=True)
class _Xid:
    code: int
    name: str
    what: str
    severity: Severity
    fault: Fault
    action: str


_XIDS = (
    _Xid(
        48,
        "GpuXid48DoubleBitEcc",
        "a double-bit ECC error (uncorrectable) in GPU memory",
        "critical",
        "memory",
        "Drain the node and reset the GPU (NVIDIA: RESET_GPU); the job restarts from its last checkpoint elsewhere. "
        "On A100 and later a row remap (XID 63) or its failure (XID 64) follows: watch those alerts.",
    ),
    _Xid(
        63,
        "GpuXid63RowRemapPending",
        "a row remapping recorded for a memory row with errors (it applies at the next GPU reset)",
        "warning",
        "memory",
        "Once the job on it ends, drain the node and reset the GPU (nvidia-smi -r) so the remap takes effect.",
    ),
    _Xid(
        64,
        "GpuXid64RowRemapFailure",
        "the row remapper failed to record a memory row with errors",
        "critical",
        "memory",
        "Drain the node and reset the GPU; if XID 64 or a row-remap failure comes back, the GPU needs replacing.",
    ),
    _Xid(
        79,
        "GpuFallenOffTheBus",
        "XID 79: the GPU has fallen off the bus (PCIe)",
        "critical",
        "bus",
        "The GPU is gone until the node reboots (NVIDIA: NODE_REBOOT): drain it and reboot it; when it recurs, have "
        "the machine's GPU, riser or PCIe switch serviced.",
    ),
    _Xid(
        94,
        "GpuXid94ContainedEcc",
        "a contained ECC error: only the process that touched the memory was stopped",
        "warning",
        "memory",
        "The training process on this GPU died and restarts (torchrun's in-place restart); reset the GPU once it "
        "is idle so the row remap applies.",
    ),
    _Xid(
        95,
        "GpuXid95UncontainedEcc",
        "an uncontained ECC error: every process on the GPU is affected",
        "critical",
        "memory",
        "Drain the node and reset the GPU (NVIDIA: RESET_GPU); the job restarts from its last checkpoint elsewhere.",
    ),
)
"""The XIDs the pack alerts on, what each means, and what to do."""


def xid_codes() -> tuple[int, ...]:
    """The XIDs alerted on."""
    return tuple(x.code for x in _XIDS)


def alerts(stack: Stack, pack: Pack) -> list[Alert]:
    """The stack's alerts, their severity and advice fitted to its repair agent and node checks."""
    context = _Context(stack)
    found = [_xid_alert(x, context) for x in _XIDS]
    found += [
        context.alert(
            "GpuUncorrectableEccErrors",
            f"increase({metrics.ECC_DBE_VOLATILE}[10m]) > 0",
            severity="critical",
            fault="memory",
            summary=f"Uncorrectable (double-bit) ECC errors on {GPU}{HOLDER}",
            advice="Its volatile double-bit ECC count rose in the last 10 minutes: data in GPU memory was lost and "
            "the job's results on it cannot be trusted. Drain the node and reset the GPU; check the row-remap alerts "
            "after.",
            reads=(metrics.ECC_DBE_VOLATILE,),
        ),
        context.alert(
            "GpuRowRemapFailure",
            f"{metrics.ROW_REMAP_FAILURE} > 0",
            severity="critical",
            fault="memory",
            summary=f"Row remapping failed on {GPU}{HOLDER}",
            advice="The GPU could not remap a memory row with errors: it has run out of spare rows or cannot record "
            "them. Drain the node and have the GPU replaced.",
            reads=(metrics.ROW_REMAP_FAILURE,),
        ),
        context.alert(
            "GpuRowRemapPending",
            f"{metrics.ROW_REMAP_PENDING} > 0",
            severity="warning",
            fault="memory",
            summary=f"A row remap is pending on {GPU}{HOLDER}",
            advice="A memory row with errors is marked for remapping, which applies at the next GPU reset. Once the "
            "job on it ends, drain the node and reset the GPU (nvidia-smi -r).",
            reads=(metrics.ROW_REMAP_PENDING,),
            for_="15m",
        ),
        context.alert(
            "GpuNvlinkErrors",
            f"increase({metrics.NVLINK_RECOVERY_ERRORS}[15m]) > 0 or (increase({metrics.NVLINK_CRC_FLIT_ERRORS}[15m])"
            f" + increase({metrics.NVLINK_CRC_DATA_ERRORS}[15m]) + increase({metrics.NVLINK_REPLAY_ERRORS}[15m]))"
            " > 100",
            severity="critical",
            fault="nvlink",
            summary=f"NVLink errors on {GPU}{HOLDER}",
            advice="An NVLink of this GPU needed recovery, or keeps retrying (more than 100 CRC or replay errors in 15 "
            "minutes): its collectives slow down or hang the whole job. Drain the node and run the node check again "
            "(its single-node all_reduce measures NVLink); if it fails, have the GPU baseboard serviced.",
            reads=(
                metrics.NVLINK_RECOVERY_ERRORS,
                metrics.NVLINK_CRC_FLIT_ERRORS,
                metrics.NVLINK_CRC_DATA_ERRORS,
                metrics.NVLINK_REPLAY_ERRORS,
            ),
        ),
        context.alert(
            "GpuMissing",
            f"{_GPU_CAPACITY} - on ({dcgm.NODE}) (count by ({dcgm.NODE}) (count by ({dcgm.NODE}, {dcgm.GPU}) "
            f"({metrics.GPU_TEMP})) or on ({dcgm.NODE}) {_GPU_CAPACITY} * 0) > 0",
            severity="critical",
            fault="bus",
            summary=f"Node {{{{ $labels.{dcgm.NODE} }}}} has {{{{ $value }}}} GPU(s) not reporting",
            advice="For 15 minutes the node's GPU capacity has been more than the GPUs its DCGM exporter reports: a "
            "GPU has dropped off the bus (look for XID 79 in the node's kernel log) or the exporter is not running "
            "there (kubectl -n gpu-operator get pods -o wide | grep dcgm-exporter). A lost GPU needs the node "
            "rebooted.",
            reads=(metrics.NODE_CAPACITY, metrics.GPU_TEMP),
            for_="15m",
        ),
        context.alert(
            "GpuThermalThrottling",
            f"rate({metrics.THERMAL_VIOLATION}[5m]) / 1e9 > 0.1",
            severity="critical",
            fault="thermal",
            summary=f"{GPU} is throttled for heat{HOLDER}",
            advice="It spent more than 10% of the last 10 minutes slowed down for temperature: its rank is a straggler "
            "and the whole job runs at its pace. Check the node's cooling (fans, airflow, inlet temperature, the "
            "GPU's temperature on the GPU dashboard); drain it if it persists.",
            reads=(metrics.THERMAL_VIOLATION,),
            for_="10m",
        ),
        _idle_alert(context, pack.idle_gpu_minutes),
    ]
    return found


class _Context:
    """What the advice depends on: the stack's repair agent and whether its pools check nodes at join."""

    def __init__(self, stack: Stack) -> None:
        self.agent = repair.agent(stack.config)
        self.node_check = bool(stack.node_checks)

    def alert(
        self,
        name: str,
        expr: str,
        *,
        severity: Severity,
        fault: Fault,
        summary: str,
        advice: str,
        reads: tuple[Metric, ...],
        for_: str = "0m",
    ) -> Alert:
        """An alert whose severity and description follow who acts on its fault."""
        acted = self.agent in _ACTS_ON and fault in _ACTS_ON[self.agent]
        parts = [advice]
        if acted:
            parts.insert(0, f"{_ACTOR[self.agent]} (health.repair); this alert says so, it does not page.")
            severity = "warning"
        if self.node_check and fault != "idle":
            parts.append(
                f"A node that comes back (rebooted, repaired or replaced) is checked before jobs land: the node check "
                f"(taint {STARTUP_TAINT.key}) runs DCGM diagnostics and reads ECC, row remaps and XIDs; to check a "
                f"node again, remove its {RESULT_LABEL} label and taint it {STARTUP_TAINT.key}={STARTUP_TAINT.value}:"
                f"NoSchedule. A node that fails keeps {FAILED_TAINT.key}={FAILED_TAINT.value}."
            )
        return Alert(name, expr, severity, summary, " ".join(parts), reads, fault, for_)


def _xid_alert(xid: _Xid, context: _Context) -> Alert:
    return context.alert(
        xid.name,
        f'{metrics.XID_ERRORS_COUNT}{{xid="{xid.code}"}} > 0',
        severity=xid.severity,
        fault=xid.fault,
        summary=f"XID {xid.code} on {GPU}{HOLDER}",
        advice=f"The driver reported {xid.what}. {xid.action}",
        reads=(metrics.XID_ERRORS_COUNT,),
    )


def _idle_alert(context: _Context, minutes: int) -> Alert:
    utilization = f'avg_over_time({metrics.GPU_UTIL}{{{dcgm.POD}!=""}}[5m]) < 1'
    return context.alert(
        "GpuIdleInRunningJob",
        pods.on_job_gpus(utilization),
        severity="critical",
        fault="idle",
        summary=f"{GPU} of running job {{{{ $labels.{dcgm.NAMESPACE} }}}}/{{{{ $labels.{pods.JOB} }}}} is idle",
        advice=f"Pod {{{{ $labels.{dcgm.NAMESPACE} }}}}/{{{{ $labels.{dcgm.POD} }}}} is Running and holds this GPU, "
        f"and the GPU has been under 1% busy for {minutes} minutes: the job is hung (a collective waiting on a lost "
        "rank, a dead data loader) or it holds GPUs it does not use. Look at the job's logs and its other ranks "
        "(the jobs dashboard); a hung job is restarted by deleting its pods, a job that does not need the GPU by "
        "requesting fewer.",
        reads=(metrics.GPU_UTIL, metrics.POD_LABELS, metrics.POD_PHASE),
        for_=f"{minutes}m",
    )


def prometheus_rule(stack: Stack, pack: Pack) -> dict[str, Any]:
    """The PrometheusRule holding every alert, in the pack's namespace."""
    found = alerts(stack, pack)
    faults = [a.rule() for a in found if a.fault != "idle"]
    jobs = [a.rule() for a in found if a.fault == "idle"]
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata(RULE_NAME, pack.namespace, labels=pack.labels),
        "spec": {
            "groups": [
                {"name": "gpu-training.gpu-faults", "rules": faults},
                {"name": "gpu-training.jobs", "rules": jobs},
            ]
        },
    }


def rule_file(rule: dict[str, Any]) -> dict[str, Any]:
    """A PrometheusRule as a Prometheus rule file (what promtool and Prometheus read)."""
    return {"groups": rule["spec"]["groups"]}
