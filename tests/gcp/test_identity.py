"""Workload Identity Federation for GKE under Pulumi mocks: a declared service account linked to a Google service
account (made with its roles, or the user's own): the annotation on the ServiceAccount and the workloadIdentityUser
grant on the Google account, both waited for by the job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

import stacks
from components.identity import GKE_ANNOTATION
from tests.support.pulumi_mocks import RecordingMonitor, Registration, run, use_stack

REPO = Path(__file__).resolve().parents[2]
GKE = REPO / "Pulumi.gke.yaml"
PROJECT = "example-ml-project"
GSA = "gcp:serviceaccount/account:Account"
LINK = "gcp:serviceaccount/iAMMember:IAMMember"
GRANT = "gcp:projects/iAMMember:IAMMember"
OWN = "loader@data-lake.iam.gserviceaccount.com"


def deploy(monitor: RecordingMonitor, accounts: list[dict[str, Any]], job_account: str | None = None) -> None:
    config = yaml.safe_load(GKE.read_text())["config"]
    config["gpu-training:serviceAccounts"] = accounts
    if job_account:
        config["gpu-training:jobs"][0]["serviceAccount"] = job_account
    use_stack(monitor, GKE, config)
    run(lambda: stacks.run(stacks.load()))


def kube_account(monitor: RecordingMonitor, name: str) -> Registration:
    (found,) = [s for s in monitor.of_type("kubernetes:core/v1:ServiceAccount") if s.name.endswith(name)]
    return found


def test_a_service_account_with_roles_gets_a_google_account_its_roles_and_the_link(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    roles = ["roles/storage.objectUser", "roles/logging.logWriter"]
    deploy(pulumi_mocks, [{"name": "trainer", "gcp": {"roles": roles}}], job_account="trainer")
    cluster_name = yaml.safe_load(GKE.read_text())["config"]["gpu-training:cluster"]["name"]

    (gsa,) = pulumi_mocks.of_type(GSA)
    account_id = f"{cluster_name}-training-trainer"
    assert gsa.inputs["accountId"] == account_id and gsa.inputs["project"] == PROJECT
    email = f"{account_id}@{PROJECT}.iam.gserviceaccount.com"
    grants = {g.inputs["role"]: g for g in pulumi_mocks.of_type(GRANT)}
    assert set(grants) == set(roles)
    assert all(
        g.inputs["member"] == f"serviceAccount:{email}" and g.inputs["project"] == PROJECT for g in grants.values()
    )

    (link,) = pulumi_mocks.of_type(LINK)
    assert link.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert link.inputs["member"] == f"serviceAccount:{PROJECT}.svc.id.goog[training/trainer]"
    assert link.inputs["serviceAccountId"] == f"projects/{PROJECT}/serviceAccounts/{email}"
    assert {g.urn for g in grants.values()} <= set(link.dependencies), "the roles are there before a pod acts"
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    component = [r for r in pulumi_mocks.registrations if r.type == "gpu-training:index:GkeWorkloadIdentities"]
    assert cluster.urn in component[0].dependencies, "the workload pool exists once the cluster does"

    account = kube_account(pulumi_mocks, "trainer")
    assert account.inputs["metadata"]["annotations"] == {GKE_ANNOTATION: email}
    assert link.urn in account.dependencies
    (job,) = [r for r in pulumi_mocks.of_type("gpu-training:index:TrainingJob") if r.name.endswith("gemma-finetune")]
    assert account.urn in job.dependencies


def test_your_own_google_account_is_linked_and_none_is_made(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, [{"name": "loader", "namespace": "etl", "gcp": {"serviceAccount": OWN}}])
    assert not pulumi_mocks.of_type(GSA) and not pulumi_mocks.of_type(GRANT)
    (link,) = pulumi_mocks.of_type(LINK)
    assert link.inputs["serviceAccountId"] == f"projects/data-lake/serviceAccounts/{OWN}"
    assert link.inputs["member"] == f"serviceAccount:{PROJECT}.svc.id.goog[etl/loader]"
    assert kube_account(pulumi_mocks, "loader").inputs["metadata"]["annotations"] == {GKE_ANNOTATION: OWN}


def test_the_nodes_serve_workload_identity(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    """What the links rely on: the cluster's workload pool and every node pool on the GKE metadata server."""
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, [{"name": "loader", "gcp": {"serviceAccount": OWN}}])
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["workloadIdentityConfig"] == {"workloadPool": f"{PROJECT}.svc.id.goog"}
    pools = pulumi_mocks.of_type("gcp:container/nodePool:NodePool")
    assert pools and all(p.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"} for p in pools)
