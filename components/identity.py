"""Service accounts and workload identity: which ServiceAccounts the stack owns, the cloud identity each gets, and
whether the jobs' `serviceAccount` fits them. Pure: the cloud shells (components/aws/identity.py,
components/gcp/identity.py) make what this decides.

Sources (read 2026-11-27):
- EKS Pod Identity: the agent add-on `eks-pod-identity-agent` (docs.aws.amazon.com/eks/latest/userguide/
  pod-id-agent-setup.html), the role's trust policy: pods.eks.amazonaws.com may sts:AssumeRole and sts:TagSession
  (.../pod-id-role.html), one association of a role to a (cluster, namespace, service account)
  (.../pod-id-association.html). The pods need no annotation: EKS sets the credential environment of a pod whose
  service account has an association when the pod is made (.../pod-identities.html), so the association must exist
  before the job's pods do.
- Workload Identity Federation for GKE (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity): the
  cluster's workload pool PROJECT.svc.id.goog, nodes in GKE_METADATA mode, and either IAM grants straight to the
  principal of the Kubernetes service account or, its alternative, a Kubernetes service account linked to an IAM
  service account: the annotation iam.gke.io/gcp-service-account on the ServiceAccount, and
  roles/iam.workloadIdentityUser for serviceAccount:PROJECT.svc.id.goog[NAMESPACE/KSA] on the IAM service account.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass

from components.errors import Issue
from components.models import ClusterSpec, GcpClusterSpec, StackConfig
from components.models.identity import ServiceAccountSpec

GKE_ANNOTATION = "iam.gke.io/gcp-service-account"
"""The annotation that links a Kubernetes ServiceAccount to the Google service account its pods act as."""
IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
"""The annotation of IAM roles for service accounts (IRSA), what an existing EKS cluster may use instead."""
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
"""The role on a Google service account that lets a Kubernetes service account act as it."""
_CLOUD = {"aws": "EKS Pod Identity", "gcp": "Workload Identity Federation for GKE"}
_FIX = {
    "aws": "aws: {policies: [POLICY_ARN, ...]} or aws: {roleArn: ROLE_ARN}",
    "gcp": "gcp: {roles: [roles/...]} or gcp: {serviceAccount: NAME@PROJECT.iam.gserviceaccount.com}",
}
_ACCOUNT_ID = 30
"""The longest Google service account id (6 to 30 lowercase letters, digits and hyphens, starting with a letter)."""


@dataclass(frozen=True, slots=True)
class GoogleLink:
    """A Kubernetes service account linked to a Google service account: the one the stack makes, or the user's."""

    email: str
    """The Google service account's email."""
    account_id: str | None
    """The id of the Google service account the stack makes; None when it is the user's own."""
    project: str
    """The project of the Google service account (the user's may live in another)."""
    member: str
    """Who may act as it: the Kubernetes service account in the cluster's workload pool."""


def workload_pool(project: str) -> str:
    """The workload identity pool of a GKE cluster in `project`."""
    return f"{project}.svc.id.goog"


def workload_member(project: str, namespace: str, name: str) -> str:
    """The IAM member naming one Kubernetes service account of the project's GKE clusters."""
    return f"serviceAccount:{workload_pool(project)}[{namespace}/{name}]"


def account_id(cluster: str, namespace: str, name: str) -> str:
    """The id of the Google service account the stack makes for a Kubernetes service account: cluster, namespace
    and name (two clusters of one project share the pool), shortened with a hash when longer than Google allows."""
    stem = re.sub(r"[^a-z0-9-]+", "-", f"{cluster}-{namespace}-{name}".lower()).strip("-")
    if not stem[:1].isalpha():
        stem = f"k-{stem}"
    if len(stem) <= _ACCOUNT_ID:
        return stem.ljust(6, "0")
    digest = hashlib.sha256(f"{cluster}/{namespace}/{name}".encode()).hexdigest()[:6]
    return f"{stem[: _ACCOUNT_ID - 7].rstrip('-')}-{digest}"


def google_link(account: ServiceAccountSpec, cluster: ClusterSpec) -> GoogleLink | None:
    """The Google service account a declared service account acts as on a GKE stack; None elsewhere."""
    if account.gcp is None or not isinstance(cluster, GcpClusterSpec):
        return None
    project = cluster.project
    member = workload_member(project, account.namespace, account.name)
    own = account.gcp.service_account
    if own is not None:
        domain = own.split("@", 1)[1]
        owner = domain.removesuffix(".iam.gserviceaccount.com") if domain.endswith(".iam.gserviceaccount.com") else "-"
        return GoogleLink(email=own, account_id=None, project=owner, member=member)
    made = account_id(cluster.name, account.namespace, account.name)
    return GoogleLink(
        email=f"{made}@{project}.iam.gserviceaccount.com", account_id=made, project=project, member=member
    )


def annotations(account: ServiceAccountSpec, cluster: ClusterSpec) -> dict[str, str]:
    """The ServiceAccount's annotations: the user's, and on GKE the link to its Google service account. EKS Pod
    Identity needs none: its association names the service account."""
    link = google_link(account, cluster)
    return {**account.annotations, **({GKE_ANNOTATION: link.email} if link else {})}


def issues(config: StackConfig) -> list[Issue]:
    """What is wrong with the declared service accounts and the jobs' `serviceAccount`."""
    found: list[Issue] = []
    provider = config.cluster.provider
    keys = [(a.namespace, a.name) for a in config.service_accounts]
    counts = Counter(keys)
    for index, account in enumerate(config.service_accounts):
        path = f"serviceAccounts[{index}]"
        if counts[keys[index]] > 1 and keys.index(keys[index]) != index:
            found.append(
                Issue(f"{path}.name", f"'{account.name}' is declared twice in namespace '{account.namespace}'")
            )
        for cloud, settings in (("aws", account.aws), ("gcp", account.gcp)):
            if settings is not None and provider != cloud:
                found.append(Issue(f"{path}.{cloud}", _wrong_cloud(cloud, provider)))
        if account.gcp is not None and provider == "gcp" and GKE_ANNOTATION in account.annotations:
            found.append(
                Issue(
                    f"{path}.annotations",
                    f"{GKE_ANNOTATION} is what gcp sets: drop the annotation, or drop gcp and keep the annotation",
                )
            )
    declared: dict[str, list[str]] = {}
    for account in config.service_accounts:
        declared.setdefault(account.name, []).append(account.namespace)
    for index, job in enumerate(config.jobs):
        name = job.service_account
        elsewhere = declared.get(name or "", [])
        if name and elsewhere and job.namespace not in elsewhere:
            found.append(
                Issue(
                    f"jobs[{index}].serviceAccount",
                    f"service account '{name}' is declared in namespace {_names(elsewhere)}, not in the job's "
                    f"'{job.namespace}' (a pod runs only as a service account of its own namespace): declare one in "
                    f"serviceAccounts with namespace: {job.namespace}",
                )
            )
    return found


def undeclared(config: StackConfig) -> list[str]:
    """One warning per service account that jobs name and the stack does not declare: it must exist on the cluster
    before the jobs start, or their pods are never created."""
    declared = {(a.namespace, a.name) for a in config.service_accounts}
    users: dict[tuple[str, str], list[str]] = {}
    for job in config.jobs:
        if job.service_account and (job.namespace, job.service_account) not in declared:
            users.setdefault((job.namespace, job.service_account), []).append(job.name)
    return [
        f"service account {namespace}/{name} (jobs {', '.join(jobs)}) is not in serviceAccounts: it must exist on the "
        "cluster before they run, or declare it there so the stack makes it"
        for (namespace, name), jobs in users.items()
    ]


def _wrong_cloud(cloud: str, provider: str) -> str:
    """Why a cloud's identity settings do not fit the stack's cluster, and what does."""
    if provider == "existing":
        return (
            f"{_CLOUD[cloud]} is set up by a stack that makes the cluster, and this one is existing: drop {cloud} and "
            f"give the annotation your cluster reads under annotations ({IRSA_ANNOTATION} for IRSA on EKS, "
            f"{GKE_ANNOTATION} on GKE)"
        )
    return f"{_CLOUD[cloud]} is for provider {cloud}, and this stack's cluster is {provider}: use {_FIX[provider]}"


def _names(namespaces: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in namespaces)


def service_account_key(account: ServiceAccountSpec) -> str:
    """`ServiceAccount/namespace/name`: how the platform objects name the account's ServiceAccount."""
    return f"ServiceAccount/{account.namespace}/{account.name}"


def resource_name(prefix: str, account: ServiceAccountSpec) -> str:
    """The stable Pulumi name of a service account's cloud resources."""
    return f"{prefix}-{account.namespace}-{account.name}"


def describe(account: ServiceAccountSpec, cluster: ClusterSpec) -> str:
    """One service account for render's summary: where it is and the cloud identity its pods get."""
    where = f"{account.namespace}/{account.name}"
    link = google_link(account, cluster)
    if link is not None:
        made = (
            f"made with {_count(len(account.gcp.roles), 'project role')}"
            if account.gcp and link.account_id
            else "yours"
        )
        return f"{where} as {link.email} ({_CLOUD['gcp']}; {made})"
    if account.aws is not None and cluster.provider == "aws":
        role = account.aws.role_arn or f"a role made with {_count(len(account.aws.policies), 'policy')}"
        return f"{where} as {role} ({_CLOUD['aws']})"
    return f"{where} ({'annotated' if account.annotations else 'no cloud identity'})"


def summary(config: StackConfig) -> str | None:
    """render's line of the declared service accounts; None when there are none."""
    if not config.service_accounts:
        return None
    return "service accounts: " + ", ".join(describe(a, config.cluster) for a in config.service_accounts)


def _count(n: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {noun if n == 1 else plural}"
