"""Every Helm values key we set exists in that chart version (keys read from each chart's values.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.addons.plan import plan
from components.versions import CHARTS
from tests.addons.stacks import STACKS

DATA = Path(__file__).resolve().parents[1] / "data" / "helm_values"


def chart_keys(name: str) -> set[str]:
    chart = CHARTS[name]
    lines = (DATA / f"{name}-{chart.version}.txt").read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def paths(values: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of every key set (dots inside a key escaped, as Helm --set writes them)."""
    out = []
    for key, value in values.items():
        path = f"{prefix}{key.replace('.', chr(92) + '.')}"
        out.append(path)
        if isinstance(value, dict) and value:
            out += paths(value, f"{path}.")
    return out


def unknown(keys: set[str], values: dict[str, Any]) -> list[str]:
    """Paths the chart does not know. Below a key the chart leaves empty (a free-form map such as
    annotations), or one its key file marks `<key>.*` (a map the chart reads whole), any key is allowed."""
    missing = []
    for path in paths(values):
        if path in keys:
            continue
        parents = [path[:i] for i in range(len(path)) if path[i] == "." and path[i - 1] != "\\"]
        known = [p for p in parents if p in keys]
        free_form = known and not any(k.startswith(known[-1] + ".") for k in keys)
        free_form = free_form or any(f"{p}.*" in keys for p in known)
        if not free_form:
            missing.append(path)
    return missing


@pytest.mark.parametrize("stack", sorted(STACKS), ids=str)
def test_every_values_key_exists_in_the_pinned_chart(stack: str) -> None:
    for release in plan(STACKS[stack](), efs_role_arn="arn:aws:iam::1:role/efs").releases:
        name = next(n for n, chart in CHARTS.items() if chart is release.chart)
        assert not unknown(chart_keys(name), release.values), f"{release.name}: not in {name} {release.chart.version}"


def test_the_check_catches_a_misspelt_key() -> None:
    keys = chart_keys("gpu-operator")
    assert unknown(keys, {"driver": {"rdma": {"enabled": True}}}) == []
    assert unknown(keys, {"driver": {"rdma": {"enable": True}}}) == ["driver.rdma.enable"]
    assert unknown(keys, {"cdi": {"default": True}}) == ["cdi.default"], "removed after v25.3"
    assert (
        unknown(
            chart_keys("aws-efs-csi-driver"),
            {"controller": {"serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "x"}}}},
        )
        == []
    )


def test_every_chart_has_its_key_file() -> None:
    for name, chart in CHARTS.items():
        assert (DATA / f"{name}-{chart.version}.txt").is_file(), f"no verified keys for {name} {chart.version}"
