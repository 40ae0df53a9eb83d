"""ClusterAutoscalerAws: the role the Cluster Autoscaler runs as, through EKS Pod Identity."""

from __future__ import annotations

import pulumi

from components.addons import autoscaler
from components.aws import iam as policies
from components.aws.roles import service_account_role

TOKEN = "gpu-training:index:ClusterAutoscalerAws"


class ClusterAutoscalerAws(pulumi.ComponentResource):
    """The Cluster Autoscaler's role, allowed to resize only this cluster's node groups."""

    role_arn: pulumi.Output[str]
    """The role."""

    def __init__(
        self, name: str, *, cluster: str, cluster_name: pulumi.Input[str], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Create the role, its policy and its association with the autoscaler's service account."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = service_account_role(
            name,
            cluster_name=cluster_name,
            namespace=autoscaler.NAMESPACE,
            service_account=autoscaler.SERVICE_ACCOUNT,
            policy=policies.cluster_autoscaler_policy(cluster),
            opts=child,
        )
        self.role_arn = role.arn
        self.register_outputs({"roleArn": self.role_arn})
