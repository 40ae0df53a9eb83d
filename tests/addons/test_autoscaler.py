"""The Cluster Autoscaler's ProvisioningRequest support: its flags, the CRD it needs, and Kueue after the CRD."""

from __future__ import annotations

from typing import Any

import pytest

from components.addons import autoscaler, monitoring, scheduler
from components.addons.plan import plan
from components.errors import ConfigError
from components.stack import Stack
from tests.addons.stacks import everything_aws, queued_aws, raw_config, stack_file


def test_an_autoscaler_serving_provisioning_requests_gets_the_flags_and_the_crd_first() -> None:
    stack = queued_aws()
    release = autoscaler.release(stack)

    assert release is not None, "a queued node group from zero needs the autoscaler even when it never scales alone"
    # The node check's startup taint is under the autoscaler's own prefix: no --startup-taint flag. A node may
    # start for 10 minutes and then check for timeoutMinutes (60) before the autoscaler counts it unready.
    assert release.values["extraArgs"] == {
        "max-node-startup-time": "70m",
        "enable-provisioning-requests": "true",
        "kube-api-content-type": "application/json",
    }
    assert release.needs == (autoscaler.CRD_NAME,)
    crd = autoscaler.provisioning_request_crd(stack)
    assert crd is not None and crd.remotes[0].kind == "manifest"
    assert crd.remotes[0].ref == "cluster-autoscaler-1.35.2", "the CRD of the autoscaler released for the minor"
    assert crd.remotes[0].url.endswith(
        "/kubernetes/autoscaler/cluster-autoscaler-1.35.2/cluster-autoscaler/apis/config/crd/"
        "autoscaling.x-k8s.io_provisioningrequests.yaml"
    )


def test_kueue_starts_after_the_crd_so_its_admission_check_controller_runs() -> None:
    installs = plan(queued_aws())
    kueue = next(r for r in installs.releases if r.name == scheduler.KUEUE_NAME)

    # prod also installs kube-prometheus-stack, whose ServiceMonitor kind Kueue's chart makes one of.
    assert kueue.needs == (autoscaler.CRD_NAME, monitoring.NAME)
    assert autoscaler.CRD_NAME in {r.name for r in installs.remotes}


def test_without_queued_pools_nothing_changes() -> None:
    stack = everything_aws()
    release = autoscaler.release(stack)

    assert release is not None and "enable-provisioning-requests" not in release.values.get("extraArgs", {})
    assert release.needs == ()
    assert autoscaler.provisioning_request_crd(stack) is None
    kueue = next(r for r in plan(stack).releases if r.name == scheduler.KUEUE_NAME)
    assert kueue.needs == ()


def test_gke_serves_provisioning_requests_itself() -> None:
    (pool,) = raw_config("gke")["nodePools"]
    queued = {k: v for k, v in pool.items() if k not in ("capacity", "placement")} | {"queuedProvisioning": True}
    stack = stack_file("gke", nodePools=[queued])

    installs = plan(stack)
    assert autoscaler.CRD_NAME not in {r.name for r in installs.remotes}, "GKE serves the CRD and the class"
    assert autoscaler.release(stack) is None


def _cluster(version: str) -> dict[str, Any]:
    return {**raw_config("prod")["cluster"], "kubernetesVersion": version}


def _grown(version: str, **check: Any) -> Stack:
    """prod with its pool on a node group the Cluster Autoscaler grows (minNodes 1), at a Kubernetes minor."""
    group = {"name": "p5", "instanceType": "p5.48xlarge", "minNodes": 1, "maxNodes": 8, "zone": "us-east-1a"}
    return stack_file("prod", cluster=_cluster(version), nodePools=[{**group, "nodeCheck": check}])


def test_the_autoscaler_counts_a_node_as_starting_for_its_whole_check_where_it_can_be_told() -> None:
    """--max-node-startup-time (cluster-autoscaler 1.35+): a node under check is not unready, not scaled down."""
    release = autoscaler.release(_grown("1.35", timeoutMinutes=30))
    assert release is not None and release.values["extraArgs"] == {"max-node-startup-time": "40m"}
    short = autoscaler.release(_grown("1.35", timeoutMinutes=5))
    assert short is not None and "extraArgs" not in short.values, "15 minutes, the default, is enough"
    older = autoscaler.release(_grown("1.34"))
    assert older is not None and "extraArgs" not in older.values, "1.34's autoscaler has no such flag"


def test_a_long_dcgm_level_is_refused_where_the_autoscaler_cannot_be_told() -> None:
    with pytest.raises(ConfigError) as refused:
        _grown("1.34", dcgmLevel=3)
    (issue,) = [i for i in refused.value.issues if i.path.endswith("dcgmLevel")]
    assert issue.path == "nodePools[0].nodeCheck.dcgmLevel" and "Kubernetes 1.35" in issue.message
    assert _grown("1.35", dcgmLevel=3) is not None
    assert _grown("1.34", dcgmLevel=2) is not None
