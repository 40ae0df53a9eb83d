"""The GPU dashboard, from the DCGM exporter: utilization, memory, temperature and power, throttling, XIDs, ECC and
row remaps, NVLink and PCIe."""

from __future__ import annotations

from components.observability import dcgm, metrics
from components.observability.grafana import Dashboard, Panel, Query, Row, Variable
from components.observability.metrics import Metric

UID = "gpu-training-gpus"
_BY_GPU = f"{{{{{dcgm.NODE}}}}} GPU {{{{{dcgm.GPU}}}}}"
"""A series' legend: its node and GPU index."""
_SELECT = f'{dcgm.NODE}=~"$node"'
# Clock event reasons worth a panel, by bit (dcgm-exporter internal/pkg/collector/clock_events_collector.go, after
# DCGM's dcgm_fields.h DCGM_CLOCKS_EVENT_REASON_*): the ones that slow a healthy GPU under load.
_CLOCK_EVENTS = (
    ("power cap", 0x4),
    ("hw slowdown", 0x8),
    ("sw thermal", 0x20),
    ("hw thermal", 0x40),
    ("power brake", 0x80),
)


def _series(metric: Metric, extra: str = "") -> str:
    return f"{metric}{{{_SELECT}{extra}}}"


def _gauge(title: str, metric: Metric, unit: str, *, scale: str = "", max_: float | None = None) -> Panel:
    """A panel of one gauge per GPU."""
    return Panel(title, (Query(f"{_series(metric)}{scale}", _BY_GPU, (metric,)),), unit=unit, max=max_)


def _rate(title: str, counters: tuple[tuple[str, Metric], ...], unit: str = "short", description: str = "") -> Panel:
    """A panel of per-second rates of counters, per GPU."""
    return Panel(
        title,
        tuple(
            Query(f"rate({_series(m)}[$__rate_interval])", f"{_BY_GPU} {name}".strip(), (m,)) for name, m in counters
        ),
        unit=unit,
        description=description,
    )


def dashboard() -> Dashboard:
    """The GPU dashboard: every panel per GPU, for the nodes the `node` variable picks."""
    memory = Query(
        f"{_series(metrics.FB_USED)} / ({_series(metrics.FB_USED)} + {_series(metrics.FB_FREE)})",
        _BY_GPU,
        (metrics.FB_USED, metrics.FB_FREE),
    )
    reasons = _series(metrics.CLOCKS_EVENT_REASONS)
    clock_events = tuple(
        Query(f"floor({reasons} / {bit}) % 2", f"{_BY_GPU} {name}", (metrics.CLOCKS_EVENT_REASONS,))
        for name, bit in _CLOCK_EVENTS
    )
    xids = Query(
        f"{_series(metrics.XID_ERRORS_COUNT)} > 0",
        f"{_BY_GPU} XID {{{{xid}}}}",
        (metrics.XID_ERRORS_COUNT,),
    )
    held = _series(metrics.GPU_UTIL, f', {dcgm.POD}!=""')
    holders = Query(
        f"count by ({dcgm.NAMESPACE}, {dcgm.POD}) ({held})",
        f"{{{{{dcgm.NAMESPACE}}}}}/{{{{{dcgm.POD}}}}}",
        (metrics.GPU_UTIL,),
    )
    return Dashboard(
        uid=UID,
        title="GPUs (DCGM)",
        description="Every GPU the DCGM exporter reports: how busy, how full, how hot, and every fault it counts.",
        variables=(Variable("node", "Node", str(metrics.GPU_TEMP), dcgm.NODE),),
        rows=(
            Row(
                "Utilization",
                (
                    _gauge("GPU utilization", metrics.GPU_UTIL, "percent", max_=100),
                    _gauge("Graphics engine active", metrics.GR_ENGINE_ACTIVE, "percentunit", max_=1),
                    _gauge("Tensor pipe active", metrics.TENSOR_ACTIVE, "percentunit", max_=1),
                    _gauge("Memory interface active", metrics.DRAM_ACTIVE, "percentunit", max_=1),
                    Panel("GPUs held, by pod", (holders,), kind="stat", width=24, height=6),
                ),
            ),
            Row(
                "Memory",
                (
                    Panel("Framebuffer used", (memory,), unit="percentunit", max=1),
                    _gauge("Framebuffer used", metrics.FB_USED, "decmbytes"),
                ),
            ),
            Row(
                "Temperature and power",
                (
                    _gauge("GPU temperature", metrics.GPU_TEMP, "celsius"),
                    _gauge("Memory temperature", metrics.MEMORY_TEMP, "celsius"),
                    _gauge("Power draw", metrics.POWER_USAGE, "watt"),
                    _gauge("SM clock", metrics.SM_CLOCK, "hertz", scale=" * 1e6"),
                ),
            ),
            Row(
                "Throttling",
                (
                    Panel(
                        "Time throttled",
                        (
                            Query(
                                f"rate({_series(metrics.THERMAL_VIOLATION)}[$__rate_interval]) / 1e9",
                                f"{_BY_GPU} thermal",
                                (metrics.THERMAL_VIOLATION,),
                            ),
                            Query(
                                f"rate({_series(metrics.POWER_VIOLATION)}[$__rate_interval]) / 1e9",
                                f"{_BY_GPU} power",
                                (metrics.POWER_VIOLATION,),
                            ),
                        ),
                        unit="percentunit",
                        max=1,
                        description="The share of time each GPU ran slowed down for heat or power.",
                    ),
                    Panel(
                        "Clock event reasons",
                        clock_events,
                        description="1 while the reason holds the GPU's clocks down.",
                    ),
                ),
            ),
            Row(
                "XIDs, ECC and row remaps",
                (
                    Panel(
                        "XIDs (last 5 minutes)",
                        (xids,),
                        description="XIDs each GPU reported in the exporter's window; 48, 63, 64, 79, 94 and 95 alert.",
                    ),
                    _gauge("Last XID", metrics.XID_ERRORS, "none"),
                    _rate(
                        "ECC errors",
                        (("single-bit", metrics.ECC_SBE_VOLATILE), ("double-bit", metrics.ECC_DBE_VOLATILE)),
                        description="Volatile ECC errors per second; any double-bit error alerts.",
                    ),
                    _gauge("Double-bit ECC errors over the GPU's life", metrics.ECC_DBE_AGGREGATE, "short"),
                    Panel(
                        "Remapped rows",
                        (
                            Query(
                                _series(metrics.CORRECTABLE_REMAPPED_ROWS),
                                f"{_BY_GPU} correctable",
                                (metrics.CORRECTABLE_REMAPPED_ROWS,),
                            ),
                            Query(
                                _series(metrics.UNCORRECTABLE_REMAPPED_ROWS),
                                f"{_BY_GPU} uncorrectable",
                                (metrics.UNCORRECTABLE_REMAPPED_ROWS,),
                            ),
                        ),
                    ),
                    Panel(
                        "Row remap pending or failed",
                        (
                            Query(
                                _series(metrics.ROW_REMAP_PENDING), f"{_BY_GPU} pending", (metrics.ROW_REMAP_PENDING,)
                            ),
                            Query(
                                _series(metrics.ROW_REMAP_FAILURE), f"{_BY_GPU} failed", (metrics.ROW_REMAP_FAILURE,)
                            ),
                        ),
                        description="A pending remap applies at the next GPU reset; a failed one: replace the GPU.",
                    ),
                ),
            ),
            Row(
                "NVLink and PCIe",
                (
                    _rate(
                        "NVLink errors",
                        (
                            ("CRC flit", metrics.NVLINK_CRC_FLIT_ERRORS),
                            ("CRC data", metrics.NVLINK_CRC_DATA_ERRORS),
                            ("replay", metrics.NVLINK_REPLAY_ERRORS),
                            ("recovery", metrics.NVLINK_RECOVERY_ERRORS),
                        ),
                        description="Per second; any recovery, or a steady stream of CRC and replay errors, alerts.",
                    ),
                    Panel(
                        "NVLink traffic",
                        (
                            Query(_series(metrics.NVLINK_TX_BYTES), f"{_BY_GPU} tx", (metrics.NVLINK_TX_BYTES,)),
                            Query(_series(metrics.NVLINK_RX_BYTES), f"{_BY_GPU} rx", (metrics.NVLINK_RX_BYTES,)),
                        ),
                        unit="Bps",
                    ),
                    _rate("PCIe replays", (("", metrics.PCIE_REPLAY),), description="PCIe retries per second."),
                    Panel(
                        "PCIe traffic",
                        (
                            Query(_series(metrics.PCIE_TX_BYTES), f"{_BY_GPU} tx", (metrics.PCIE_TX_BYTES,)),
                            Query(_series(metrics.PCIE_RX_BYTES), f"{_BY_GPU} rx", (metrics.PCIE_RX_BYTES,)),
                        ),
                        unit="Bps",
                    ),
                ),
            ),
        ),
    )
