"""Volcano's ServiceMonitor: its scheduler's and controllers' metrics Services, scraped by the Prometheus Operator."""

from __future__ import annotations

from components.addons import scheduler
from components.observability import pack as packs
from components.observability import scrape
from tests.addons.stacks import stack_file
from tests.support.schemas import assert_valid


def test_volcano_gets_a_service_monitor_of_both_its_metrics_services() -> None:
    [monitor] = scrape.service_monitors(packs.resolve(stack_file("dev").config))
    assert_valid(monitor)
    spec = monitor["spec"]
    assert spec["namespaceSelector"] == {"matchNames": [scheduler.VOLCANO_NAMESPACE]}
    assert spec["selector"]["matchExpressions"][0]["values"] == ["volcano-scheduler", "volcano-controller"]
    assert spec["endpoints"][0]["port"] == "metrics"
    assert monitor["metadata"]["labels"]["release"] == "prometheus", "the labels the user's Prometheus selects by"


def test_kueue_and_unmonitored_stacks_get_none() -> None:
    assert scrape.service_monitors(packs.resolve(stack_file("gke").config)) == [], "Kueue's chart makes its own"
    assert scrape.service_monitors(packs.resolve(stack_file("dev", monitoring={}).config)) == []
