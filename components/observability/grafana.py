"""Grafana dashboards as data: panels laid out on Grafana's 24-column grid, and the ConfigMap a sidecar loads.

The JSON model follows Grafana's dashboard schema (grafana/grafana docs "JSON model": uid, title, schemaVersion,
templating, panels with id, type, gridPos, datasource and targets). Every panel queries the dashboard's
`datasource` variable, so the dashboards work with any Prometheus data source, not only one named "prometheus".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from components.manifests.meta import metadata
from components.observability.metrics import Metric

SCHEMA_VERSION = 39
"""The dashboard schema version the JSON is written in (Grafana 10.4; later Grafanas migrate it on load)."""
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
COLUMNS = 24
"""Grafana's grid is 24 columns wide."""
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}
"""Grafana's built-in variables a panel's PromQL may use, and a value of each for checking the PromQL offline."""


@dataclass(frozen=True, slots=True)
class Query:
    """One PromQL query of a panel, with the series it reads."""

    expr: str
    legend: str
    reads: tuple[Metric, ...]
    """The series the expression reads (checked against the expression's text in tests)."""


@dataclass(frozen=True, slots=True)
class Panel:
    """A panel: a time series graph or a single stat, drawn from its queries."""

    title: str
    queries: tuple[Query, ...]
    unit: str = "short"
    """Grafana's unit id: percent, percentunit, decmbytes, celsius, watt, Bps, s, short ..."""
    kind: str = "timeseries"
    """timeseries | stat."""
    description: str = ""
    width: int = 12
    height: int = 8
    max: float | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """A titled band of panels, laid out left to right and wrapped at the grid's width."""

    title: str
    panels: tuple[Panel, ...]


@dataclass(frozen=True, slots=True)
class Variable:
    """A dashboard variable filled from a label's values (label_values(<series>, <label>))."""

    name: str
    label: str
    series: str
    """The PromQL selector whose label values fill it."""
    source_label: str
    multi: bool = True


@dataclass(frozen=True, slots=True)
class Dashboard:
    """One dashboard: its identity, variables and rows of panels."""

    uid: str
    title: str
    description: str
    rows: tuple[Row, ...]
    variables: tuple[Variable, ...] = ()
    tags: tuple[str, ...] = field(default=("gpu-training",))

    @property
    def panels(self) -> tuple[Panel, ...]:
        """Every panel, in layout order."""
        return tuple(p for row in self.rows for p in row.panels)

    def model(self) -> dict[str, Any]:
        """The dashboard's JSON model."""
        return {
            "uid": self.uid,
            "title": self.title,
            "description": self.description,
            "tags": list(self.tags),
            "schemaVersion": SCHEMA_VERSION,
            "version": 1,
            "editable": False,
            "graphTooltip": 1,
            "timezone": "browser",
            "time": {"from": "now-6h", "to": "now"},
            "refresh": "1m",
            "templating": {"list": [_datasource_variable(), *(_variable(v) for v in self.variables)]},
            "annotations": {"list": []},
            "panels": _layout(self.rows),
        }


def _datasource_variable() -> dict[str, Any]:
    return {
        "name": "datasource",
        "label": "Data source",
        "type": "datasource",
        "query": "prometheus",
        "current": {},
        "hide": 0,
        "refresh": 1,
    }


def _variable(variable: Variable) -> dict[str, Any]:
    query = f"label_values({variable.series}, {variable.source_label})"
    return {
        "name": variable.name,
        "label": variable.label,
        "type": "query",
        "datasource": dict(DATASOURCE),
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "definition": query,
        "refresh": 2,
        "multi": variable.multi,
        "includeAll": True,
        "allValue": ".*",
        "current": {"text": "All", "value": "$__all"},
        "sort": 1,
        "hide": 0,
    }


def _layout(rows: tuple[Row, ...]) -> list[dict[str, Any]]:
    """Rows and their panels with ids and grid positions: a row header, then panels filling 24 columns."""
    out: list[dict[str, Any]] = []
    next_id = 1
    y = 0
    for row in rows:
        out.append(
            {
                "id": next_id,
                "type": "row",
                "title": row.title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": COLUMNS, "x": 0, "y": y},
                "panels": [],
            }
        )
        next_id += 1
        y += 1
        x = 0
        line_height = 0
        for panel in row.panels:
            if x + panel.width > COLUMNS:
                y += line_height
                x = 0
                line_height = 0
            out.append(_panel(panel, next_id, {"h": panel.height, "w": panel.width, "x": x, "y": y}))
            next_id += 1
            x += panel.width
            line_height = max(line_height, panel.height)
        y += line_height
    return out


def _panel(panel: Panel, panel_id: int, grid: dict[str, int]) -> dict[str, Any]:
    defaults: dict[str, Any] = {"unit": panel.unit}
    if panel.max is not None:
        defaults["max"] = panel.max
        defaults["min"] = 0
    body: dict[str, Any] = {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": dict(DATASOURCE),
        "gridPos": grid,
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "targets": [
            {
                "refId": chr(ord("A") + index),
                "datasource": dict(DATASOURCE),
                "expr": query.expr,
                "legendFormat": query.legend,
                "range": True,
            }
            for index, query in enumerate(panel.queries)
        ],
    }
    if panel.kind == "timeseries":
        body["options"] = {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}}
    else:
        body["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}
    return body


def configmap(dashboard: Dashboard, namespace: str, label: tuple[str, str]) -> dict[str, Any]:
    """The ConfigMap Grafana's dashboard sidecar loads the dashboard from: labelled as the sidecar looks for it."""
    key, value = label
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(f"{dashboard.uid}-dashboard", namespace, labels={key: value}),
        "data": {f"{dashboard.uid}.json": json.dumps(dashboard.model(), indent=1, sort_keys=True) + "\n"},
    }
