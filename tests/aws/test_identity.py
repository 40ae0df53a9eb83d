"""EKS Pod Identity under Pulumi mocks: a declared service account's role (made from its policies, or the user's) and
its association, which the ServiceAccount, and through it the job, waits for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import stacks
from tests.support.pulumi_mocks import RecordingMonitor, Registration, run, use_stack

REPO = Path(__file__).resolve().parents[2]
PROD = REPO / "Pulumi.prod.yaml"
ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
READ_S3 = "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"
OWN_ROLE = "arn:aws:iam::123456789012:role/data-loader"


def one(monitor: RecordingMonitor, type_: str, name: str) -> Registration:
    (found,) = [r for r in monitor.of_type(type_) if r.name == name]
    return found


def deploy(monitor: RecordingMonitor, accounts: list[dict[str, Any]], job_account: str | None = None) -> None:
    config = yaml.safe_load(PROD.read_text())["config"]
    config["gpu-training:serviceAccounts"] = accounts
    if job_account:
        config["gpu-training:jobs"][0]["serviceAccount"] = job_account
    use_stack(monitor, PROD, config)
    run(lambda: stacks.run(stacks.load()))


def test_a_service_account_with_policies_gets_a_pod_identity_role_and_its_association(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    accounts = [{"name": "trainer", "aws": {"policies": [READ_S3]}}]
    deploy(pulumi_mocks, accounts, job_account="trainer")

    role = one(pulumi_mocks, "aws:iam/role:Role", "train-prod-pod-identity-training-trainer")
    (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    attachment = pulumi_mocks.named("train-prod-pod-identity-training-trainer-AmazonS3ReadOnlyAccess")
    assert attachment.inputs["policyArn"] == READ_S3

    association = one(pulumi_mocks, ASSOCIATION, "train-prod-pod-identity-training-trainer")
    assert association.inputs == {
        "clusterName": "train-prod",
        "namespace": "training",
        "serviceAccount": "trainer",
        "roleArn": "arn:aws:iam::123456789012:role/mock",
    }
    assert attachment.urn in association.dependencies, "the role has its policies before a pod can take it"
    (agent,) = [
        a for a in pulumi_mocks.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "eks-pod-identity-agent"
    ]
    component = one(pulumi_mocks, "gpu-training:index:EksPodIdentities", "train-prod-pod-identity")
    assert agent.urn in component.dependencies

    (account,) = [s for s in pulumi_mocks.of_type("kubernetes:core/v1:ServiceAccount") if s.name.endswith("trainer")]
    assert account.inputs["metadata"]["namespace"] == "training"
    assert "annotations" not in account.inputs["metadata"], "Pod Identity needs no annotation"
    assert association.urn in account.dependencies, "no pod of the account starts before its credentials exist"
    job = one(pulumi_mocks, "gpu-training:index:TrainingJob", "training-llama-pretrain")
    assert account.urn in job.dependencies


def test_your_own_role_is_associated_and_no_role_is_made(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, [{"name": "loader", "namespace": "etl", "aws": {"roleArn": OWN_ROLE}}])
    (association,) = [a for a in pulumi_mocks.of_type(ASSOCIATION) if a.name.endswith("-etl-loader")]
    assert association.inputs["roleArn"] == OWN_ROLE
    assert association.inputs["namespace"] == "etl" and association.inputs["serviceAccount"] == "loader"
    assert not [r for r in pulumi_mocks.of_type("aws:iam/role:Role") if "pod-identity" in r.name]
    namespaces = {n.inputs["metadata"]["name"] for n in pulumi_mocks.of_type("kubernetes:core/v1:Namespace")}
    assert "etl" in namespaces


def test_a_service_account_without_aws_makes_nothing_on_the_cloud(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, [{"name": "plain", "annotations": {"team": "ml"}}])
    assert not [a for a in pulumi_mocks.of_type(ASSOCIATION) if "plain" in a.name]
    assert not [r for r in pulumi_mocks.registrations if r.name == "train-prod-pod-identity"]
    (account,) = [s for s in pulumi_mocks.of_type("kubernetes:core/v1:ServiceAccount") if s.name.endswith("plain")]
    assert account.inputs["metadata"]["annotations"] == {"team": "ml"}
