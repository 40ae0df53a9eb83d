"""EksGpuNodePool: a managed node group of GPU nodes, with EFA, a placement group and reserved capacity."""

from __future__ import annotations

import pulumi
from pulumi_aws import ec2, eks

from components import catalog
from components.aws.nodegroup import launch_template_args, node_group_args
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
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """Create the pool's launch template and node group (and its EFA security group and placement group)."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)

        self.placement_group: ec2.PlacementGroup | None = None
        if pool.placement == "cluster":
            self.placement_group = ec2.PlacementGroup(name, strategy="cluster", tags={"Name": name}, opts=child)

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
                tags={"Name": f"{name}-efa"},
                opts=child,
            )
            security_groups.append(self.efa_security_group.id)

        machine = catalog.lookup("aws", pool.machine_type) if pool.machine_type else None
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
            **node_group_args(spec, pool),
            opts=child,
        )
        self.node_group_name = self.node_group.node_group_name
        self.register_outputs({"nodeGroupName": self.node_group_name})
