"""The pack's rules and every panel's PromQL through the real promtool (Prometheus v3.14.0, the release
kube-prometheus-stack 88.5.3 runs), built from its Go module: `promtool check rules` on every rule file the stacks
emit, `promtool test rules` with input series for each alert (it fires, naming node, GPU and pod; and it stays quiet
when it should), and each panel's expression checked as a recording rule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.observability import alerts, dcgm, metrics, pods
from components.observability import pack as packs
from components.render import render
from components.resolution import resolve_file
from components.stack import Stack
from tests.observability.expressions import as_promql, expressions
from tests.observability.stacks import stacks
from tests.support import promtool
from tests.support.stacks import STACK_FILES

pytestmark = pytest.mark.simulate


@pytest.fixture(scope="module")
def binary() -> Path:
    """promtool, built once into the engine cache."""
    return promtool.binary()


def _rule_files(stack: Stack) -> list[dict[str, Any]]:
    return [alerts.rule_file(o) for o in render(stack).objects if o["kind"] == "PrometheusRule"]


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def _check(binary: Path, path: Path) -> None:
    done = promtool.run(binary, "check", "rules", "--lint=all", "--lint-fatal", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("stack_file", [p for p in STACK_FILES], ids=lambda p: p.name)
def test_every_rule_file_a_stack_file_emits_passes_promtool(binary: Path, stack_file: Path, tmp_path: Path) -> None:
    for index, rules in enumerate(_rule_files(resolve_file(stack_file))):
        _check(binary, _write(tmp_path / f"rules-{index}.yaml", rules))


@pytest.mark.parametrize("name", sorted(stacks()))
def test_every_variant_s_rule_file_passes_promtool(binary: Path, name: str, tmp_path: Path) -> None:
    stack = stacks()[name]
    files = _rule_files(stack)
    assert bool(files) is packs.resolve(stack.config).alerts
    for index, rules in enumerate(files):
        _check(binary, _write(tmp_path / f"rules-{index}.yaml", rules))


@pytest.mark.parametrize("name", sorted(stacks()))
def test_every_panel_expression_is_valid_promql(binary: Path, name: str, tmp_path: Path) -> None:
    # Grafana's own variables ($__rate_interval) replaced; the dashboard's variables are inside label matchers.
    found = [e for e in expressions(stacks()[name]) if not e.where.startswith("alert ")]
    rules = [
        {"record": f"gpu_training:panel_{index}", "expr": as_promql(e.expr), "labels": {"panel": e.where[:60]}}
        for index, e in enumerate(found)
        if "$" not in e.where  # a variable's series is a selector, checked with its panels' queries
    ]
    assert rules
    _check(binary, _write(tmp_path / "panels.yaml", {"groups": [{"name": "panels", "rules": rules}]}))


# --- unit tests: input series -> the alert fires, or not ----------------------------------------------------------

NODE = "gpu-node-1"
POD = "llama-finetune-worker-0"
EXPORTER = {"job": "nvidia-dcgm-exporter", "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x2k9f"}
KSM = {"job": "kube-state-metrics", "instance": "10.0.0.9:8080"}


def gpu(index: int = 0, *, held: bool = True, node: str = NODE) -> dict[str, str]:
    """The labels a GPU's DCGM series carries after the ServiceMonitor's relabeling, held by a pod or not."""
    labels = {
        **EXPORTER,
        dcgm.GPU: str(index),
        dcgm.UUID: f"GPU-{index:04d}",
        dcgm.MODEL: "NVIDIA H100 80GB HBM3",
        dcgm.NODE: node,
        "instance": f"{node}:9400",
    }
    if held:
        labels |= {dcgm.NAMESPACE: "training", dcgm.POD: POD, dcgm.CONTAINER: "pytorch"}
    return labels


def job_pod(
    role: str = "worker", phase: str = "Running", pod: str = POD
) -> list[tuple[metrics.Metric, dict[str, str], str]]:
    """A training pod as kube-state-metrics reports it: its labels and its phase."""
    base = {**KSM, "namespace": "training", "pod": pod}
    labels = {**base, pods.JOB: "llama-finetune", pods.ROLE: role, pods.POOL: "h100"}
    series = [(metrics.POD_LABELS, labels, "1x60")]
    for each in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
        series.append((metrics.POD_PHASE, {**base, "phase": each}, "1x60" if each == phase else "0x60"))
    return series


@dataclass(frozen=True)
class Case:
    """Input series, when to look, and the alerts expected then (their labels, and the value an annotation may
    print); none: it must not fire."""

    inputs: list[tuple[metrics.Metric, dict[str, str], str]]
    at: str
    fires: list[tuple[dict[str, str], float]] = field(default_factory=list)


def _xid(code: int) -> Callable[[], list[Case]]:
    def cases() -> list[Case]:
        labels = {**gpu(), "xid": str(code)}
        other = {**gpu(1), "xid": "13"}
        return [
            Case(
                [(metrics.XID_ERRORS_COUNT, labels, "0 0 1 1"), (metrics.XID_ERRORS_COUNT, other, "1x3")],
                "3m",
                [(labels, 1)],
            ),
            Case([(metrics.XID_ERRORS_COUNT, labels, "0 0 0 0")], "3m"),
        ]

    return cases


def _ecc() -> list[Case]:
    return [
        Case([(metrics.ECC_DBE_VOLATILE, gpu(), "0 0 0 1 1 1")], "5m", [(gpu(), 1)]),
        Case([(metrics.ECC_DBE_VOLATILE, gpu(), "3x10")], "10m"),
    ]


def _remap_failure() -> list[Case]:
    idle = gpu(held=False)
    return [
        Case([(metrics.ROW_REMAP_FAILURE, idle, "1x5")], "5m", [(idle, 1)]),
        Case([(metrics.ROW_REMAP_FAILURE, idle, "0x5")], "5m"),
    ]


def _remap_pending() -> list[Case]:
    return [
        Case([(metrics.ROW_REMAP_PENDING, gpu(), "1x20")], "16m", [(gpu(), 1)]),
        Case([(metrics.ROW_REMAP_PENDING, gpu(), "0x6 1x14")], "16m"),  # pending for 10 minutes of the 15
    ]


def _nvlink() -> list[Case]:
    quiet = [(m, gpu(), "0x20") for m in (metrics.NVLINK_CRC_DATA_ERRORS, metrics.NVLINK_REPLAY_ERRORS)]
    return [
        Case(
            [
                (metrics.NVLINK_RECOVERY_ERRORS, gpu(), "0 0 1 1"),
                (metrics.NVLINK_CRC_FLIT_ERRORS, gpu(), "0x3"),
                *quiet,
            ],
            "3m",
            [(gpu(), 1)],
        ),
        Case(
            [
                (metrics.NVLINK_RECOVERY_ERRORS, gpu(), "0x20"),
                (metrics.NVLINK_CRC_FLIT_ERRORS, gpu(), "0+20x20"),
                *quiet,
            ],
            "15m",
            [(gpu(), 300)],
        ),
        Case(
            [
                (metrics.NVLINK_RECOVERY_ERRORS, gpu(), "0x20"),
                (metrics.NVLINK_CRC_FLIT_ERRORS, gpu(), "0+1x20"),
                *quiet,
            ],
            "15m",
        ),
    ]


def _missing() -> list[Case]:
    capacity = {**KSM, "resource": metrics.KSM_GPU_RESOURCE, "unit": "integer"}
    seven = [(metrics.GPU_TEMP, gpu(i, node=NODE), "40x20") for i in range(7)]
    eight = [(metrics.GPU_TEMP, gpu(i, node=NODE), "40x20") for i in range(8)]
    nodes = [
        (metrics.NODE_CAPACITY, {**capacity, "node": NODE}, "8x20"),
        (metrics.NODE_CAPACITY, {**capacity, "node": "gpu-node-2"}, "8x20"),  # no exporter there at all
        (metrics.NODE_CAPACITY, {**capacity, "node": "cpu-node-1"}, "0x20"),
    ]
    return [
        Case([*nodes, *seven], "16m", [({dcgm.NODE: NODE}, 1), ({dcgm.NODE: "gpu-node-2"}, 8)]),
        Case([nodes[0], nodes[2], *eight], "16m"),
    ]


def _thermal() -> list[Case]:
    return [
        # 30 s of every minute throttled: half the time.
        Case([(metrics.THERMAL_VIOLATION, gpu(), "0+30000000000x20")], "16m", [(gpu(), 0.5)]),
        Case([(metrics.THERMAL_VIOLATION, gpu(), "0+1000000000x20")], "16m"),
    ]


def _idle() -> list[Case]:
    held = gpu()
    joined = {**held, pods.JOB: "llama-finetune", pods.POOL: "h100"}
    return [
        Case([(metrics.GPU_UTIL, held, "0x60"), *job_pod()], "40m", [(joined, 0)]),
        Case([(metrics.GPU_UTIL, held, "50x60"), *job_pod()], "40m"),
        Case([(metrics.GPU_UTIL, held, "0x60"), *job_pod(phase="Succeeded")], "40m"),
        Case([(metrics.GPU_UTIL, held, "0x60"), *job_pod(role="fabric-check")], "40m"),
        Case([(metrics.GPU_UTIL, gpu(held=False), "0x60"), *job_pod()], "40m"),
    ]


CASES: dict[str, Callable[[], list[Case]]] = {
    **{
        name: _xid(code)
        for name, code in zip(
            (
                "GpuXid48DoubleBitEcc",
                "GpuXid63RowRemapPending",
                "GpuXid64RowRemapFailure",
                "GpuFallenOffTheBus",
                "GpuXid94ContainedEcc",
                "GpuXid95UncontainedEcc",
            ),
            (48, 63, 64, 79, 94, 95),
            strict=True,
        )
    },
    "GpuUncorrectableEccErrors": _ecc,
    "GpuRowRemapFailure": _remap_failure,
    "GpuRowRemapPending": _remap_pending,
    "GpuNvlinkErrors": _nvlink,
    "GpuMissing": _missing,
    "GpuThermalThrottling": _thermal,
    "GpuIdleInRunningJob": _idle,
}


def _series(metric: metrics.Metric, labels: dict[str, str]) -> str:
    return metric.name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def test_every_alert_has_unit_tests() -> None:
    for stack in stacks().values():
        pack = packs.resolve(stack.config)
        if pack.alerts:
            assert {a.name for a in alerts.alerts(stack, pack)} == set(CASES)
    assert set(alerts.xid_codes()) == {48, 63, 64, 79, 94, 95}


@pytest.mark.parametrize("name", ["dev", "dev-unrepaired", "prod", "gke-gpu-operator"])
def test_each_alert_fires_on_its_fault_and_not_otherwise(binary: Path, name: str, tmp_path: Path) -> None:
    stack = stacks()[name]
    [rule_file] = _rule_files(stack)
    rules = {r["alert"]: r for group in rule_file["groups"] for r in group["rules"]}
    tests = []
    for alert, cases in CASES.items():
        for case in cases():
            tests.append(
                {
                    "interval": "1m",
                    "input_series": [
                        {"series": _series(m, labels), "values": values} for m, labels, values in case.inputs
                    ],
                    "alert_rule_test": [
                        {
                            "eval_time": case.at,
                            "alertname": alert,
                            "exp_alerts": [
                                promtool.alert_test(rules[alert], labels, value) for labels, value in case.fires
                            ],
                        }
                    ],
                }
            )
    _write(tmp_path / "rules.yaml", rule_file)
    suite = _write(tmp_path / "tests.yaml", {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests})
    done = promtool.run(binary, "test", "rules", str(suite))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_annotations_name_node_gpu_and_pod() -> None:
    stack = stacks()["dev-unrepaired"]
    [rule] = [r for r in _rule_files(stack)[0]["groups"][0]["rules"] if r["alert"] == "GpuFallenOffTheBus"]
    summary = promtool.expand(rule["annotations"]["summary"], {**gpu(), "xid": "79"}, 1)
    assert summary == (f"XID 79 on GPU 0 (NVIDIA H100 80GB HBM3, GPU-0000) of node {NODE}, held by pod training/{POD}")
    assert promtool.expand(rule["annotations"]["summary"], gpu(held=False), 1).endswith(f"of node {NODE}")
