"""The pack on each provider's stack under Pulumi's mocks: kube-prometheus-stack before what makes ServiceMonitors,
the pack's objects after it, and GKE's cluster with managed DCGM."""

from __future__ import annotations

from pathlib import Path

import stacks
from components.addons import monitoring
from tests.support.pulumi_mocks import RecordingMonitor, run, use_stack

REPO = Path(__file__).resolve().parents[2]
RELEASE = "kubernetes:helm.sh/v3:Release"


def _deploy(monitor: RecordingMonitor, monkeypatch, name: str) -> None:
    monkeypatch.chdir(REPO)
    use_stack(monitor, REPO / f"Pulumi.{name}.yaml")
    run(lambda: stacks.run(stacks.load()))


def _release(monitor: RecordingMonitor, name: str):
    (found,) = [r for r in monitor.of_type(RELEASE) if r.inputs.get("name") == name]
    return found


def test_on_eks_the_gpu_operator_and_the_pack_s_objects_wait_for_kube_prometheus_stack(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    _deploy(pulumi_mocks, monkeypatch, "prod")
    stack = _release(pulumi_mocks, monitoring.NAME)
    assert stack.inputs["namespace"] == "monitoring" and stack.inputs["version"] == "88.5.3"
    assert stack.urn in _release(pulumi_mocks, "gpu-operator").dependencies
    rule = pulumi_mocks.named("prometheusrule-monitoring-gpu-training-gpu-faults")
    dashboard = pulumi_mocks.named("configmap-monitoring-gpu-training-gpus-dashboard")
    assert stack.urn in rule.dependencies and stack.urn in dashboard.dependencies


def test_on_gke_the_cluster_sends_managed_dcgm_to_cloud_monitoring_and_kueue_is_scraped(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    _deploy(pulumi_mocks, monkeypatch, "gke")
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    config = cluster.inputs["monitoringConfig"]
    assert "DCGM" in config["enableComponents"] and config["managedPrometheus"] == {"enabled": True}
    kueue = _release(pulumi_mocks, "kueue")
    assert kueue.inputs["values"]["enablePrometheus"] is True
    assert _release(pulumi_mocks, monitoring.NAME).urn in kueue.dependencies


def test_on_an_existing_cluster_the_pack_goes_to_the_users_prometheus(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    _deploy(pulumi_mocks, monkeypatch, "dev")
    assert not [r for r in pulumi_mocks.of_type(RELEASE) if r.inputs.get("name") == monitoring.NAME]
    rule = pulumi_mocks.named("prometheusrule-monitoring-gpu-training-gpu-faults")
    assert rule.inputs["metadata"]["labels"]["release"] == "prometheus"
    monitor = pulumi_mocks.named("servicemonitor-monitoring-volcano")
    assert monitor.inputs["spec"]["namespaceSelector"] == {"matchNames": ["volcano-system"]}
