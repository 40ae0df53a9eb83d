"""EksCluster: an EKS cluster built with pulumi_aws, its system node group, GPU pools, and a provider."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pulumi_aws import eks, iam

from components.addons import karpenter as karpenter_names
from components.aws import iam as policies
from components.aws.autoscaler import ClusterAutoscalerAws
from components.aws.identity import EksPodIdentities
from components.aws.karpenter import KarpenterAws
from components.aws.kubeconfig import kubeconfig
from components.aws.network import region_zones
from components.aws.nodepool import EksGpuNodePool
from components.aws.roles import service_role
from components.aws.storage import AwsStorage
from components.aws.subnets import Subnets
from components.aws.vpc import Vpc
from components.errors import ConfigError
from components.kubernetes.objects import as_pulumi_error
from components.models import AwsClusterSpec, NodePoolSpec, VolumeSpec
from components.models.identity import ServiceAccountSpec
from components.pool import Pool
from components.repair import EKS_AGENT_ADDON, EksRepair

TOKEN = "gpu-training:index:EksCluster"
CORE_ADDONS = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
SYSTEM_INSTANCE_TYPE = "m6i.2xlarge"


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster (or an adopted one) with IRSA, access entries, core add-ons, a system node
    group, one managed node group per GPU pool, and a Kubernetes provider for what follows."""

    kubeconfig: pulumi.Output[str]
    """The cluster's kubeconfig (secret); tokens come from `aws eks get-token`."""
    oidc_provider_arn: pulumi.Output[str]
    """The IAM OIDC provider for IRSA."""

    def __init__(
        self,
        name: str,
        spec: AwsClusterSpec,
        pools: list[tuple[NodePoolSpec, Pool]],
        opts: pulumi.ResourceOptions | None = None,
        *,
        volumes: list[VolumeSpec] | None = None,
        repair: EksRepair | None = None,
        service_accounts: list[ServiceAccountSpec] | None = None,
    ) -> None:
        """Build or adopt the cluster named in `spec`, then its node groups and the file systems of `volumes`.

        With `repair`, the EKS node monitoring agent add-on runs on every node and each managed node group repairs
        the nodes whose conditions it marks. Each of `service_accounts` that sets `aws` gets its IAM role through
        EKS Pod Identity (`identities`: what its ServiceAccount waits for).
        """
        super().__init__(TOKEN, name, {}, opts)
        self.aws = aws.Provider(f"{name}-aws", region=spec.region, opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=self.aws)

        subnets, vpc_id = self._network(name, spec, [pool.zone for _, pool in pools if pool.zone])
        node_role = service_role(f"{name}-node", "ec2.amazonaws.com", policies.NODE_POLICIES, child)

        if spec.adopt:
            found = eks.get_cluster_output(
                name=spec.name, opts=pulumi.InvokeOutputOptions(parent=self, provider=self.aws)
            )
            cluster_name = found.name
            endpoint, ca_data = found.endpoint, found.certificate_authorities[0].data
            issuer = found.identities[0].oidcs[0].issuer
            cluster_sg = found.vpc_config.cluster_security_group_id
            vpc_id = found.vpc_config.vpc_id
            self.cluster: eks.Cluster | None = None
        else:
            cluster_role = service_role(f"{name}-cluster", "eks.amazonaws.com", policies.CLUSTER_POLICIES, child)
            self.cluster = eks.Cluster(
                name,
                name=spec.name,
                role_arn=cluster_role.arn,
                version=spec.kubernetes_version,
                vpc_config={
                    "subnet_ids": list(subnets.all),
                    "endpoint_public_access": spec.endpoint_public_access,
                    "endpoint_private_access": True,
                    "public_access_cidrs": spec.public_access_cidrs if spec.endpoint_public_access else None,
                },
                access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[cluster_role])),
            )
            cluster_name = self.cluster.name
            endpoint, ca_data = self.cluster.endpoint, self.cluster.certificate_authority.data
            issuer = self.cluster.identities[0].oidcs[0].issuer
            cluster_sg = self.cluster.vpc_config.cluster_security_group_id

        self.oidc = iam.OpenIdConnectProvider(
            f"{name}-oidc", url=issuer, client_id_lists=["sts.amazonaws.com"], opts=child
        )
        for index, principal in enumerate(spec.admins):
            entry = eks.AccessEntry(
                f"{name}-admin-{index}", cluster_name=cluster_name, principal_arn=principal, type="STANDARD", opts=child
            )
            eks.AccessPolicyAssociation(
                f"{name}-admin-{index}",
                cluster_name=cluster_name,
                principal_arn=principal,
                policy_arn=policies.CLUSTER_ADMIN_POLICY,
                access_scope={"type": "cluster"},
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[entry])),
            )
        addons = [
            eks.Addon(
                f"{name}-{addon}",
                cluster_name=cluster_name,
                addon_name=addon,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                opts=child,
            )
            for addon in CORE_ADDONS
        ]

        # Pod Identity's agent (a core add-on above) hands each association's role to the pods of its account.
        self.identities: dict[str, list[pulumi.Resource]] = {}
        if any(account.aws is not None for account in service_accounts or []):
            self.identities = EksPodIdentities(
                f"{name}-pod-identity",
                list(service_accounts or []),
                cluster_name=cluster_name,
                opts=pulumi.ResourceOptions(parent=self, providers={"aws": self.aws}, depends_on=addons),
            ).waits

        system = spec.system_pool
        self.system_node_group = eks.NodeGroup(
            f"{name}-system",
            cluster_name=cluster_name,
            node_group_name=f"{spec.name}-system",
            node_role_arn=node_role.arn,
            subnet_ids=list(subnets.all) if subnets.by_zone is None else list(subnets.by_zone.values()),
            instance_types=[system.instance_type or SYSTEM_INSTANCE_TYPE],
            ami_type="AL2023_x86_64_STANDARD",
            scaling_config={
                "min_size": system.min_nodes,
                "max_size": system.max_nodes,
                "desired_size": system.min_nodes,
            },
            labels={"gpu-training/role": "system"},
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[node_role, *addons])),
        )
        # CoreDNS needs nodes to become healthy, so it follows the system node group.
        eks.Addon(
            f"{name}-coredns",
            cluster_name=cluster_name,
            addon_name="coredns",
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.system_node_group])),
        )

        # The node monitoring agent sets the node conditions (AcceleratedHardwareReady from XIDs and its own DCGM
        # host engine, NetworkingReady, KernelReady, StorageReady) that node group auto repair and Karpenter's
        # node repair act on. A DaemonSet: it follows the system nodes as CoreDNS does.
        self.node_monitoring_agent: eks.Addon | None = None
        if repair is not None:
            self.node_monitoring_agent = eks.Addon(
                f"{name}-{EKS_AGENT_ADDON}",
                cluster_name=cluster_name,
                addon_name=EKS_AGENT_ADDON,
                addon_version=repair.addon_version,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.system_node_group])),
            )

        self.karpenter: KarpenterAws | None = None
        if any(pool.provisioner == "karpenter" for _, pool in pools):
            self.karpenter = KarpenterAws(
                f"{name}-karpenter",
                cluster=spec.name,
                region=spec.region,
                cluster_name=cluster_name,
                opts=pulumi.ResourceOptions(parent=self, providers={"aws": self.aws}),
            )
            # Karpenter's node classes find the cluster's security group by this tag.
            aws.ec2.Tag(
                f"{name}-karpenter-discovery",
                resource_id=cluster_sg,
                key=karpenter_names.DISCOVERY_TAG,
                value=spec.name,
                opts=child,
            )

        self.autoscaler: ClusterAutoscalerAws | None = None
        if any(pool.autoscaled for _, pool in pools):
            self.autoscaler = ClusterAutoscalerAws(
                f"{name}-cluster-autoscaler",
                cluster=spec.name,
                cluster_name=cluster_name,
                opts=pulumi.ResourceOptions(parent=self, providers={"aws": self.aws}),
            )

        self.node_pools: dict[str, pulumi.Resource] = {}
        for pool_spec, pool in pools:
            self.node_pools[pool.name] = EksGpuNodePool(
                f"{name}-{pool.name}",
                pool_spec,
                pool,
                cluster_name=cluster_name,
                node_role_arn=node_role.arn,
                subnet_ids=subnets.for_zone(pool.zone),
                vpc_id=vpc_id,
                cluster_security_group_id=cluster_sg,
                cluster=spec.name,
                node_repair=repair.node_repair_config() if repair else None,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    providers={"aws": self.aws},
                    depends_on=[
                        self.system_node_group,
                        *([self.karpenter] if self.karpenter else []),
                        *([self.autoscaler] if self.autoscaler else []),
                    ],
                ),
            )

        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(endpoint, ca_data).apply(
                lambda args: kubeconfig(spec.name, args[0], args[1], spec.region)
            )
        )
        self.provider = k8s.Provider(
            f"{name}-kubernetes",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group]),
        )
        self.storage = AwsStorage(
            f"{name}-storage",
            list(volumes or []),
            vpc_id=vpc_id,
            subnets=subnets,
            node_security_group_id=cluster_sg,
            oidc_provider_arn=self.oidc.arn,
            oidc_issuer=issuer,
            default_zone=next((pool.zone for _, pool in pools if pool.zone), None),
            kubernetes=self.provider,
            cluster_name=cluster_name,
            cluster=spec.name,
            region=spec.region,
            after=[self.system_node_group],
            opts=pulumi.ResourceOptions(parent=self, providers={"aws": self.aws}),
        )
        self.efs_csi_role_arn = self.storage.efs_csi_role_arn
        self.storage_objects = self.storage.objects
        self.oidc_provider_arn = self.oidc.arn
        self.register_outputs({"kubeconfig": self.kubeconfig, "oidcProviderArn": self.oidc_provider_arn})

    def _region_zones(self, region: str, pool_zones: list[str]) -> list[str]:
        """The region's zones for a VPC whose zones config leaves open, asked of the account at deploy
        time: resource names carry the zones, so this invoke is synchronous."""
        offered = aws.get_availability_zones(
            state="available",
            filters=[{"name": "opt-in-status", "values": ["opt-in-not-required"]}],  # no Local Zones
            opts=pulumi.InvokeOptions(parent=self, provider=self.aws),
        )
        try:
            return region_zones(region, list(zip(offered.names, offered.zone_ids, strict=True)), pool_zones)
        except ConfigError as exc:
            raise as_pulumi_error(exc) from None

    def _network(self, name: str, spec: AwsClusterSpec, pool_zones: list[str]) -> tuple[Subnets, pulumi.Input[str]]:
        if spec.new_vpc is not None:
            vpc = Vpc(
                f"{name}-vpc",
                spec.new_vpc.cidr,
                list(spec.availability_zones) or self._region_zones(spec.region, pool_zones),
                spec.name,
                opts=pulumi.ResourceOptions(parent=self, providers={"aws": self.aws}),
            )
            subnets = Subnets(
                by_zone=vpc.private_subnet_ids,
                extra=list(vpc.public_subnet_ids.values()),
                parent=self,
                provider=self.aws,
            )
            return subnets, vpc.vpc_id
        ids = spec.subnet_ids
        if isinstance(ids, dict):
            return Subnets(by_zone=dict(ids), parent=self, provider=self.aws), spec.vpc_id or ""
        return Subnets(listed=list(ids), parent=self, provider=self.aws), spec.vpc_id or ""
