"""Service accounts and workload identity, pure: the model, the Google link, the validation errors and the warning
render prints for a service account the stack does not declare."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from components import identity
from components.errors import ConfigError
from components.manifests.serviceaccount import service_account
from components.models import GcpClusterSpec, StackConfig
from components.models.identity import ServiceAccountSpec
from components.render import render
from components.resolution import resolve, resolve_raw

REPO = Path(__file__).resolve().parents[1]
GKE = {"provider": "gcp", "name": "train", "project": "ml-prod", "region": "us-central1"}
EKS = {"provider": "aws", "name": "train-prod", "region": "us-east-1"}
READ_S3 = "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"


def stack_file(name: str) -> dict[str, Any]:
    """A shipped stack file's config keys, without the `gpu-training:` prefix."""
    config = yaml.safe_load((REPO / name).read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in config.items() if key.startswith("gpu-training:")}


def dev(**keys: Any) -> dict[str, Any]:
    """The dev stack (an existing cluster) with these keys replaced."""
    return {**stack_file("Pulumi.dev.yaml"), **keys}


def problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        resolve_raw(raw)
    return [(i.path, i.message) for i in caught.value.issues]


# The model


@pytest.mark.parametrize(
    ("cloud", "settings", "wanted"),
    [
        ("aws", {}, "not neither"),
        ("aws", {"policies": [READ_S3], "roleArn": "arn:aws:iam::123456789012:role/r"}, "not both"),
        ("gcp", {}, "not neither"),
        ("gcp", {"roles": ["roles/storage.objectUser"], "serviceAccount": "a-gsa@p.iam.gserviceaccount.com"}, "both"),
    ],
)
def test_a_cloud_identity_is_either_made_by_the_stack_or_your_own(cloud: str, settings: dict, wanted: str) -> None:
    with pytest.raises(ValidationError, match=wanted):
        ServiceAccountSpec.model_validate({"name": "trainer", cloud: settings})


@pytest.mark.parametrize(
    ("settings", "wanted"),
    [
        ({"aws": {"policies": ["AmazonS3ReadOnlyAccess"]}}, "is not an IAM policy ARN"),
        ({"aws": {"roleArn": "arn:aws:iam::123:role/r"}}, "is not an IAM role ARN"),
        ({"aws": {"roleArn": "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"}}, "is not an IAM role ARN"),
        ({"gcp": {"serviceAccount": "trainer"}}, "is not a Google service account's email"),
        ({"gcp": {"roles": ["storage.objectUser"]}}, "is not an IAM role: write it as roles/"),
        ({"name": "Trainer"}, "is not a DNS-1123 subdomain"),
        ({"aws": {"policies": [READ_S3, READ_S3]}}, "is listed twice"),
        ({"gcp": {"roles": ["roles/storage.objectUser"] * 2}}, "is listed twice"),
    ],
)
def test_identifiers_that_are_not_what_the_cloud_takes_are_refused(settings: dict, wanted: str) -> None:
    with pytest.raises(ValidationError, match=wanted):
        ServiceAccountSpec.model_validate({"name": "trainer", **settings})


def test_a_service_account_runs_on_one_cloud() -> None:
    with pytest.raises(ValidationError, match="runs on one cloud"):
        ServiceAccountSpec.model_validate(
            {"name": "t", "aws": {"policies": [READ_S3]}, "gcp": {"roles": ["roles/storage.objectUser"]}}
        )


def test_the_key_is_a_stack_config_key_and_defaults_to_none() -> None:
    assert "serviceAccounts" in StackConfig.config_keys()
    config = StackConfig.model_validate({"cluster": GKE})
    assert config.service_accounts == []


# The Google link


@given(
    st.from_regex(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True),
    st.from_regex(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True),
    st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,60}[a-z0-9])?", fullmatch=True),
)
def test_the_google_account_id_is_always_one_google_takes_and_keeps_accounts_apart(
    cluster: str, namespace: str, name: str
) -> None:
    made = identity.account_id(cluster, namespace, name)
    assert re.fullmatch(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", made), made
    other = identity.account_id(cluster, namespace, name + "x")
    assert made != other


def test_a_stack_made_google_account_is_named_for_its_cluster_namespace_and_name() -> None:
    cluster = GcpClusterSpec.model_validate(GKE)
    account = ServiceAccountSpec.model_validate({"name": "trainer", "gcp": {"roles": ["roles/storage.objectUser"]}})
    link = identity.google_link(account, cluster)
    assert link is not None
    assert link.email == "train-training-trainer@ml-prod.iam.gserviceaccount.com"
    assert link.account_id == "train-training-trainer" and link.project == "ml-prod"
    assert link.member == "serviceAccount:ml-prod.svc.id.goog[training/trainer]"


def test_your_own_google_account_is_linked_in_its_own_project() -> None:
    cluster = GcpClusterSpec.model_validate(GKE)
    own = "loader@data-lake.iam.gserviceaccount.com"
    account = ServiceAccountSpec.model_validate({"name": "loader", "namespace": "etl", "gcp": {"serviceAccount": own}})
    link = identity.google_link(account, cluster)
    assert link is not None and link.account_id is None
    assert (link.email, link.project) == (own, "data-lake")
    assert link.member == "serviceAccount:ml-prod.svc.id.goog[etl/loader]", "the member is in the cluster's pool"


def test_the_serviceaccount_carries_the_link_on_gke_and_only_the_users_annotations_elsewhere() -> None:
    own = "loader@data-lake.iam.gserviceaccount.com"
    account = ServiceAccountSpec.model_validate(
        {"name": "loader", "gcp": {"serviceAccount": own}, "annotations": {"team": "data"}}
    )
    obj = service_account(account, GcpClusterSpec.model_validate(GKE))
    assert obj["kind"] == "ServiceAccount" and obj["metadata"]["namespace"] == "training"
    assert obj["metadata"]["annotations"] == {"team": "data", identity.GKE_ANNOTATION: own}
    plain = ServiceAccountSpec.model_validate({"name": "plain"})
    assert "annotations" not in service_account(plain, GcpClusterSpec.model_validate(GKE))["metadata"]


# Validation


def test_aws_settings_on_a_gke_stack_name_the_key_and_the_gcp_fix() -> None:
    raw = {**stack_file("Pulumi.gke.yaml"), "serviceAccounts": [{"name": "t", "aws": {"policies": [READ_S3]}}]}
    ((path, message),) = problems(raw)
    assert path == "serviceAccounts[0].aws"
    assert "EKS Pod Identity is for provider aws, and this stack's cluster is gcp" in message
    assert "gcp: {roles: [roles/...]}" in message


def test_gcp_settings_on_an_eks_stack_name_the_key_and_the_aws_fix() -> None:
    raw = {**stack_file("Pulumi.prod.yaml")}
    raw["serviceAccounts"] = [{"name": "t", "gcp": {"roles": ["roles/storage.objectUser"]}}]
    ((path, message),) = problems(raw)
    assert path == "serviceAccounts[0].gcp"
    assert "this stack's cluster is aws: use aws: {policies: [POLICY_ARN, ...]} or aws: {roleArn: ROLE_ARN}" in message


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_an_existing_cluster_takes_annotations_not_cloud_settings(cloud: str) -> None:
    settings = {"aws": {"policies": [READ_S3]}, "gcp": {"roles": ["roles/storage.objectUser"]}}[cloud]
    ((path, message),) = problems(dev(serviceAccounts=[{"name": "t", cloud: settings}]))
    assert path == f"serviceAccounts[0].{cloud}"
    assert "this one is existing" in message and identity.IRSA_ANNOTATION in message


def test_a_job_naming_a_service_account_of_another_namespace_is_an_error() -> None:
    raw = dev(serviceAccounts=[{"name": "trainer", "namespace": "research"}])
    raw["jobs"] = [{**raw["jobs"][0], "serviceAccount": "trainer"}]
    ((path, message),) = problems(raw)
    assert path == "jobs[0].serviceAccount"
    assert "declared in namespace 'research', not in the job's 'training'" in message
    assert "declare one in serviceAccounts with namespace: training" in message


def test_twice_the_same_service_account_and_the_link_annotation_beside_gcp_are_errors() -> None:
    own = {"serviceAccount": "a-gsa@ml-prod.iam.gserviceaccount.com"}
    raw = {**stack_file("Pulumi.gke.yaml")}
    raw["serviceAccounts"] = [
        {"name": "t"},
        {"name": "t", "gcp": own, "annotations": {identity.GKE_ANNOTATION: own["serviceAccount"]}},
    ]
    found = dict(problems(raw))
    assert "declared twice in namespace 'training'" in found["serviceAccounts[1].name"]
    assert "drop the annotation" in found["serviceAccounts[1].annotations"]


def test_a_declared_service_account_is_made_in_a_namespace_the_stack_creates() -> None:
    stack = resolve_raw(dev(serviceAccounts=[{"name": "loader", "namespace": "etl"}]))
    assert "etl" in stack.namespaces
    keys = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in render(stack).objects}
    assert ("ServiceAccount", "etl", "loader") in keys
    assert ("Namespace", None, "etl") in keys


def test_render_warns_once_per_undeclared_service_account_and_not_for_declared_ones() -> None:
    raw = dev(serviceAccounts=[{"name": "trainer"}])
    jobs = raw["jobs"]
    raw["jobs"] = [
        {**jobs[0], "serviceAccount": "cluster-made"},
        {**jobs[1], "serviceAccount": "cluster-made"},
        *({**j, "serviceAccount": "trainer"} for j in jobs[2:]),
    ]
    warnings = [w for w in render(resolve(StackConfig.model_validate(raw))).warnings() if "service account" in w]
    assert warnings == [
        f"service account training/cluster-made (jobs {jobs[0]['name']}, {jobs[1]['name']}) is not in "
        "serviceAccounts: it must exist on the cluster before they run, or declare it there so the stack makes it"
    ]


def test_render_says_which_cloud_identity_each_service_account_gets() -> None:
    raw = {**stack_file("Pulumi.prod.yaml")}
    raw["serviceAccounts"] = [
        {"name": "trainer", "aws": {"policies": [READ_S3]}},
        {"name": "loader", "namespace": "etl", "aws": {"roleArn": "arn:aws:iam::123456789012:role/loader"}},
        {"name": "plain"},
    ]
    (line,) = [x for x in render(resolve_raw(raw)).summary().splitlines() if x.startswith("service accounts:")]
    assert line == (
        "service accounts: training/trainer as a role made with 1 policy (EKS Pod Identity), "
        "etl/loader as arn:aws:iam::123456789012:role/loader (EKS Pod Identity), training/plain (no cloud identity)"
    )
    gke = {**stack_file("Pulumi.gke.yaml"), "serviceAccounts": [{"name": "t", "gcp": {"roles": ["roles/viewer"]}}]}
    (line,) = [x for x in render(resolve_raw(gke)).summary().splitlines() if x.startswith("service accounts:")]
    assert "training/t as train-gke-training-t@example-ml-project.iam.gserviceaccount.com" in line
    assert "made with 1 project role" in line
    assert not [x for x in render(resolve_raw(dev())).summary().splitlines() if x.startswith("service accounts")]
