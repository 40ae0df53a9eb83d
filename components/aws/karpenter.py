"""KarpenterAws: what Karpenter needs from AWS: a controller role (EKS Pod Identity), a node role
that may join the cluster, and the queue EC2 interruption and health events reach it through."""

from __future__ import annotations

import json

import pulumi
from pulumi_aws import cloudwatch, eks, sqs

from components.addons import karpenter as names
from components.aws import iam as policies
from components.aws.roles import service_account_role, service_role

TOKEN = "gpu-training:index:KarpenterAws"

# The events Karpenter acts on before EC2 takes an instance away: a Spot interruption warning (two
# minutes), a rebalance recommendation, a scheduled maintenance event, and an instance stopping or
# terminating; plus a Capacity Block or reservation about to end.
INTERRUPTION_EVENTS = {
    "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    "instance-state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    "scheduled-change": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
    "capacity-reservation": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
    },
}


class KarpenterAws(pulumi.ComponentResource):
    """The AWS side of Karpenter for one cluster."""

    node_role_arn: pulumi.Output[str]
    """The role of the nodes Karpenter launches."""
    controller_role_arn: pulumi.Output[str]
    """The role Karpenter's controller runs as."""

    def __init__(
        self,
        name: str,
        *,
        cluster: str,
        region: str,
        cluster_name: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """Create the queue and its event rules, the node role and its access entry, and the controller
        role associated with Karpenter's service account."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)

        queue = sqs.Queue(
            f"{name}-interruption",
            name=names.queue_name(cluster),
            message_retention_seconds=300,
            sqs_managed_sse_enabled=True,
            opts=child,
        )
        sqs.QueuePolicy(
            f"{name}-interruption",
            queue_url=queue.url,
            policy=queue.arn.apply(policies.event_queue_policy),
            opts=child,
        )
        for event, pattern in INTERRUPTION_EVENTS.items():
            rule = cloudwatch.EventRule(f"{name}-{event}", event_pattern=json.dumps(pattern), opts=child)
            cloudwatch.EventTarget(f"{name}-{event}", rule=rule.name, arn=queue.arn, opts=child)

        node_role = service_role(
            f"{name}-node",
            "ec2.amazonaws.com",
            policies.NODE_POLICIES,
            child,
            role_name=names.node_role_name(cluster, region),
        )
        # Nodes of a managed node group get their access entry from EKS; Karpenter's need one made.
        eks.AccessEntry(
            f"{name}-node", cluster_name=cluster_name, principal_arn=node_role.arn, type="EC2_LINUX", opts=child
        )

        controller = service_account_role(
            f"{name}-controller",
            cluster_name=cluster_name,
            namespace=names.NAMESPACE,
            service_account=names.SERVICE_ACCOUNT,
            policy=pulumi.Output.all(queue.arn, node_role.arn).apply(
                lambda arns: policies.karpenter_controller_policy(cluster, region, arns[0], arns[1])
            ),
            opts=child,
        )
        self.node_role_arn = node_role.arn
        self.controller_role_arn = controller.arn
        self.register_outputs({"nodeRoleArn": self.node_role_arn, "controllerRoleArn": self.controller_role_arn})
