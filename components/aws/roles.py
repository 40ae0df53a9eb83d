"""IAM roles: one an AWS service assumes with managed policies, and one a Kubernetes service account
runs as through EKS Pod Identity."""

from __future__ import annotations

import pulumi
from pulumi_aws import eks, iam

from components.aws import iam as policies


def service_role(
    name: str, service: str, attached: tuple[str, ...], opts: pulumi.ResourceOptions, *, role_name: str | None = None
) -> iam.Role:
    """A role `service` (eks.amazonaws.com, ec2.amazonaws.com) assumes, with these managed policies
    attached; named `role_name` when others must find it by name, else auto-named."""
    role = iam.Role(name, name=role_name, assume_role_policy=policies.assume_role_policy(service), opts=opts)
    for arn in attached:
        iam.RolePolicyAttachment(f"{name}-{policies.policy_name(arn)}", role=role.name, policy_arn=arn, opts=opts)
    return role


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
