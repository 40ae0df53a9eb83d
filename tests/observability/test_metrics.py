"""Every series an alert or a panel reads is one the pack knows, served by an exporter it configures: no alert that
can never fire for want of its series, no panel that stays empty."""

from __future__ import annotations

import pytest

from components.observability import dcgm, metrics, pods
from tests.observability.expressions import Expression, expressions, names, series
from tests.observability.stacks import stacks

ALL = [e for stack in stacks().values() for e in expressions(stack)]
# The rest of an expression's vocabulary: PromQL's functions, aggregations and keywords, and the labels it names.
PROMQL = {
    "sum",
    "max",
    "min",
    "avg",
    "count",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "rate",
    "increase",
    "avg_over_time",
    "max_over_time",
    "histogram_quantile",
    "label_replace",
    "floor",
    "label_values",
    "bool",
}
LABELS = {
    dcgm.NODE,
    dcgm.GPU,
    dcgm.MODEL,
    dcgm.UUID,
    dcgm.POD,
    dcgm.NAMESPACE,
    "namespace",
    "pod",
    "phase",
    "resource",
    "xid",
    "cluster_queue",
    "status",
    "reason",
    "le",
    "queue_name",
    pods.JOB,
    pods.ROLE,
    pods.POOL,
}


def _known() -> set[str]:
    return {name for m in metrics.ALL for name in metrics.series_names(m)}


@pytest.mark.parametrize("expression", ALL, ids=lambda e: e.where)
def test_every_series_an_expression_reads_is_declared_and_known(expression: Expression) -> None:
    declared = {name for m in expression.reads for name in metrics.series_names(m)}
    found = series(expression.expr)
    assert found <= _known(), f"series no exporter of the pack serves: {found - _known()}"
    assert found <= declared and {m.name for m in expression.reads} <= {n.removesuffix("_bucket") for n in found}, (
        f"declares {sorted(declared)}, reads {sorted(found)}"
    )


@pytest.mark.parametrize("expression", ALL, ids=lambda e: e.where)
def test_an_expression_names_nothing_but_series_promql_and_known_labels(expression: Expression) -> None:
    stray = names(expression.expr) - _known() - PROMQL - LABELS
    assert not stray, f"unknown names (a misspelt series or label?): {stray}"


def test_every_dcgm_field_read_is_in_the_exporters_list() -> None:
    read = {m for e in ALL for m in e.reads if m.source == "dcgm-exporter"}
    listed = {line.split(",")[0] for line in dcgm.csv().splitlines() if line and not line.startswith("#")}
    assert {m.name for m in read} <= listed
    assert read, "the expressions read DCGM fields"


def test_every_series_the_pack_knows_is_read_somewhere_but_the_driver_label() -> None:
    read = {m for e in ALL for m in e.reads}
    unread = set(metrics.ALL) - read - {metrics.DRIVER_VERSION}
    assert not unread, f"listed but read by nothing: {sorted(m.name for m in unread)}"


def test_histograms_appear_under_their_series_names() -> None:
    assert metrics.series_names(metrics.KUEUE_WAIT) == (
        "kueue_admission_wait_time_seconds_bucket",
        "kueue_admission_wait_time_seconds_sum",
        "kueue_admission_wait_time_seconds_count",
    )
    assert metrics.series_names(metrics.GPU_UTIL) == ("DCGM_FI_DEV_GPU_UTIL",)
