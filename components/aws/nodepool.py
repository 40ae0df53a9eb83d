"""EksGpuNodePool: a managed node group of GPU nodes, with EFA, a placement group and reserved capacity."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pulumi
from pulumi_aws import autoscaling, ec2, eks

from components.addons.karpenter import EFA_GROUP_TAG, placement_group_name
from components.aws.nodegroup import (
    AUTOSCALER_TEMPLATE,
    capacity_block_scale_down,
    launch_template_args,
    node_group_args,
    node_template_tags,
)
from components.models import NodePoolSpec
from components.pool import Pool

TOKEN = "gpu-training:index:EksGpuNodePool"


class EksGpuNodePool(pulumi.ComponentResource):
    """A GPU pool on EKS. EFA, the placement group, the capacity and the zone are independent options."""

    node_group_name: pulumi.Output[str]
    """The managed node group."""

    def __init__(
        self,
        name: str,
        spec: NodePoolSpec,
        pool: Pool,
        *,
        cluster_name: pulumi.Input[str],
        node_role_arn: pulumi.Input[str],
        subnet_ids: pulumi.Input[list[str]],
        vpc_id: pulumi.Input[str],
        cluster_security_group_id: pulumi.Input[str],
        cluster: str,
        node_repair: dict[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """Create the pool's EFA security group and placement group, and, unless Karpenter makes its
        nodes, its launch template and node group (auto-repairing its nodes with `node_repair`)."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        karpenter = pool.provisioner == "karpenter"

        self.placement_group: ec2.PlacementGroup | None = None
        if pool.placement == "cluster":
            self.placement_group = ec2.PlacementGroup(
                name,
                # Karpenter's node class names its placement group; a node group's takes it by reference.
                name=placement_group_name(cluster, pool.name) if karpenter else None,
                strategy="cluster",
                tags={"Name": name},
                opts=child,
            )

        security_groups: list[pulumi.Input[str]] = [cluster_security_group_id]
        self.efa_security_group: ec2.SecurityGroup | None = None
        if pool.fabric == "efa":
            # EFA traffic only flows between members of a group that admits itself on all protocols.
            self.efa_security_group = ec2.SecurityGroup(
                f"{name}-efa",
                vpc_id=vpc_id,
                description=f"EFA traffic between the nodes of {name}",
                ingress=[
                    {"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA from members"}
                ],
                egress=[
                    {"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA to members"},
                    {
                        "protocol": "-1",
                        "from_port": 0,
                        "to_port": 0,
                        "cidr_blocks": ["0.0.0.0/0"],
                        "description": "everything else",
                    },
                ],
                tags={"Name": f"{name}-efa", EFA_GROUP_TAG: f"{cluster}-{pool.name}"},
                opts=child,
            )
            security_groups.append(self.efa_security_group.id)

        self.launch_template: ec2.LaunchTemplate | None = None
        self.node_group: eks.NodeGroup | None = None
        if karpenter:
            self.node_group_name = pulumi.Output.from_input("")
            self.register_outputs({})
            return

        machine = pool.machine()
        self.launch_template = ec2.LaunchTemplate(
            name,
            **launch_template_args(
                spec,
                pool,
                network_cards=machine.network_cards if machine else 1,
                security_groups=security_groups,
                placement_group=self.placement_group.name if self.placement_group else None,
            ),
            tag_specifications=[{"resource_type": "instance", "tags": {"Name": name, "gpu-training/pool": pool.name}}],
            opts=child,
        )
        self.node_group = eks.NodeGroup(
            name,
            cluster_name=cluster_name,
            node_group_name=name,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids,
            launch_template={"id": self.launch_template.id, "version": self.launch_template.latest_version.apply(str)},
            **node_group_args(spec, pool, node_repair=node_repair),
            # The Cluster Autoscaler owns the size between minNodes and maxNodes from here on.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["scalingConfig.desiredSize"]),
        )
        group = self.node_group.resources.apply(lambda found: found[0].autoscaling_groups[0].name)
        if pool.autoscaled:
            for key, value in node_template_tags(pool).items():
                autoscaling.Tag(
                    f"{name}-{key.removeprefix(AUTOSCALER_TEMPLATE + '/').replace('/', '-')}",
                    autoscaling_group_name=group,
                    tag={"key": key, "value": value, "propagate_at_launch": False},
                    opts=child,
                )
        scale_down = capacity_block_scale_down(spec, pool)
        if scale_down is not None:
            autoscaling.Schedule(
                f"{name}-capacity-block-end",
                autoscaling_group_name=group,
                scheduled_action_name=f"{name}-capacity-block-end",
                start_time=scale_down.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                min_size=0,
                max_size=0,
                desired_capacity=0,
                opts=child,
            )
        self.node_group_name = self.node_group.node_group_name
        self.register_outputs({"nodeGroupName": self.node_group_name})
