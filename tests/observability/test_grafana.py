"""The dashboards' JSON has what Grafana needs to load it: uid, title, schemaVersion, a datasource variable, and
panels with unique ids, grid positions inside the 24 columns that never overlap, a datasource and targets; and the
ConfigMap carries the sidecar's label."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.observability import dashboards, grafana
from components.observability import pack as packs
from components.observability.grafana import Dashboard, Panel, Query, Row
from tests.observability.stacks import stacks
from tests.support.schemas import assert_valid

ALL = {d.uid + "@" + name: d for name, s in stacks().items() for d in dashboards.dashboards(packs.resolve(s.config))}


def validate(model: dict[str, Any]) -> None:
    """What a Grafana dashboard model must hold (Grafana's "JSON model" docs), or an AssertionError saying what not."""
    for key in ("uid", "title", "schemaVersion", "panels", "templating", "time"):
        assert key in model, f"no {key}"
    assert isinstance(model["uid"], str) and 0 < len(model["uid"]) <= 40, "Grafana uids are at most 40 characters"
    assert isinstance(model["schemaVersion"], int)
    variables = {v["name"]: v for v in model["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    ids = [p["id"] for p in model["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    cells: set[tuple[int, int]] = set()
    for panel in model["panels"]:
        grid = panel["gridPos"]
        assert {"h", "w", "x", "y"} <= grid.keys()
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= grafana.COLUMNS, panel["title"]
        covered = {
            (x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not covered & cells, f"{panel['title']} overlaps another panel"
        cells |= covered
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], f"{panel['title']} has no query"
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs))
        for target in panel["targets"]:
            assert target["expr"] and target["datasource"] == panel["datasource"]
        used = {v for t in panel["targets"] for v in variables if f"${v}" in t["expr"]}
        assert used <= variables.keys()


@pytest.mark.parametrize("uid", sorted(ALL))
def test_every_dashboard_is_a_model_grafana_loads(uid: str) -> None:
    model = ALL[uid].model()
    validate(model)
    assert json.loads(json.dumps(model)) == model, "plain JSON"


@pytest.mark.parametrize("uid", sorted(ALL))
def test_every_variable_a_query_uses_is_defined(uid: str) -> None:
    model = ALL[uid].model()
    defined = {v["name"] for v in model["templating"]["list"]}
    for panel in model["panels"]:
        for target in panel.get("targets", []):
            for name in ("node", "queue", "job", "namespace"):
                if f'"${name}"' in target["expr"]:
                    assert name in defined, f"{panel['title']} uses ${name}"


def test_the_check_catches_overlap_and_a_panel_without_queries() -> None:
    model = ALL[next(iter(ALL))].model()
    model["panels"][2]["gridPos"] = dict(model["panels"][1]["gridPos"])
    with pytest.raises(AssertionError, match="overlaps"):
        validate(model)
    model = ALL[next(iter(ALL))].model()
    model["panels"][1]["targets"] = []
    with pytest.raises(AssertionError, match="no query"):
        validate(model)


@given(st.lists(st.lists(st.integers(1, 24), min_size=1, max_size=7), min_size=1, max_size=5))
def test_any_layout_fills_the_grid_without_overlap(widths: list[list[int]]) -> None:
    query = Query("vector(1)", "", ())
    rows = tuple(
        Row(f"r{i}", tuple(Panel(f"p{i}.{j}", (query,), width=w) for j, w in enumerate(ws)))
        for i, ws in enumerate(widths)
    )
    validate(Dashboard("layout", "Layout", "", rows).model())


def test_the_configmap_carries_the_sidecars_label_and_the_dashboard() -> None:
    dashboard = next(iter(ALL.values()))
    configmap = grafana.configmap(dashboard, "monitoring", ("grafana_dashboard", "1"))
    assert_valid(configmap)
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["metadata"]["namespace"] == "monitoring"
    [(key, text)] = configmap["data"].items()
    assert key == f"{dashboard.uid}.json" and json.loads(text) == dashboard.model()
    assert len(text.encode()) < 1024 * 1024, "a ConfigMap holds at most 1 MiB"
