"""Vpc: a new VPC for an EKS cluster, a private and a public subnet per zone, one NAT gateway."""

from __future__ import annotations

import pulumi
from pulumi_aws import ec2

from components.addons.karpenter import DISCOVERY_TAG
from components.aws.network import subnet_layout

TOKEN = "gpu-training:index:Vpc"


class Vpc(pulumi.ComponentResource):
    """A VPC laid out for EKS: nodes in private subnets (tagged for internal load balancers), a NAT."""

    vpc_id: pulumi.Output[str]
    """The VPC."""

    def __init__(
        self, name: str, cidr: str, zones: list[str], cluster: str, opts: pulumi.ResourceOptions | None = None
    ):
        """Create the VPC, its subnets by zone, the internet and NAT gateways, and routes."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        shared = {f"kubernetes.io/cluster/{cluster}": "shared"}
        vpc = ec2.Vpc(
            name, cidr_block=cidr, enable_dns_hostnames=True, enable_dns_support=True, tags={"Name": name}, opts=child
        )
        gateway = ec2.InternetGateway(name, vpc_id=vpc.id, tags={"Name": name}, opts=child)
        public_routes = ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": gateway.id}],
            tags={"Name": f"{name}-public"},
            opts=child,
        )
        self.private_subnet_ids: dict[str, pulumi.Output[str]] = {}
        self.public_subnet_ids: dict[str, pulumi.Output[str]] = {}
        nat: ec2.NatGateway | None = None
        private_routes: ec2.RouteTable | None = None
        for layout in subnet_layout(cidr, zones):
            public = ec2.Subnet(
                f"{name}-public-{layout.zone}",
                vpc_id=vpc.id,
                cidr_block=layout.public,
                availability_zone=layout.zone,
                map_public_ip_on_launch=True,
                tags={**shared, "Name": f"{name}-public-{layout.zone}", "kubernetes.io/role/elb": "1"},
                opts=child,
            )
            ec2.RouteTableAssociation(
                f"{name}-public-{layout.zone}", subnet_id=public.id, route_table_id=public_routes.id, opts=child
            )
            if nat is None:
                address = ec2.Eip(f"{name}-nat", domain="vpc", tags={"Name": f"{name}-nat"}, opts=child)
                nat = ec2.NatGateway(
                    f"{name}-nat",
                    allocation_id=address.id,
                    subnet_id=public.id,
                    tags={"Name": f"{name}-nat"},
                    opts=child,
                )
                private_routes = ec2.RouteTable(
                    f"{name}-private",
                    vpc_id=vpc.id,
                    routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
                    tags={"Name": f"{name}-private"},
                    opts=child,
                )
            assert private_routes is not None
            private = ec2.Subnet(
                f"{name}-private-{layout.zone}",
                vpc_id=vpc.id,
                cidr_block=layout.private,
                availability_zone=layout.zone,
                tags={
                    **shared,
                    "Name": f"{name}-private-{layout.zone}",
                    "kubernetes.io/role/internal-elb": "1",
                    DISCOVERY_TAG: cluster,  # Karpenter's node classes find the node subnets by it
                },
                opts=child,
            )
            ec2.RouteTableAssociation(
                f"{name}-private-{layout.zone}", subnet_id=private.id, route_table_id=private_routes.id, opts=child
            )
            self.private_subnet_ids[layout.zone] = private.id
            self.public_subnet_ids[layout.zone] = public.id
        self.vpc_id = vpc.id
        self.register_outputs({"vpcId": self.vpc_id})
