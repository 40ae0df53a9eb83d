"""Every PromQL expression the pack emits for a set of stacks, with the series each says it reads, and the names an
expression's text refers to."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from components.observability import alerts, dashboards, metrics
from components.observability import pack as packs
from components.observability.grafana import GRAFANA_VARIABLES
from components.stack import Stack


@dataclass(frozen=True, slots=True)
class Expression:
    """One expression: where it is, its text, and the series it declares it reads."""

    where: str
    expr: str
    reads: tuple[metrics.Metric, ...]


def expressions(stack: Stack) -> Iterator[Expression]:
    """Each alert's and each panel's expression, and each dashboard variable's series, of `stack`."""
    pack = packs.resolve(stack.config)
    if pack.alerts:
        for alert in alerts.alerts(stack, pack):
            yield Expression(f"alert {alert.name}", alert.expr, alert.reads)
    for dashboard in dashboards.dashboards(pack):
        for panel in dashboard.panels:
            for query in panel.queries:
                yield Expression(f"{dashboard.uid}: {panel.title}", query.expr, query.reads)
        for variable in dashboard.variables:
            series = tuple(m for m in metrics.ALL if variable.series.startswith(m.name))
            yield Expression(f"{dashboard.uid}: ${variable.name}", variable.series, series)


def as_promql(expr: str) -> str:
    """A panel's expression with Grafana's variables replaced by values PromQL takes (checking it offline)."""
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NAME = re.compile(r"(?<![\w$.])[A-Za-z_:][A-Za-z0-9_:]*")
_DURATION = re.compile(r"\[[0-9]+[smhdwy]\]")
SERIES_PREFIXES = ("DCGM_", "kube_", "kueue_", "volcano_")


def names(expr: str) -> set[str]:
    """The identifiers of an expression, outside its strings and range durations."""
    bare = _DURATION.sub("", _STRING.sub('""', expr))
    return set(_NAME.findall(bare))


def series(expr: str) -> set[str]:
    """The series names an expression refers to (every identifier with an exporter's prefix)."""
    return {n for n in names(expr) if n.startswith(SERIES_PREFIXES)}
