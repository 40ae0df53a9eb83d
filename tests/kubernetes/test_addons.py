"""ClusterAddons and the stack under Pulumi mocks: releases with the values users need, in order; none when the
add-ons are installed elsewhere (addons.install: false)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import stacks
from tests.addons.operators_fixtures import TRAINING_OBJECTS
from tests.support.pulumi_mocks import RecordingMonitor, Registration, exported, run, use_stack
from tests.test_names import NAMES, answered, engine_urns

REPO = Path(__file__).resolve().parents[2]


def deploy(monitor: RecordingMonitor, stack: str) -> None:
    monitor.recording.call_results["kubernetes:kustomize:directory"] = lambda args: {
        "result": TRAINING_OBJECTS if "trainer" in args["directory"] else []
    }
    use_stack(monitor, REPO / f"Pulumi.{stack}.yaml")
    run(lambda: stacks.run(stacks.load()))


def release(monitor: RecordingMonitor, name: str) -> Registration:
    (found,) = [r for r in monitor.of_type("kubernetes:helm.sh/v3:Release") if r.name == name]
    return found


def one(monitor: RecordingMonitor, kind: str, name: str | None = None) -> Registration:
    found = [
        r
        for r in monitor.registrations
        if r.inputs.get("kind") == kind and (name is None or r.inputs["metadata"]["name"] == name)
    ]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def waits_for(monitor: RecordingMonitor, resource: Registration, install: Registration) -> bool:
    """Whether a resource (or a component it is in) depends on an install, or on what the install created (a
    component's dependents wait for its children)."""
    children = {r.urn for r in monitor.registrations if r.parent == install.urn}
    return any(monitor.waits_for(resource, urn) for urn in {install.urn, *children})


def test_dev_installs_the_rdma_stack_in_order(pulumi_mocks: RecordingMonitor, monkeypatch: Any) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, "dev")
    gpu = release(pulumi_mocks, "gpu-operator")
    assert gpu.inputs["chart"] == "gpu-operator" and gpu.inputs["version"] == "v26.7.0"
    assert gpu.inputs["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert gpu.inputs["values"]["driver"]["rdma"]["enabled"] is False, "DMA-BUF: no nvidia-peermem, no MOFED"
    network = release(pulumi_mocks, "network-operator")
    volcano = release(pulumi_mocks, "volcano")
    assert one(pulumi_mocks, "NicClusterPolicy").dependencies == [network.urn]
    assert volcano.urn in one(pulumi_mocks, "Queue").dependencies

    (multus,) = pulumi_mocks.of_type("kubernetes:yaml/v2:ConfigFile")
    assert multus.inputs["file"].endswith("/v4.3.0/deployments/multus-daemonset-thick.yml")
    nads = pulumi_mocks.of_type("kubernetes:k8s.cni.cncf.io/v1:NetworkAttachmentDefinition")
    assert len(nads) == 8 and all(multus.urn in nad.dependencies for nad in nads), "NADs wait for the NAD CRD"
    config = json.loads(next(n for n in nads if n.inputs["metadata"]["name"] == "h100-rail-1").inputs["spec"]["config"])
    assert (config["type"], config["master"], config["ipam"]) == (
        "macvlan",
        "ens2f0np0",
        {"type": "whereabouts", "range": "192.168.1.0/24"},
    )
    queue = one(pulumi_mocks, "Queue")
    assert queue.inputs["spec"]["capability"] == {"nvidia.com/gpu": "32"} and queue.inputs["spec"]["weight"] == 1
    (whereabouts,) = pulumi_mocks.of_type("kubernetes:yaml/v2:ConfigGroup")
    assert multus.urn in whereabouts.dependencies

    directories = {r.name: r for r in pulumi_mocks.of_type("kubernetes:kustomize:Directory")}
    assert volcano.urn in directories["training-operator"].dependencies
    assert waits_for(pulumi_mocks, directories["mpi-operator"], directories["training-operator"])

    crds = {
        r.inputs["metadata"]["name"]
        for r in pulumi_mocks.registrations
        if r.inputs.get("kind") == "CustomResourceDefinition"
    }
    assert crds == {"pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org"}, "the MPIJob v1 CRD is left to the MPI Operator"
    (operator,) = [r for r in pulumi_mocks.registrations if r.inputs.get("kind") == "Deployment"]
    assert operator.inputs["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "--enable-scheme=pytorchjob",
        "--enable-scheme=tfjob",
        "--gang-scheduler-name=volcano",
    ]

    pytorchjob = one(pulumi_mocks, "PyTorchJob")
    mpijob = one(pulumi_mocks, "MPIJob")
    assert waits_for(pulumi_mocks, pytorchjob, directories["training-operator"]), "jobs wait for their operator"
    assert waits_for(pulumi_mocks, mpijob, directories["mpi-operator"]) or not [
        r for r in pulumi_mocks.registrations if r.parent == directories["mpi-operator"].urn
    ]
    assert pulumi_mocks.waits_for(pytorchjob, volcano.urn) and pulumi_mocks.waits_for(mpijob, volcano.urn)


def test_prod_uses_the_amis_driver_and_the_efa_plugin_tolerates_gpu_nodes(
    pulumi_mocks: RecordingMonitor, monkeypatch: Any
) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, "prod")
    values = release(pulumi_mocks, "gpu-operator").inputs["values"]
    assert values["driver"]["enabled"] is False
    efa = release(pulumi_mocks, "aws-efa-k8s-device-plugin")
    assert efa.inputs["namespace"] == "kube-system"
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in efa.inputs[
        "values"
    ]["tolerations"]
    pools = pulumi_mocks.of_type("gpu-training:index:EksGpuNodePool")
    assert all(waits_for(pulumi_mocks, efa, pool) for pool in pools), "add-ons go on once the GPU nodes exist"


@pytest.mark.parametrize("stack", ["dev", "prod", "gke"])
def test_every_release_is_pinned_and_namespaced(pulumi_mocks: RecordingMonitor, monkeypatch: Any, stack: str) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, stack)
    releases = pulumi_mocks.of_type("kubernetes:helm.sh/v3:Release")
    assert releases
    for registered in releases:
        assert registered.inputs["version"] and registered.inputs["namespace"] and registered.inputs["createNamespace"]
        assert registered.inputs["name"] == registered.name, "stable Helm release names"


INSTALL_TYPES = (
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:kustomize:Directory",
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:yaml/v2:ConfigGroup",
)


def deploy_without_installs(monitor: RecordingMonitor, stack: str) -> dict[str, Any]:
    """Run a stack with `addons.install: false`; its exports, resolved."""
    path = REPO / f"Pulumi.{stack}.yaml"
    config = {**yaml.safe_load(path.read_text())["config"], "gpu-training:addons": {"install": False}}
    use_stack(monitor, path, config)
    return exported(run(lambda: stacks.run(stacks.load())))


def test_add_ons_installed_elsewhere_leave_only_their_objects(pulumi_mocks: RecordingMonitor, monkeypatch: Any) -> None:
    monkeypatch.chdir(REPO)
    exports = deploy_without_installs(pulumi_mocks, "dev")
    assert not [r.name for r in pulumi_mocks.registrations if r.type in INSTALL_TYPES], "no release, no remote"
    assert exports["addons"] == []
    addons = pulumi_mocks.named("addons")
    assert addons.type == "gpu-training:index:ClusterAddons"
    # The plan's objects are still made, under the component as before, waiting for no install.
    objects = [r for r in pulumi_mocks.registrations if r.parent == addons.urn]
    # The observability pack's ServiceMonitor, PrometheusRule and dashboards are for dev's own Prometheus.
    pack = {"ServiceMonitor", "PrometheusRule", "ConfigMap"}
    assert {r.inputs["kind"] for r in objects} == {"NicClusterPolicy", "PriorityClass", *pack}
    assert all(r.dependencies == [] for r in objects)
    queue = one(pulumi_mocks, "Queue")
    assert queue.inputs["spec"]["capability"] == {"nvidia.com/gpu": "32"} and queue.dependencies == []
    assert len(pulumi_mocks.of_type("kubernetes:k8s.cni.cncf.io/v1:NetworkAttachmentDefinition")) == 8
    assert pulumi_mocks.of_type("kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime")
    assert one(pulumi_mocks, "PyTorchJob") and one(pulumi_mocks, "MPIJob")
    assert pulumi_mocks.of_type("gpu-training:index:FabricCheck")


@pytest.mark.parametrize("stack", ["dev", "prod", "gke"])
def test_add_ons_installed_elsewhere_change_no_other_urn(
    pulumi_mocks: RecordingMonitor, monkeypatch: Any, stack: str
) -> None:
    monkeypatch.chdir(REPO)
    deploy_without_installs(pulumi_mocks, stack)
    pinned = set((NAMES / f"{stack}.txt").read_text().splitlines())
    current = set(engine_urns(pulumi_mocks.registrations).values())
    assert current <= pinned, f"new URNs: {sorted(current - pinned)}"
    gone = pinned - set(answered(pulumi_mocks.registrations, pinned))
    assert gone and all(any(t in urn for t in INSTALL_TYPES) for urn in gone), sorted(gone)
