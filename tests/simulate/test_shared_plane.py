"""The worker's shared control plane (tests/support/sharedplane.py): what a test leaves is gone before the next one
gets the plane, and a plane that cannot be put back is never lent again."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from components.simulate import controlplane
from tests.support import sharedplane
from tests.support.widgets import widget_crd

pytestmark = pytest.mark.simulate

NAMESPACE = "left-behind"


def _leave_behind(plane: controlplane.ControlPlane) -> None:
    """What a careless test leaves: a namespace with a pod bound to a node, an object its (stopped) controller would
    finalize and a custom resource of a version its group does not prefer; the node; a cluster-scoped object with a
    finalizer; a webhook whose server is gone that refuses everything; and a process."""
    client = plane.client()
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    client.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}})
    client.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "worker", "namespace": NAMESPACE, "finalizers": ["example.com/hold"]},
            "spec": {"nodeName": "node-a", "containers": [{"name": "main", "image": "busybox"}]},
        }
    )
    client.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "state", "namespace": NAMESPACE, "finalizers": ["example.com/hold"]},
        }
    )
    # Served only in a version its group does not prefer: an inventory of preferred versions alone missed it.
    client.apply(
        {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {"name": "nccl-tests", "namespace": NAMESPACE, "finalizers": ["example.com/hold"]},
            "spec": {
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "l", "image": "x"}]}}}
                }
            },
        }
    )
    client.apply(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "left-behind", "finalizers": ["example.com/hold"]},
            "value": 1000,
        }
    )
    client.apply(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "gone"},
            "webhooks": [
                {
                    "name": "gone.example.com",
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "failurePolicy": "Fail",
                    "clientConfig": {"url": f"https://127.0.0.1:{controlplane.free_port()}/validate"},
                    "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}],
                }
            ],
        }
    )
    plane.start("sleeper", ["sleep", "600"])


def test_what_a_test_leaves_is_gone_before_the_next_gets_the_plane(
    binaries: dict[str, Path], etcd_seed: Path, tmp_path: Path
) -> None:
    shared = sharedplane.SharedPlane(lambda: controlplane.start(tmp_path / "plane", binaries, seed=etcd_seed))
    try:
        plane = shared.lend()
        assert [p.name for p in plane.processes] == list(sharedplane.OWN_PROCESSES), "what a reset keeps running"
        before = sharedplane.inventory(plane.client(), sharedplane.kinds(plane.client())).identities()
        _leave_behind(plane)
        sleeper = plane.processes[-1].popen
        shared.give_back()

        again = shared.lend()
        assert again is plane, "the plane was put back, not replaced"
        client = again.client()
        after = sharedplane.inventory(client, sharedplane.kinds(client)).identities()
        assert after == before, f"left: {sorted(after - before)}; missing: {sorted(before - after)}"
        assert not client.list_metadata("/apis/kubeflow.org/v2beta1/mpijobs"), "whatever version a kind is served in"
        assert sleeper.poll() is not None, "the test's process was stopped"
        assert [p.name for p in again.processes] == list(sharedplane.OWN_PROCESSES)
        client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})  # no webhook refuses
    finally:
        shared.stop()


def test_a_plane_whose_crds_changed_is_stopped_and_the_next_test_gets_a_fresh_one(
    binaries: dict[str, Path], etcd_seed: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shared = sharedplane.SharedPlane(
        lambda: controlplane.start(tmp_path_factory.mktemp("plane"), binaries, seed=etcd_seed)
    )
    try:
        plane = shared.lend()
        plane.client().apply(widget_crd())
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an operator's own CRD versions are no fault of the test
            shared.give_back()
        assert not plane.processes, "the changed plane was stopped"
        fresh = shared.lend()
        assert fresh is not plane
        assert fresh.client().get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com") is None
    finally:
        shared.stop()
