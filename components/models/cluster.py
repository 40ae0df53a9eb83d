"""Where the platform runs: a new EKS or GKE cluster, or an existing Kubernetes cluster."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from components.models.base import DnsLabel, Spec, at

KubernetesVersion = Annotated[str, Field(pattern=r"^1\.[0-9]{2}$")]


class VpcSpec(Spec):
    """A new VPC for an EKS cluster."""

    cidr: str = "10.0.0.0/16"
    """The VPC's IPv4 CIDR block. Default: 10.0.0.0/16."""


class SystemPoolSpec(Spec):
    """The untainted node pool that runs the add-ons (operators, schedulers, CSI controllers)."""

    instance_type: str | None = None
    """AWS instance type. Default: m6i.2xlarge on AWS."""
    machine_type: str | None = None
    """GCP machine type. Default: e2-standard-8 on GCP."""
    min_nodes: int = Field(default=2, ge=1)
    """Minimum nodes. Default: 2."""
    max_nodes: int = Field(default=4, ge=1)
    """Maximum nodes. Default: 4."""


class AwsClusterSpec(Spec):
    """An EKS cluster built with pulumi_aws."""

    provider: Literal["aws"]
    """Discriminator: `aws`."""
    name: DnsLabel
    """The EKS cluster name. Required."""
    kubernetes_version: KubernetesVersion = "1.31"
    """Kubernetes minor version. Default: "1.31"."""
    region: str
    """AWS region, e.g. us-east-1. Required."""
    availability_zones: list[str] = Field(default_factory=list)
    """Zones of the new VPC's subnets (at least two, and every pool's zone). Default: every zone of the
    region where EKS can run its control plane, looked up at deploy time, so that a pool in any zone
    has subnets and the cluster's zones never change when pools do."""
    vpc: VpcSpec | None = None
    """The new VPC. Default: a new VPC with cidr 10.0.0.0/16, unless `vpcId` and `subnetIds` (an
    existing VPC) or `adopt` are set."""
    vpc_id: str | None = None
    """An existing VPC. Default: none."""
    subnet_ids: list[str] | dict[str, str] = Field(default_factory=list)
    """Existing private subnets for nodes: a list, or a map zone -> subnet (which lets pools in a zone
    be checked offline). Required with vpcId or adopt. Default: none."""
    endpoint_public_access: bool = True
    """Whether the API server endpoint is public. Default: true."""
    public_access_cidrs: list[str] = Field(default_factory=lambda: ["0.0.0.0/0"])
    """CIDRs allowed to reach a public endpoint. Default: 0.0.0.0/0."""
    adopt: bool = False
    """Adopt an EKS cluster that already exists under `name` instead of creating one; its node
    groups go into `subnetIds`. Default: false."""
    admins: list[str] = Field(default_factory=list)
    """IAM principal ARNs given cluster-admin access entries. Default: none (the creator is admin)."""
    system_pool: SystemPoolSpec = Field(default_factory=SystemPoolSpec)
    """The add-on node group. Default: 2-4 m6i.2xlarge nodes."""

    @model_validator(mode="after")
    def _vpc_or_subnets(self) -> AwsClusterSpec:
        for zone in [*self.availability_zones, *(self.subnet_ids if isinstance(self.subnet_ids, dict) else [])]:
            if not zone.startswith(self.region):
                raise at("availabilityZones", f"zone '{zone}' is not in the region '{self.region}'")
        if self.adopt:
            if self.vpc is not None or not self.subnet_ids:
                raise at("subnetIds", "an adopted cluster's node groups go into existing subnets: set `subnetIds`")
            return self
        if self.vpc is not None and (self.vpc_id or self.subnet_ids):
            raise at("vpc", "set either `vpc` (a new VPC) or `vpcId` with `subnetIds` (an existing one), not both")
        if bool(self.vpc_id) != bool(self.subnet_ids):
            missing = "subnetIds" if self.vpc_id else "vpcId"
            raise at(missing, "an existing VPC is named by `vpcId` and its node subnets `subnetIds`: set both")
        if self.new_vpc is not None and len(self.availability_zones) == 1:
            raise at(
                "availabilityZones",
                "a new VPC needs at least two zones of the region (EKS requires two); "
                "name another, or drop availabilityZones to use every zone of the region",
            )
        return self

    @property
    def new_vpc(self) -> VpcSpec | None:
        """The VPC this stack creates: `vpc`, or the default one when no existing network is named."""
        if self.vpc is not None:
            return self.vpc
        return None if self.adopt or self.vpc_id or self.subnet_ids else VpcSpec()

    def zones(self) -> list[str] | None:
        """The zones nodes can live in, when known offline (a new VPC's default zones are not)."""
        if self.new_vpc is not None:
            return list(self.availability_zones) or None
        return list(self.subnet_ids) if isinstance(self.subnet_ids, dict) else None


class GpuNetworksSpec(Spec):
    """The subnets of GKE GPUDirect pools' extra NICs (a3-highgpu-8g, a3-megagpu-8g, a3-ultragpu-8g, a4-highgpu-8g)."""

    cidr: str = "192.168.0.0/16"
    """The IPv4 range each GPU network's subnet is carved from, a /21 apiece (24 of them, /16 or larger);
    it must not overlap the cluster's network. Default: 192.168.0.0/16."""

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        # Imported here: gpudirect imports the pool model, which imports this package.
        from components.gpudirect import check_cidr

        problem = check_cidr(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class GcpClusterSpec(Spec):
    """A GKE Standard cluster built with pulumi_gcp."""

    provider: Literal["gcp"]
    """Discriminator: `gcp`."""
    name: DnsLabel
    """The GKE cluster name. Required."""
    kubernetes_version: KubernetesVersion = "1.31"
    """Minimum master version (minor). Default: "1.31"."""
    project: str
    """GCP project id. Required."""
    region: str
    """GCP region, e.g. us-central1. Required."""
    zone: str | None = None
    """Make the cluster zonal in this zone. Default: regional."""
    network: str = "default"
    """VPC network name. Default: default."""
    subnetwork: str | None = None
    """Subnetwork name. Default: the network's auto subnet."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    """GKE release channel. Default: REGULAR."""
    system_pool: SystemPoolSpec = Field(default_factory=SystemPoolSpec)
    """The add-on node pool. Default: 2-4 e2-standard-8 nodes."""
    gpu_networks: GpuNetworksSpec = Field(default_factory=GpuNetworksSpec)
    """The VPCs and subnets made for GPUDirect pools' extra NICs. Default: subnets from 192.168.0.0/16."""


class ExistingClusterSpec(Spec):
    """A Kubernetes cluster that already exists; nothing is created cloud-side."""

    provider: Literal["existing"]
    """Discriminator: `existing`."""
    name: DnsLabel
    """A name for the cluster in outputs and labels. Required."""
    kubernetes_version: KubernetesVersion = "1.31"
    """The cluster's Kubernetes minor version, used to validate manifests. Default: "1.31"."""
    kubeconfig: str | None = None
    """Kubeconfig contents or path (store it as a secret). Default: the ambient kubeconfig."""
    context: str | None = None
    """Kubeconfig context. Default: the current context."""


ClusterSpec = Annotated[AwsClusterSpec | GcpClusterSpec | ExistingClusterSpec, Field(discriminator="provider")]
"""The cluster, by `provider`: aws, gcp or existing."""
