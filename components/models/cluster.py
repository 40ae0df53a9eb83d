"""Where the platform runs: a new EKS or GKE cluster, or an existing Kubernetes cluster."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from components.aws import kubernetes_versions as eks
from components.aws import regions as aws_regions
from components.gcp import kubernetes_versions as gke
from components.gcp import regions as gcp_regions
from components.gcp.subnets import check_cidr
from components.models.base import Count, DnsLabel, Spec, at


def _quoted(value: object) -> object:
    """A version YAML read as a number (1.30 unquoted is the float 1.3) is refused with the quoting fix."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f"{value} is a number to YAML, not a version: write it quoted, as '1.35' (1.30 unquoted reads as 1.3)"
        )
    return value


KubernetesVersion = Annotated[str, BeforeValidator(_quoted), Field(pattern=r"^1\.[0-9]{2}$")]

STANDARD_SUPPORT_AS_OF = "2026-11-24"
"""The day `STANDARD_SUPPORT_ENDS` was read."""
STANDARD_SUPPORT_ENDS: dict[str, dict[str, str]] = {
    "aws": {m.version: m.standard_ends for m in eks.MINORS if m.standard_ends > STANDARD_SUPPORT_AS_OF},
    "gcp": {m.version: m.standard_ends for m in gke.MINORS if m.standard(STANDARD_SUPPORT_AS_OF)},
    "existing": {"1.35": "2027-02-28", "1.36": "2027-06-28"},
}
"""The Kubernetes minors each provider offers in standard (not extended, not paid) support on
`STANDARD_SUPPORT_AS_OF`, and the day that support ends; a stack's minor should be one of them. aws and gcp: from
components/aws/kubernetes_versions.py and components/gcp/kubernetes_versions.py, which say where their dates come
from (EKS's 1.36, whose end date no source read gives, is left out). existing: kubernetes.io/releases: 1.35 end of
life 2027-02-28, 1.36 2027-06-28; 1.34 ended 2026-10-27 and 1.31 2025-10-28."""
DEFAULT_KUBERNETES_VERSION = "1.35"
"""The Kubernetes minor every provider defaults to: the one minor in standard support on all three today
(`STANDARD_SUPPORT_ENDS`), what cluster-toolkit v1.95.0 pins A3 Ultra and A4 clusters to
(examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml and examples/gke-a4/gke-a4.yaml: version_prefix "1.35."), and
the minor of the local control plane `simulate` builds (k8s.io/kubernetes v1.35.4). A cluster made on an
older default (1.31) moves one minor per update: EKS and GKE upgrade a control plane a minor at a time."""


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
    min_nodes: Count = Field(default=2, ge=1)
    """Minimum nodes. Default: 2."""
    max_nodes: Count = Field(default=4, ge=1)
    """Maximum nodes. Default: 4."""


class AwsClusterSpec(Spec):
    """An EKS cluster built with pulumi_aws."""

    provider: Literal["aws"]
    """Discriminator: `aws`."""
    name: DnsLabel
    """The EKS cluster name. Required."""
    kubernetes_version: KubernetesVersion = DEFAULT_KUBERNETES_VERSION
    """Kubernetes minor version. Default: "1.35"."""
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
    allow_unknown: list[str] = Field(default_factory=list)
    """Names this release's lists do not know that the stack vouches for, exactly as written: a region, zone,
    Kubernetes minor or instance type that the cloud added after the release. Render accepts each with a warning and
    the cloud judges it at deploy time. Default: none."""

    @model_validator(mode="after")
    def _vpc_or_subnets(self) -> AwsClusterSpec:
        subnet_zones = list(self.subnet_ids) if isinstance(self.subnet_ids, dict) else []
        named = {"availabilityZones": list(self.availability_zones), "subnetIds": subnet_zones}
        found = aws_regions.cluster_problem(self.region, named, self.allow_unknown)
        if found:
            raise at(*found)
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
        problem = check_cidr(value)
        if problem is not None:
            raise ValueError(problem)
        return value


_GKE_VERSION = re.compile(r"^1\.[0-9]{2}(\.[0-9]+-gke\.[0-9]+)?$")
_RFC3339_UTC = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")
_HH_MM = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


def _gke_version(value: str) -> str:
    if not _GKE_VERSION.match(value):
        raise ValueError(f'\'{value}\' is neither a minor (e.g. "1.35") nor a GKE version (e.g. "1.35.1-gke.1396000")')
    return value


def _utc_time(value: str) -> str:
    # GKE returns times in UTC: any other form would show as a change on every preview.
    if not _RFC3339_UTC.match(value):
        raise ValueError(f"'{value}' is not an RFC 3339 time in UTC, e.g. 2026-12-20T00:00:00Z")
    return value


def _hh_mm(value: str) -> str:
    if not _HH_MM.match(value):
        raise ValueError(f"'{value}' is not a time of day in GMT as HH:MM, e.g. 09:00")
    return value


GkeVersion = Annotated[str, BeforeValidator(_quoted), AfterValidator(_gke_version)]
UtcTime = Annotated[str, AfterValidator(_utc_time)]


class MaintenanceExclusionSpec(Spec):
    """A time when GKE makes no automatic upgrades of the kinds `scope` names."""

    name: str = Field(min_length=1)
    """The exclusion's name. Required."""
    start_time: UtcTime
    """When it starts, RFC 3339 in UTC, e.g. 2026-12-20T00:00:00Z. Required."""
    end_time: UtcTime | None = None
    """When it ends, RFC 3339 in UTC. Default: the end of support of the cluster's minor (NO_UPGRADES needs
    an end time)."""
    scope: Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"] = "NO_MINOR_OR_NODE_UPGRADES"
    """What it holds back: every upgrade, minor ones, or minor and node ones (control-plane patches still
    come). Default: NO_MINOR_OR_NODE_UPGRADES."""

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> MaintenanceExclusionSpec:
        if self.end_time is not None and self.end_time <= self.start_time:
            raise at("endTime", f"{self.end_time} is not after startTime {self.start_time}")
        # GKE ends an exclusion at the end of support only for the minor scopes: a NO_UPGRADES one, which
        # holds security patches back too, is a short freeze with a date (GKE, "Maintenance windows and
        # exclusions", scope of upgrades).
        if self.end_time is None and self.scope == "NO_UPGRADES":
            raise at("endTime", "is required with scope NO_UPGRADES (GKE holds every upgrade back only until a date)")
        return self


class MaintenanceSpec(Spec):
    """When GKE may upgrade the cluster and its nodes, and when it may not."""

    daily_window_start: Annotated[str, AfterValidator(_hh_mm)] = "09:00"
    """The start of the daily maintenance window, HH:MM in GMT (GKE needs a window for exclusions).
    Default: 09:00, as cluster-toolkit's gke-cluster module."""
    exclusions: list[MaintenanceExclusionSpec] | None = Field(default=None, max_length=20)
    """Maintenance exclusions (at most 20, each named once), replacing the default; [] lets upgrades run in
    the window. Default, with GPU pools: one NO_MINOR_OR_NODE_UPGRADES exclusion until the end of support
    of the cluster's minor, so no upgrade drains a GPU node under a running job (node pools in a release
    channel cannot turn auto-upgrade off)."""

    @model_validator(mode="after")
    def _names_are_unique(self) -> MaintenanceSpec:
        seen: set[str] = set()
        for index, exclusion in enumerate(self.exclusions or []):
            if exclusion.name in seen:
                raise at(f"exclusions[{index}].name", f"'{exclusion.name}' names another exclusion too")
            seen.add(exclusion.name)
        return self


_GKE_CLUSTER_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
"""GKE's rule for a cluster name: at most 40 lowercase letters, digits and hyphens, starting with a letter and ending
with a letter or digit. Source: the GKE API's Cluster.name (container/v1, projects.locations.clusters,
https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters), 2026-11-27."""


def _gke_cluster_name(value: str) -> str:
    if not _GKE_CLUSTER_NAME.match(value):
        raise ValueError(
            f"'{value}' is not a GKE cluster name: use at most 40 lowercase letters, digits and '-', starting with a "
            "letter and ending with a letter or digit"
        )
    return value


class GcpClusterSpec(Spec):
    """A GKE Standard cluster built with pulumi_gcp."""

    provider: Literal["gcp"]
    """Discriminator: `gcp`."""
    name: Annotated[str, AfterValidator(_gke_cluster_name)]
    """The GKE cluster name: at most 40 characters, starting with a letter. Required."""
    kubernetes_version: GkeVersion = DEFAULT_KUBERNETES_VERSION
    """Minimum master version: a minor ("1.35"), which GKE takes to its newest patch, or a GKE version
    ("1.35.1-gke.1396000"), which must be at least the least patch of each GPUDirect pool's machine.
    Default: "1.35"."""
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
    maintenance: MaintenanceSpec = Field(default_factory=MaintenanceSpec)
    """The maintenance window and exclusions. Default: a daily window at 09:00 GMT and, with GPU pools, no
    minor or node upgrades until the end of support of the cluster's minor."""
    allow_unknown: list[str] = Field(default_factory=list)
    """Names this release's lists do not know that the stack vouches for, exactly as written: a region, zone,
    Kubernetes minor or machine type that the cloud added after the release. Render accepts each with a warning and
    the cloud judges it at deploy time. Default: none."""

    @model_validator(mode="after")
    def _known_places(self) -> GcpClusterSpec:
        found = gcp_regions.cluster_problem(self.project, self.region, self.zone, self.allow_unknown)
        if found:
            raise at(*found)
        return self


class ExistingClusterSpec(Spec):
    """A Kubernetes cluster that already exists; nothing is created cloud-side."""

    provider: Literal["existing"]
    """Discriminator: `existing`."""
    name: DnsLabel
    """A name for the cluster in outputs and labels. Required."""
    kubernetes_version: KubernetesVersion = DEFAULT_KUBERNETES_VERSION
    """The cluster's Kubernetes minor version, used to validate manifests. Default: "1.35"."""
    kubeconfig: str | None = None
    """Kubeconfig contents or path (store it as a secret). Default: the ambient kubeconfig."""
    context: str | None = None
    """Kubeconfig context. Default: the current context."""


ClusterSpec = Annotated[AwsClusterSpec | GcpClusterSpec | ExistingClusterSpec, Field(discriminator="provider")]
"""The cluster, by `provider`: aws, gcp or existing."""
