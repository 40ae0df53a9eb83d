"""The IAM role a Kubernetes service account runs as, through EKS Pod Identity."""

from __future__ import annotations

import pulumi
from pulumi_aws import eks, iam

from components.aws import iam as policies


def service_account_role(
    name: str,
    *,
    cluster_name: pulumi.Input[str],
    namespace: str,
    service_account: str,
    policy: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> iam.Role:
    """A role with an inline policy, handed to one service account by an EKS Pod Identity association."""
    role = iam.Role(name, assume_role_policy=policies.pod_identity_trust_policy(), opts=opts)
    iam.RolePolicy(name, role=role.id, policy=policy, opts=opts)
    eks.PodIdentityAssociation(
        name,
        cluster_name=cluster_name,
        namespace=namespace,
        service_account=service_account,
        role_arn=role.arn,
        opts=opts,
    )
    return role
