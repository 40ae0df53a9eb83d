"""EksPodIdentities: the IAM role of each service account the stack declares with `aws`, handed to it by an EKS Pod
Identity association (components/identity.py has the sources)."""

from __future__ import annotations

import pulumi
from pulumi_aws import eks, iam

from components.aws import iam as policies
from components.identity import resource_name, service_account_key
from components.models.identity import ServiceAccountSpec

TOKEN = "gpu-training:index:EksPodIdentities"


class EksPodIdentities(pulumi.ComponentResource):
    """Per service account with `aws`: a role the stack makes with its policies (or the user's role), and the
    association of that role with the service account on the cluster."""

    roles: dict[str, pulumi.Output[str]]
    """Each service account's role ARN, by ServiceAccount/namespace/name."""
    associations: dict[str, eks.PodIdentityAssociation]
    """Each service account's association, by ServiceAccount/namespace/name: its ServiceAccount waits for it, so
    no pod of it starts without its credentials."""

    def __init__(
        self,
        name: str,
        accounts: list[ServiceAccountSpec],
        *,
        cluster_name: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """The roles and associations of the `accounts` that set `aws`, on the cluster `cluster_name`."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.roles = {}
        self.associations = {}
        for account in accounts:
            settings = account.aws
            if settings is None:
                continue
            stem = resource_name(name, account)
            attached: list[pulumi.Resource] = []
            role_arn: pulumi.Input[str]
            if settings.role_arn is not None:
                role_arn = settings.role_arn
            else:
                role = iam.Role(stem, assume_role_policy=policies.pod_identity_trust_policy(), opts=child)
                attached = [
                    iam.RolePolicyAttachment(
                        f"{stem}-{policies.policy_name(arn)}", role=role.name, policy_arn=arn, opts=child
                    )
                    for arn in settings.policies
                ]
                role_arn = role.arn
            key = service_account_key(account)
            self.roles[key] = pulumi.Output.from_input(role_arn)
            # After its policies: a pod that starts as soon as the association exists already has them.
            self.associations[key] = eks.PodIdentityAssociation(
                stem,
                cluster_name=cluster_name,
                namespace=account.namespace,
                service_account=account.name,
                role_arn=role_arn,
                opts=pulumi.ResourceOptions(parent=self, depends_on=attached),
            )
        self.register_outputs({"roles": self.roles})

    @property
    def waits(self) -> dict[str, list[pulumi.Resource]]:
        """What each ServiceAccount waits for, by ServiceAccount/namespace/name."""
        return {key: [association] for key, association in self.associations.items()}
