"""The GPU fault alerts: one per XID the issue names and per fault, paging only on what no repair agent acts on, each
naming node, GPU and pod and saying what to do; the PrometheusRule valid against the pinned operator's CRD."""

from __future__ import annotations

import pytest

from components.nodecheck import RESULT_LABEL
from components.observability import alerts
from components.observability import pack as packs
from tests.addons.stacks import stack_file
from tests.observability.stacks import gke_gpu_operator, stacks
from tests.support.schemas import assert_valid

FAULTS = {
    "GpuXid48DoubleBitEcc",
    "GpuXid63RowRemapPending",
    "GpuXid64RowRemapFailure",
    "GpuFallenOffTheBus",
    "GpuXid94ContainedEcc",
    "GpuXid95UncontainedEcc",
    "GpuUncorrectableEccErrors",
    "GpuRowRemapFailure",
    "GpuRowRemapPending",
    "GpuNvlinkErrors",
    "GpuMissing",
    "GpuThermalThrottling",
    "GpuIdleInRunningJob",
}


def _alerts(stack) -> dict[str, alerts.Alert]:
    return {a.name: a for a in alerts.alerts(stack, packs.resolve(stack.config))}


def test_every_fault_the_issue_names_has_its_alert() -> None:
    found = _alerts(stack_file("dev"))
    assert set(found) == FAULTS
    assert alerts.xid_codes() == (48, 63, 64, 79, 94, 95)
    for code in alerts.xid_codes():
        assert any(f'xid="{code}"' in a.expr for a in found.values()), code


def test_without_a_repair_agent_the_hardware_faults_page() -> None:
    found = _alerts(stack_file("dev", health={"repair": {"enabled": False}}))
    warnings = {n for n, a in found.items() if a.severity == "warning"}
    assert warnings == {"GpuXid63RowRemapPending", "GpuXid94ContainedEcc", "GpuRowRemapPending"}
    assert all("does not page" not in a.description for a in found.values())


@pytest.mark.parametrize(
    ("name", "agent"),
    [("dev", "NVSentinel cordons the node"), ("prod", "The EKS node monitoring agent sets AcceleratedHardwareReady")],
)
def test_where_the_repair_agent_acts_its_faults_are_warnings_that_say_so(name: str, agent: str) -> None:
    found = _alerts(stack_file(name))
    acted = {n for n, a in found.items() if a.fault in ("xid", "memory", "bus")}
    assert acted == FAULTS - {"GpuNvlinkErrors", "GpuThermalThrottling", "GpuIdleInRunningJob"}
    for alert_name in acted:
        assert found[alert_name].severity == "warning"
        assert found[alert_name].description.startswith(agent), found[alert_name].description
    assert {n for n, a in found.items() if a.severity == "critical"} == {
        "GpuNvlinkErrors",
        "GpuThermalThrottling",
        "GpuIdleInRunningJob",
    }, "the page is for what no agent acts on"


def test_on_gke_nothing_acts_on_xids_so_they_page() -> None:
    found = _alerts(gke_gpu_operator())
    assert found["GpuFallenOffTheBus"].severity == "critical"
    assert "health.repair" not in found["GpuFallenOffTheBus"].description


def test_descriptions_point_at_the_node_check_where_pools_run_it() -> None:
    checked = _alerts(stack_file("dev"))
    assert RESULT_LABEL in checked["GpuXid48DoubleBitEcc"].description
    assert RESULT_LABEL not in checked["GpuIdleInRunningJob"].description, "a job's idle GPU is no node fault"
    pools = [{**p, "nodeCheck": {"enabled": False}} for p in stack_file("dev").config.to_config()["nodePools"]]
    unchecked = _alerts(stack_file("dev", nodePools=pools))
    assert RESULT_LABEL not in unchecked["GpuXid48DoubleBitEcc"].description


def test_summaries_name_the_gpu_its_node_and_the_pod_holding_it() -> None:
    for alert in _alerts(stack_file("dev")).values():
        if alert.name == "GpuMissing":
            assert "$labels.node" in alert.summary
            continue
        assert "$labels.node" in alert.summary and "$labels.gpu" in alert.summary, alert.name
        assert "$labels.exported_pod" in alert.summary + alert.description, alert.name


def test_the_idle_time_is_the_configured_one() -> None:
    stack = stack_file("dev", monitoring={"prometheus": True, "idleGpuMinutes": 45})
    idle = _alerts(stack)["GpuIdleInRunningJob"]
    assert idle.for_ == "45m" and "45 minutes" in idle.description


@pytest.mark.parametrize("name", sorted(stacks()))
def test_the_prometheus_rule_is_valid_against_the_operators_crd(name: str) -> None:
    stack = stacks()[name]
    pack = packs.resolve(stack.config)
    if not pack.alerts:
        pytest.skip("no alerts on this stack")
    rule = alerts.prometheus_rule(stack, pack)
    assert_valid(rule)
    assert rule["metadata"]["namespace"] == pack.namespace
    assert {r["alert"] for g in rule["spec"]["groups"] for r in g["rules"]} == FAULTS
    assert alerts.rule_file(rule) == {"groups": rule["spec"]["groups"]}


def test_the_rule_carries_the_labels_a_prometheus_selects_by() -> None:
    stack = stack_file("dev")
    rule = alerts.prometheus_rule(stack, packs.resolve(stack.config))
    assert rule["metadata"]["labels"]["release"] == "prometheus"
