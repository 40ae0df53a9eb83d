"""Everything the pack adds to a stack, valid against its schema, and what `render` says of it."""

from __future__ import annotations

import pytest

from components.observability import objects
from components.render import render
from tests.addons.stacks import stack_file
from tests.observability.stacks import stacks
from tests.support.schemas import assert_valid


@pytest.mark.parametrize("name", sorted(stacks()))
def test_every_object_of_the_pack_is_valid(name: str) -> None:
    found = objects.objects(stacks()[name])
    assert found
    assert_valid(*found)


def test_the_objects_follow_the_pack() -> None:
    kinds = lambda stack: sorted(o["kind"] for o in objects.objects(stack))  # noqa: E731
    assert kinds(stack_file("dev")) == ["ConfigMap", "ConfigMap", "ConfigMap", "PrometheusRule", "ServiceMonitor"]
    assert kinds(stack_file("gke")) == ["ConfigMap", "ConfigMap"]
    assert kinds(stack_file("dev", monitoring={})) == []


def test_render_says_what_monitoring_the_stack_gets() -> None:
    lines = render(stack_file("prod")).summary().splitlines()
    at = lines.index("monitoring: kube-prometheus-stack 88.5.3 in monitoring (installed by the stack)")
    assert lines[at + 1].startswith("  dashboards: gpu-training-gpus, gpu-training-queues, gpu-training-jobs")
    assert lines[at + 2].startswith(
        "  alerts: 13 rules in PrometheusRule monitoring/gpu-training-gpu-faults; critical:"
    )
    assert not any("GKE managed DCGM" in line for line in lines), "said on GKE only"
    gke = render(stack_file("gke")).summary()
    assert "  GKE managed DCGM: on (Cloud Monitoring)" in gke
    assert "  alerts: none (GKE's managed DCGM exports no XID" in gke
    off = render(stack_file("dev", monitoring={})).summary().splitlines()
    (line,) = [line for line in off if line.startswith("monitoring:")]
    assert line.startswith("monitoring: none (no Prometheus Operator: monitoring.install: true installs")
    assert not any(line.startswith(("  dashboards:", "  alerts:")) for line in off), "one line when there is none"
