"""Service accounts the stack owns, and the cloud identity (EKS Pod Identity, GKE Workload Identity) each runs as."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from components.models.base import DnsLabel, ObjectName, Spec, at

_POLICY_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::(aws|[0-9]{12}):policy/[\w+=,.@/-]+$")
_ROLE_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:role/[\w+=,.@/-]+$")
# IAM service accounts are <id>@<project>.iam.gserviceaccount.com; Google's own (Compute Engine's default,
# App Engine's) end in developer.gserviceaccount.com or appspot.gserviceaccount.com.
_GSA = re.compile(r"^[a-z0-9][a-z0-9-]*@[a-z0-9][a-z0-9.:-]*\.gserviceaccount\.com$")
_ROLE = re.compile(r"^(roles|projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/roles|organizations/[0-9]+/roles)/[A-Za-z0-9_.]+$")


def _policy_arn(value: str) -> str:
    if not _POLICY_ARN.match(value):
        raise ValueError(
            f"'{value}' is not an IAM policy ARN: write it as arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess "
            "(an AWS managed policy) or arn:aws:iam::123456789012:policy/my-policy"
        )
    return value


def _role_arn(value: str) -> str:
    if not _ROLE_ARN.match(value):
        raise ValueError(f"'{value}' is not an IAM role ARN: write it as arn:aws:iam::123456789012:role/my-role")
    return value


def _gsa(value: str) -> str:
    if not _GSA.match(value):
        raise ValueError(
            f"'{value}' is not a Google service account's email: write it as name@project.iam.gserviceaccount.com"
        )
    return value


def _role(value: str) -> str:
    if not _ROLE.match(value):
        raise ValueError(
            f"'{value}' is not an IAM role: write it as roles/storage.objectUser or projects/PROJECT/roles/NAME"
        )
    return value


def _once(key: str, values: list[str]) -> None:
    """Each entry once: the stack makes one grant per entry."""
    for value in values:
        if values.count(value) > 1:
            raise at(key, f"'{value}' is listed twice: list it once")


PolicyArn = Annotated[str, AfterValidator(_policy_arn)]
RoleArn = Annotated[str, AfterValidator(_role_arn)]
GoogleServiceAccount = Annotated[str, AfterValidator(_gsa)]
GoogleRole = Annotated[str, AfterValidator(_role)]


class AwsIdentitySpec(Spec):
    """The IAM role a service account's pods run as through EKS Pod Identity: one the stack makes with these
    policies, or your own."""

    policies: list[PolicyArn] = Field(default_factory=list)
    """Managed policy ARNs attached to a role the stack makes for this service account. Default: none."""
    role_arn: RoleArn | None = None
    """Your own role (its trust policy must let pods.eks.amazonaws.com sts:AssumeRole and sts:TagSession).
    Default: none."""

    @model_validator(mode="after")
    def _one(self) -> AwsIdentitySpec:
        _once("policies", self.policies)
        if bool(self.policies) == bool(self.role_arn):
            raise ValueError(
                "give either policies (the stack makes a role with them) or roleArn (your own role), not "
                + ("both" if self.policies else "neither")
            )
        return self


class GcpIdentitySpec(Spec):
    """The Google service account a service account's pods act as through Workload Identity Federation for GKE:
    one the stack makes with these project roles, or your own."""

    roles: list[GoogleRole] = Field(default_factory=list)
    """IAM roles on the cluster's project granted to a Google service account the stack makes. Default: none."""
    service_account: GoogleServiceAccount | None = None
    """Your own Google service account's email; the stack lets the Kubernetes service account act as it.
    Default: none."""

    @model_validator(mode="after")
    def _one(self) -> GcpIdentitySpec:
        _once("roles", self.roles)
        if bool(self.roles) == bool(self.service_account):
            raise ValueError(
                "give either roles (the stack makes a Google service account with them) or serviceAccount (your "
                "own), not " + ("both" if self.roles else "neither")
            )
        return self


class ServiceAccountSpec(Spec):
    """A Kubernetes ServiceAccount the stack makes, with the cloud identity its pods get."""

    name: ObjectName
    """The ServiceAccount's name; a job's `serviceAccount` names it. Required."""
    namespace: DnsLabel = "training"
    """Its namespace. Default: training."""
    aws: AwsIdentitySpec | None = None
    """EKS (provider aws): the IAM role its pods run as, through EKS Pod Identity. Default: none."""
    gcp: GcpIdentitySpec | None = None
    """GKE (provider gcp): the Google service account its pods act as, through Workload Identity. Default: none."""
    annotations: dict[str, str] = Field(default_factory=dict)
    """Annotations of the ServiceAccount, e.g. an existing cluster's eks.amazonaws.com/role-arn (IRSA) or
    iam.gke.io/gcp-service-account. Default: none."""

    @model_validator(mode="after")
    def _one_cloud(self) -> ServiceAccountSpec:
        if self.aws is not None and self.gcp is not None:
            raise at("gcp", "a service account runs on one cloud: keep aws (EKS) or gcp (GKE), as the cluster's is")
        return self
