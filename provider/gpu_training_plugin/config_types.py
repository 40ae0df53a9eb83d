"""The config models as TypedDicts and enums, for the schema analyzer. GENERATED: do not edit.

Made by `python provider/gpu_training_plugin/generate.py` from components/models (and the
TrainingJob component's own inputs); tests/provider checks it is current.
"""

# ruff: noqa: E501, D101
from enum import IntEnum, StrEnum
from typing import Any, NotRequired, TypedDict

import pulumi


class VpcSpec(TypedDict):
    """A new VPC for an EKS cluster."""

    # from components.models.cluster.VpcSpec
    cidr: NotRequired[str]
    """The VPC's IPv4 CIDR block. Default: 10.0.0.0/16."""


class SystemPoolSpec(TypedDict):
    """The untainted node pool that runs the add-ons (operators, schedulers, CSI controllers)."""

    # from components.models.cluster.SystemPoolSpec
    instance_type: NotRequired[str]
    """AWS instance type. Default: m6i.2xlarge on AWS."""
    machine_type: NotRequired[str]
    """GCP machine type. Default: e2-standard-8 on GCP."""
    min_nodes: NotRequired[int]
    """Minimum nodes. Default: 2."""
    max_nodes: NotRequired[int]
    """Maximum nodes. Default: 4."""


class GcpClusterSpecReleaseChannel(StrEnum):
    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"


class GpuNetworksSpec(TypedDict):
    """The subnets of GKE GPUDirect pools' extra NICs (a3-highgpu-8g, a3-megagpu-8g, a3-ultragpu-8g, a4-highgpu-8g)."""

    # from components.models.cluster.GpuNetworksSpec
    cidr: NotRequired[str]
    """The IPv4 range each GPU network's subnet is carved from, a /21 apiece (24 of them, /16 or larger);
it must not overlap the cluster's network. Default: 192.168.0.0/16."""


class MaintenanceExclusionSpecScope(StrEnum):
    NO_UPGRADES = "NO_UPGRADES"
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"


class MaintenanceExclusionSpec(TypedDict):
    """A time when GKE makes no automatic upgrades of the kinds `scope` names."""

    # from components.models.cluster.MaintenanceExclusionSpec
    name: str
    """The exclusion's name. Required."""
    start_time: str
    """When it starts, RFC 3339 in UTC, e.g. 2026-12-20T00:00:00Z. Required."""
    end_time: NotRequired[str]
    """When it ends, RFC 3339 in UTC. Default: the end of support of the cluster's minor (NO_UPGRADES needs
an end time)."""
    scope: NotRequired[MaintenanceExclusionSpecScope]
    """What it holds back: every upgrade, minor ones, or minor and node ones (control-plane patches still
come). Default: NO_MINOR_OR_NODE_UPGRADES."""


class MaintenanceSpec(TypedDict):
    """When GKE may upgrade the cluster and its nodes, and when it may not."""

    # from components.models.cluster.MaintenanceSpec
    daily_window_start: NotRequired[str]
    """The start of the daily maintenance window, HH:MM in GMT (GKE needs a window for exclusions).
Default: 09:00, as cluster-toolkit's gke-cluster module."""
    exclusions: NotRequired[list[MaintenanceExclusionSpec]]
    """Maintenance exclusions (at most 20, each named once), replacing the default; [] lets upgrades run in
the window. Default, with GPU pools: one NO_MINOR_OR_NODE_UPGRADES exclusion until the end of support
of the cluster's minor, so no upgrade drains a GPU node under a running job (node pools in a release
channel cannot turn auto-upgrade off)."""


class ClusterProvider(StrEnum):
    """Where the platform runs."""

    AWS = "aws"
    GCP = "gcp"
    EXISTING = "existing"


class ClusterSpec(TypedDict):
    "One of: AwsClusterSpec, GcpClusterSpec, ExistingClusterSpec, chosen by `provider`.\naws: An EKS cluster built with pulumi_aws.\ngcp: A GKE Standard cluster built with pulumi_gcp.\nexisting: A Kubernetes cluster that already exists; nothing is created cloud-side."

    # from components.models.cluster.AwsClusterSpec, components.models.cluster.GcpClusterSpec, components.models.cluster.ExistingClusterSpec
    provider: ClusterProvider
    """aws (EKS) | gcp (GKE) | existing (a cluster that exists). Required."""
    name: str
    """aws: The EKS cluster name. Required.
gcp: The GKE cluster name: at most 40 characters, starting with a letter. Required.
existing: A name for the cluster in outputs and labels. Required."""
    kubernetes_version: NotRequired[str]
    """aws: Kubernetes minor version. Default: "1.35".
gcp: Minimum master version: a minor ("1.35"), which GKE takes to its newest patch, or a GKE version
("1.35.1-gke.1396000"), which must be at least the least patch of each GPUDirect pool's machine.
Default: "1.35".
existing: The cluster's Kubernetes minor version, used to validate manifests. Default: "1.35"."""
    region: NotRequired[str]
    """aws: AWS region, e.g. us-east-1. Required.
gcp: GCP region, e.g. us-central1. Required."""
    availability_zones: NotRequired[list[str]]
    """(aws only) Zones of the new VPC's subnets (at least two, and every pool's zone). Default: every zone of the
region where EKS can run its control plane, looked up at deploy time, so that a pool in any zone
has subnets and the cluster's zones never change when pools do."""
    vpc: NotRequired[VpcSpec]
    """(aws only) The new VPC. Default: a new VPC with cidr 10.0.0.0/16, unless `vpcId` and `subnetIds` (an
existing VPC) or `adopt` are set."""
    vpc_id: NotRequired[str]
    """(aws only) An existing VPC. Default: none."""
    subnet_ids: NotRequired[Any]
    """(aws only) Existing private subnets for nodes: a list, or a map zone -> subnet (which lets pools in a zone
be checked offline). Required with vpcId or adopt. Default: none."""
    endpoint_public_access: NotRequired[bool]
    """(aws only) Whether the API server endpoint is public. Default: true."""
    public_access_cidrs: NotRequired[list[str]]
    """(aws only) CIDRs allowed to reach a public endpoint. Default: 0.0.0.0/0."""
    adopt: NotRequired[bool]
    """(aws only) Adopt an EKS cluster that already exists under `name` instead of creating one; its node
groups go into `subnetIds`. Default: false."""
    admins: NotRequired[list[str]]
    """(aws only) IAM principal ARNs given cluster-admin access entries. Default: none (the creator is admin)."""
    system_pool: NotRequired[SystemPoolSpec]
    """aws: The add-on node group. Default: 2-4 m6i.2xlarge nodes.
gcp: The add-on node pool. Default: 2-4 e2-standard-8 nodes."""
    allow_unknown: NotRequired[list[str]]
    """aws: Names this release's lists do not know that the stack vouches for, exactly as written: a region, zone,
Kubernetes minor or instance type that the cloud added after the release. Render accepts each with a warning and
the cloud judges it at deploy time. Default: none.
gcp: Names this release's lists do not know that the stack vouches for, exactly as written: a region, zone,
Kubernetes minor or machine type that the cloud added after the release. Render accepts each with a warning and
the cloud judges it at deploy time. Default: none."""
    project: NotRequired[str]
    """(gcp only) GCP project id. Required."""
    zone: NotRequired[str]
    """(gcp only) Make the cluster zonal in this zone. Default: regional."""
    network: NotRequired[str]
    """(gcp only) VPC network name. Default: default."""
    subnetwork: NotRequired[str]
    """(gcp only) Subnetwork name. Default: the network's auto subnet."""
    release_channel: NotRequired[GcpClusterSpecReleaseChannel]
    """(gcp only) GKE release channel. Default: REGULAR."""
    gpu_networks: NotRequired[GpuNetworksSpec]
    """(gcp only) The VPCs and subnets made for GPUDirect pools' extra NICs. Default: subnets from 192.168.0.0/16."""
    maintenance: NotRequired[MaintenanceSpec]
    """(gcp only) The maintenance window and exclusions. Default: a daily window at 09:00 GMT and, with GPU pools, no
minor or node upgrades until the end of support of the cluster's minor."""
    kubeconfig: NotRequired[str]
    """(existing only) Kubeconfig contents or path (store it as a secret). Default: the ambient kubeconfig."""
    context: NotRequired[str]
    """(existing only) Kubeconfig context. Default: the current context."""


class AllocatableSpec(TypedDict):
    """What one node of the pool advertises as allocatable, for a machine the catalog does not know."""

    # from components.models.nodepool.AllocatableSpec
    cpu: NotRequired[str]
    """The node's allocatable cpu, e.g. "190" or 190500m. Default: from the catalog for a known machine; else
unknown (render checks no pod's cpu against it; simulate assumes 64 and says so)."""
    memory: NotRequired[str]
    """The node's allocatable memory, e.g. 1900Gi. Default: from the catalog for a known machine; else unknown
(render checks no pod's memory against it; simulate assumes 512Gi and says so)."""


class TaintEffect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


class Taint(TypedDict):
    """A node taint; jobs on the pool get the matching toleration."""

    # from components.models.nodepool.Taint
    key: str
    """Taint key. Required."""
    value: NotRequired[str]
    """Taint value. Default: empty."""
    effect: NotRequired[TaintEffect]
    """Taint effect. Default: NoSchedule."""


class NodePoolSpecPlacement(StrEnum):
    CLUSTER = "cluster"
    COMPACT = "compact"
    NONE = "none"


class CapacitySpecType(StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVATION = "reservation"
    CAPACITY_BLOCK = "capacity-block"
    FLEX_START = "flex-start"


class CapacitySpec(TypedDict):
    """How the pool's nodes are bought."""

    # from components.models.nodepool.CapacitySpec
    type: NotRequired[CapacitySpecType]
    """on-demand | spot | reservation (AWS ODCR or GCP specific reservation) | capacity-block (AWS
Capacity Block for ML) | flex-start (GCP DWS). Default: on-demand."""
    reservation_id: NotRequired[str]
    """The reservation (ODCR id, Capacity Block id, or GCP reservation name). Required for
reservation and capacity-block; not allowed otherwise. Default: none."""
    end_time: NotRequired[str]
    """When a Capacity Block ends, with its time zone (e.g. 2026-12-01T11:30:00Z). A node group pool
scales to zero an hour before it, so pods drain and checkpoint before EC2 reclaims the instances
(from 30 minutes before the end); Karpenter learns the end from EC2 itself. Default: none."""


class QueuedProvisioningSpec(TypedDict):
    "Capacity provisioned on demand and all at once: Kueue admits a job on the pool only once the cluster's\nautoscaler has provisioned every node the job's GPU pods need (a ProvisioningRequest), so a multi-node job never\nholds half its nodes while it waits for the rest."

    # from components.models.nodepool.QueuedProvisioningSpec
    enabled: NotRequired[bool]
    """Admit the pool's jobs through a ProvisioningRequest admission check. `queuedProvisioning: true` is short for
`{enabled: true}`. Default: false."""
    class_name: NotRequired[str]
    """The ProvisioningRequest class the cluster's autoscaler serves. Default: queued-provisioning.gke.io on GKE
(DWS flex-start with queued provisioning), best-effort-atomic-scale-up.autoscaling.x-k8s.io with the Cluster
Autoscaler (EKS node group pools); required on existing clusters, where the stack cannot know which class
their autoscaler serves."""
    retries: NotRequired[int]
    """How many times Kueue asks again after a request fails (or its booking expires before admission), backing
off 60 s doubling up to 30 minutes; after the last the job is deactivated. 0 asks once. Default: 3 (Kueue's)."""


class Fabric(StrEnum):
    "How GPUs talk across nodes: EFA (AWS), InfiniBand or RoCE through Multus (existing clusters),\nGKE GPUDirect (tcpx, tcpxo, rdma), or TCP sockets on eth0."

    EFA = "efa"
    INFINIBAND = "infiniband"
    ROCE = "roce"
    TCP = "tcp"
    TCPX = "tcpx"
    TCPXO = "tcpxo"
    RDMA = "rdma"


class NodePoolSpecAcceleratorNetworkProfile(StrEnum):
    AUTO = "auto"
    NONE = "none"


class NodePoolSpecGpuDriverVersion(StrEnum):
    DEFAULT = "DEFAULT"
    LATEST = "LATEST"
    INSTALLATION_DISABLED = "INSTALLATION_DISABLED"


class NodePoolSpecProvisioner(StrEnum):
    KARPENTER = "karpenter"
    NODEGROUP = "nodegroup"


class NodePoolSpecLocalStorage(StrEnum):
    RAID0 = "raid0"
    NONE = "none"


class RailType(StrEnum):
    MACVLAN = "macvlan"
    SRIOV = "sriov"
    IB_SRIOV = "ib-sriov"
    HOST_DEVICE = "host-device"
    IPOIB = "ipoib"


class RailsSpec(TypedDict):
    "A node's GPU rails, declared once: one NetworkAttachmentDefinition per rail, each on its own subnet,\nevery one attached to every worker. Rails that state only count, devices and speedGbps (`rails: 8`)\nmake no NADs: the pool's `networks` list them by hand, or (InfiniBand) workers reach the HCAs through\nthe RDMA shared device plugin alone."

    # from components.models.network.RailsSpec
    count: int
    """Rails per node: the RDMA NICs (or ports) for GPU traffic, one per GPU on HGX / DGX machines. Required."""
    type: NotRequired[RailType]
    """How a pod attaches each rail: macvlan, sriov or host-device on a roce pool; ipoib, ib-sriov or
host-device on an infiniband pool. Default: macvlan (roce), ipoib (infiniband)."""
    interfaces: NotRequired[list[str]]
    """Each rail's host interface, in rail order: a list, or a pattern in which {i} counts rails from 0 and
{n} from 1 ("ens{n}f0np0" gives ens1f0np0 … ens8f0np0). The macvlan / ipoib parent or the host-device
device, and what the RDMA shared device plugin exposes. Required for macvlan, ipoib and host-device rails."""
    devices: NotRequired[list[str]]
    """Each rail's RDMA device, in rail order: a list or a pattern ("mlx5_{i}"). NCCL_IB_HCA then names
exactly these (=mlx5_0,mlx5_1,…), never a storage or front-end port. Default: none, and NCCL_IB_HCA
falls back to network.rdma.hca (render warns)."""
    resource_name: NotRequired[list[str]]
    """sriov / ib-sriov: each rail's VF resource: a list, a pattern ("nvidia.com/rail_{i}"), or one name every
rail draws from. Required for those types."""
    range: NotRequired[str]
    """The subnet the rails' subnets are carved from, e.g. 192.168.0.0/16: rail i gets its i-th subnet of
`prefixLength` (whereabouts IPAM). Required when the rails make their NADs."""
    prefix_length: NotRequired[int]
    """Each rail's subnet size, as a prefix length. Default: 24 for an IPv4 range, 64 for IPv6."""
    speed_gbps: NotRequired[float]
    """One rail's line rate in Gbps (400 for ConnectX-7 NDR / 400GbE); the pool's fabric bandwidth is
count x this. Default: unknown."""
    namespace: NotRequired[str]
    """Namespace of the rails' NADs. Default: training."""
    mtu: NotRequired[int]
    """Each rail interface's MTU. Default: the plugin's."""
    pkey: NotRequired[str]
    """ib-sriov: InfiniBand partition key, e.g. 0x00FF. Default: none."""
    vlan: NotRequired[int]
    """sriov: VLAN id. Default: none."""


class NcclTest(StrEnum):
    """The NCCL-tests collectives a fabric check can run."""

    ALL_REDUCE_PERF = "all_reduce_perf"
    ALL_GATHER_PERF = "all_gather_perf"
    REDUCE_SCATTER_PERF = "reduce_scatter_perf"
    ALLTOALL_PERF = "alltoall_perf"


class NcclSizesSpec(TypedDict):
    """The message sizes of an NCCL test, in nccl-tests notation (8, 64K, 1M, 8G)."""

    # from components.models.nodepool.NcclSizesSpec
    min: NotRequired[str]
    """Smallest message. Default: 1M."""
    max: NotRequired[str]
    """Largest message, where the floor applies. Default: 8G on GPUs with 40 GiB or more, else 1G."""
    factor: NotRequired[int]
    """Each size is the previous one times this. Default: 2."""


class FabricCheckSpec(TypedDict):
    "The pool's fabric acceptance gate: NCCL tests across its nodes at deploy time, which fail\n`pulumi up` below the expected bus bandwidth or on a fallback to sockets."

    # from components.models.nodepool.FabricCheckSpec
    enabled: NotRequired[bool]
    """Run the check. Default: on for a pool with a fast fabric (efa, infiniband, roce, tcpx, tcpxo, rdma):
at deploy time on a pool that keeps at least `nodes` nodes (minNodes), which `pulumi up` waits for; else on
scale-up, once the pool first has `nodes` checked nodes (a check never scales a pool up by itself)."""
    nodes: NotRequired[int]
    """Nodes the test spans, all GPUs of each. At most maxNodes; above minNodes, the check runs on scale-up.
Default: 2."""
    min_bus_bandwidth: NotRequired[float]
    """The floor, in GB/s of bus bandwidth at the largest message size. Default: the catalog's figure
for the machine and fabric, else half the fabric's nominal bandwidth; required where neither is
known."""
    test: NotRequired[NcclTest]
    """all_reduce_perf | all_gather_perf | reduce_scatter_perf | alltoall_perf. Default: all_reduce_perf."""
    sizes: NotRequired[NcclSizesSpec]
    """The message sizes: `{min, max, factor}`. Default: 1M to 8G (1G on GPUs under 40 GiB), doubling."""
    image: NotRequired[str]
    """The NCCL-tests image (with mpirun, sshd and the fabric's NCCL plugin). Default: a pinned public
image for the pool's fabric."""
    timeout_minutes: NotRequired[int]
    """How long the gate may take, image pulls included, before it fails. Default: 30."""


class DcgmLevel(IntEnum):
    V1 = 1
    V2 = 2
    V3 = 3
    V4 = 4


class NodeCheckSpec(TypedDict):
    "Each node's check when it joins the pool: it comes up tainted, and takes work only once its GPUs, its\nfabric NICs and its NVLink pass."

    # from components.models.nodepool.NodeCheckSpec
    enabled: NotRequired[bool]
    """Check every new node before it takes work. Default: on."""
    dcgm_level: NotRequired[DcgmLevel]
    """The DCGM diagnostic level: 1 (seconds: deployment and software), 2 (about 2 minutes: adds PCIe, memory
and a short stress), 3 (about 30 minutes), 4 (an hour or more). Default: 2."""
    min_bus_bandwidth: NotRequired[float]
    """The single-node all_reduce floor across the node's GPUs, in GB/s of bus bandwidth at the largest
message size. Default: derived from the GPU's NVLink bandwidth (catalog); none on GPUs without NVLink,
where the result is recorded but not judged."""
    image: NotRequired[str]
    """The NCCL-tests image of the NVLink test. Default: the fabric check's image for the pool's fabric."""
    dcgm_image: NotRequired[str]
    """The DCGM image the diagnostics run in. Default: NVIDIA's pinned DCGM image."""
    timeout_minutes: NotRequired[int]
    """How long one node's check may take before it counts as failed. Default: 60."""


class NodePoolSpec(TypedDict):
    """A pool of identical GPU nodes."""

    # from components.models.nodepool.NodePoolSpec
    name: str
    """Pool name; jobs refer to it as `nodePool`. Required."""
    instance_type: NotRequired[str]
    """AWS instance type, e.g. p5.48xlarge. Required on AWS."""
    machine_type: NotRequired[str]
    """GCP machine type, e.g. a3-highgpu-8g. Required on GCP."""
    accelerator_type: NotRequired[str]
    """GCP accelerator type. Default: from the catalog for the machine type."""
    gpus_per_node: NotRequired[int]
    """GPUs per node. Required on existing clusters; elsewhere derived from the catalog, and a
stated value that contradicts it is an error. Default: from the catalog."""
    gpu_model: NotRequired[str]
    """GPU model, for summaries. Default: from the catalog."""
    allocatable: NotRequired[AllocatableSpec]
    """What one node advertises as allocatable: `{cpu, memory}`. For a machine the catalog does not know (an existing
cluster's pool without instanceType, or a type not catalogued); the catalog's figures are used otherwise, and on
an existing cluster a stated figure replaces them (its kubelet's reservations are its own). Default: the
catalog's, else unknown."""
    min_nodes: NotRequired[int]
    """Minimum nodes. Default: 0."""
    max_nodes: NotRequired[int]
    """Maximum nodes; a job's `nodes` may not exceed it. Default: the most nodes a job of this stack
asks of the pool (its `nodes`, or `elastic.maxNodes`), and at least minNodes and 1."""
    zone: NotRequired[str]
    """The zone the pool lives in. Required with EFA or a placement group. Default: none."""
    taints: NotRequired[list[Taint]]
    """Node taints. Default: nvidia.com/gpu=true:NoSchedule (nvidia.com/gpu=present:NoSchedule on
GKE, the taint GKE sets itself)."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels. Default: none."""
    placement: NotRequired[NodePoolSpecPlacement]
    """cluster (AWS cluster placement group) | compact (GCP compact placement) | none. On GKE rack-scale pools
(A4X, A4X Max) compact is a "1x72" workload policy, which keeps the pool in one NVLink sub-block of 18
machines. Default: cluster on AWS, compact on GCP, none on existing clusters (none on reserved capacity,
except GKE rack-scale pools with a zone, which get compact)."""
    capacity: NotRequired[CapacitySpec]
    """How nodes are bought. Default: on-demand; flex-start on GKE pools with queuedProvisioning."""
    queued_provisioning: NotRequired[QueuedProvisioningSpec]
    """Capacity provisioned on demand, all at once, before Kueue admits a job (`{enabled, className, retries}`, or
`true`): GKE's DWS flex-start with queued provisioning, or the Cluster Autoscaler's ProvisioningRequests on EKS
node group pools. Needs scheduler.type kueue. Default: off."""
    fabric: NotRequired[Fabric]
    """efa | infiniband | roce | tcpx | tcpxo | rdma | tcp. Default: the machine's fastest: efa for an
AWS type with EFA; on GKE tcpx for a3-highgpu-8g, tcpxo for a3-megagpu-8g, rdma for a3-ultragpu-8g
and a4-highgpu-8g; else tcp, which is also the explicit opt-out."""
    accelerator_network_profile: NotRequired[NodePoolSpecAcceleratorNetworkProfile]
    """GKE rdma pools: auto (GKE makes the RDMA networks itself and pods claim the NICs through DRA,
device class mrdma.google.com; GKE 1.34.1-gke.1829001 and later) or none (this stack makes the
RoCE VPC, its subnets and the Network objects). Default: auto when cluster.kubernetesVersion is
1.35 or later, else none (on 1.34, set auto once the cluster runs 1.34.1-gke.1829001 or later). Not
allowed on bare metal (A4X Max), whose NICs are on the metal RoCE network this stack attaches."""
    networks: NotRequired[list[str]]
    """NetworkAttachmentDefinitions a pod on this pool attaches (infiniband / roce). Default: none."""
    node_selector: NotRequired[dict[str, str]]
    """Existing clusters: the labels that find this pool's nodes. Default, when the stack has this one
pool and installs the GPU Operator: nvidia.com/gpu.present=true, the label its GPU Feature
Discovery puts on every GPU node; required otherwise."""
    disk_size_gb: NotRequired[int]
    """Root disk size in GiB, at most 16384 (an EBS gp3 volume's largest, as Karpenter's EC2NodeClass volumeSize
and the EBS user guide state it; a larger root disk is no GPU node's need on any provider). Default: 500."""
    gpu_driver_version: NotRequired[NodePoolSpecGpuDriverVersion]
    """GKE-managed driver version. Default: DEFAULT."""
    provisioner: NotRequired[NodePoolSpecProvisioner]
    """EKS: what makes the pool's nodes. karpenter (a NodePool and EC2NodeClass: nodes appear when
pods need them and go when empty) or nodegroup (a managed node group, scaled between minNodes
and maxNodes by the Cluster Autoscaler). Default: karpenter for pools that scale from zero
(minNodes 0), nodegroup for pools that keep minNodes nodes warm."""
    local_storage: NotRequired[NodePoolSpecLocalStorage]
    """The machine's local NVMe or SSD disks: raid0 (one RAID0 array for the container runtime, images
and pods' ephemeral storage) or none. Default: raid0 when the catalog says the machine has
local disks, else none."""
    rails: NotRequired[RailsSpec]
    """roce / infiniband: the node's GPU rails, declared once. `{count: 8, interfaces: "ens{n}f0np0",
devices: "mlx5_{i}", range: 192.168.0.0/16, speedGbps: 400}` makes one NAD per rail (<pool>-rail-0,
<pool>-rail-1, ...) and attaches them all; `rails: 8` (or count, devices and speedGbps alone) only
states them, for a pool that lists its rails' NADs by hand in `networks`. Default: none."""
    traffic_class: NotRequired[int]
    """roce / infiniband: NCCL_IB_TC, the traffic class NCCL's RDMA traffic carries, matching the
fabric's lossless (PFC / ECN) class: DSCP x 4, plus the ECN bits (e.g. 106 for DSCP 26). Default:
unset (NCCL's 0)."""
    service_level: NotRequired[int]
    """roce / infiniband: NCCL_IB_SL, the InfiniBand service level (the priority on RoCE) of NCCL's
traffic. Default: unset (NCCL's 0)."""
    nvlink_domain_nodes: NotRequired[int]
    """Rack-scale NVLink pools (GB200 / GB300): the most nodes one NVLink domain of this pool joins, e.g. 9
for AWS's u-p6e-gb200x36 UltraServer. Default: the whole rack the GPU model comes in (18 for NVL72)."""
    fabric_check: NotRequired[FabricCheckSpec]
    """The fabric acceptance gate: `{enabled, nodes, minBusBandwidth, test, minBytes, maxBytes, image}`.
Default: on for a fast fabric with minNodes of 2 or more, at the catalog's floor."""
    node_check: NotRequired[NodeCheckSpec]
    """Each node's check at join: `{enabled, dcgmLevel, minBusBandwidth, image, dcgmImage, timeoutMinutes}`.
Default: on, DCGM level 2, the NVLink floor derived from the catalog."""


class MultusSpec(TypedDict):
    """The Multus meta-plugin."""

    # from components.models.network.MultusSpec
    enabled: NotRequired[bool]
    """Install Multus (thick plugin). Default: true."""


class NetworkType(StrEnum):
    MACVLAN = "macvlan"
    SRIOV = "sriov"
    IB_SRIOV = "ib-sriov"
    HOST_DEVICE = "host-device"
    IPOIB = "ipoib"


class NetworkSpecMode(StrEnum):
    BRIDGE = "bridge"
    PRIVATE = "private"
    VEPA = "vepa"
    PASSTHRU = "passthru"


class IpamSpecType(StrEnum):
    WHEREABOUTS = "whereabouts"
    HOST_LOCAL = "host-local"


class IpamSpec(TypedDict):
    """IP address management for a secondary network."""

    # from components.models.network.IpamSpec
    type: NotRequired[IpamSpecType]
    """whereabouts (cluster-wide, no collisions across nodes) | host-local (per node; give each
node its own range). Default: whereabouts."""
    range: str
    """The subnet in CIDR form, e.g. 192.168.10.0/24. Required."""
    range_start: NotRequired[str]
    """First address to hand out. Default: the subnet's first."""
    range_end: NotRequired[str]
    """Last address to hand out. Default: the subnet's last."""
    gateway: NotRequired[str]
    """Gateway address. Default: none."""
    exclude: NotRequired[list[str]]
    """whereabouts: CIDRs never handed out. Default: none."""
    routes: NotRequired[list[str]]
    """Destination CIDRs routed over this network. Default: none."""


class NetworkSpec(TypedDict):
    """A NetworkAttachmentDefinition: a secondary interface pods attach through Multus."""

    # from components.models.network.NetworkSpec
    name: str
    """NAD name; pools list it in `networks`. Required."""
    namespace: NotRequired[str]
    """Namespace of the NAD (jobs attach NADs of their own namespace). Default: training."""
    type: NetworkType
    """macvlan | sriov | ib-sriov | host-device | ipoib (InfiniBand: an IPoIB child of `master`, with the
RDMA shared device plugin). Required."""
    master: NotRequired[str]
    """macvlan / ipoib: the host interface, e.g. enp94s0f0 (macvlan) or ibs1 (ipoib). Required for those."""
    mode: NotRequired[NetworkSpecMode]
    """macvlan mode. Default: bridge."""
    resource_name: NotRequired[str]
    """sriov / ib-sriov: the device-plugin resource of the VFs, e.g. nvidia.com/sriov_rdma_vf.
Required for those types; pods request one."""
    device: NotRequired[str]
    """host-device: the host device or interface, e.g. mlx5_0. Required for host-device."""
    pkey: NotRequired[str]
    """ib-sriov: InfiniBand partition key, e.g. 0x00FF. Default: none."""
    vlan: NotRequired[int]
    """sriov: VLAN id. Default: none."""
    mtu: NotRequired[int]
    """Interface MTU. Default: the plugin's."""
    ipam: NotRequired[IpamSpec]
    """Address management. Required, except for ipoib, where the default is none: the pod's IPoIB
interface then gets no address, and NCCL bootstraps on eth0."""
    interface: NotRequired[str]
    """The interface name the pod sees; NCCL_SOCKET_IFNAME follows it. Default: net1 for a pool's
first network, net2 for the second, and so on."""
    rdma_device: NotRequired[str]
    """The RDMA device behind this network as pods see it, e.g. mlx5_0; when every network a pool attaches
names one, NCCL_IB_HCA lists exactly those. Default: the host-device `device` when it is an mlx5_*
device, else none."""


class RdmaSpec(TypedDict):
    """How pods get RDMA devices on InfiniBand and RoCE pools."""

    # from components.models.network.RdmaSpec
    shared_device_plugin: NotRequired[bool]
    """Install the RDMA shared device plugin and have pods request its resource. Default: true."""
    resource_name: NotRequired[str]
    """The RDMA resource pods request. Default: rdma/rdma_shared_device_a."""
    hca: NotRequired[str]
    """NCCL_IB_HCA for pools whose rails or networks name no RDMA devices: a prefix (mlx5), an exact list
(=mlx5_0,mlx5_3) or an exclusion (^mlx5_bond_0). A bare prefix also matches storage and front-end
ports, so render warns about it. Default: mlx5."""
    interfaces: NotRequired[list[str]]
    """Host interfaces whose RDMA devices the shared plugin exposes. Default: the NAD masters."""


class SriovPolicySpecLinkType(StrEnum):
    ETH = "eth"
    IB = "ib"


class SriovPolicySpec(TypedDict):
    """An SriovNetworkNodePolicy: which physical functions get how many VFs, exposed as which resource."""

    # from components.models.network.SriovPolicySpec
    name: str
    """Policy name. Required."""
    resource_name: str
    """The VF resource name, without prefix (e.g. sriov_rdma_vf). Required."""
    pf_names: list[str]
    """Physical function interfaces, e.g. [ens1f0]. Required."""
    num_vfs: int
    """VFs per physical function. Required."""
    link_type: NotRequired[SriovPolicySpecLinkType]
    """eth (RoCE) | ib (InfiniBand). Default: eth."""
    is_rdma: NotRequired[bool]
    """Expose the VFs' RDMA devices. Default: true."""
    node_selector: NotRequired[dict[str, str]]
    """Nodes the policy configures. Default: SR-IOV capable nodes (NFD label)."""


class SriovSpec(TypedDict):
    """The SR-IOV Network Operator."""

    # from components.models.network.SriovSpec
    operator: NotRequired[bool]
    """Install the SR-IOV Network Operator. Default: false."""
    resource_prefix: NotRequired[str]
    """Prefix of the VF resources the operator advertises. Default: openshift.io."""
    policies: NotRequired[list[SriovPolicySpec]]
    """SriovNetworkNodePolicies (need the operator). Default: none."""


class EfaSpecMode(StrEnum):
    DEVICE_PLUGIN = "device-plugin"
    DRA = "dra"


class EfaSpec(TypedDict):
    """How pods on EFA pools get their EFA devices (EKS)."""

    # from components.models.network.EfaSpec
    mode: NotRequired[EfaSpecMode]
    """device-plugin (the AWS EFA device plugin; pods request vpc.amazonaws.com/efa) or dra (the AWS EFA DRA
driver, aws-dranet; pods claim their EFA devices through a ResourceClaimTemplate: EKS node groups on Kubernetes
1.34 or later, not Karpenter). Default: device-plugin."""


class NetworkConfig(TypedDict):
    """Secondary networking for RDMA fabrics."""

    # from components.models.network.NetworkConfig
    multus: NotRequired[MultusSpec]
    """Multus. Default: enabled."""
    networks: NotRequired[list[NetworkSpec]]
    """NetworkAttachmentDefinitions. Default: none."""
    rdma: NotRequired[RdmaSpec]
    """RDMA devices for pods. Default: the shared device plugin with rdma/rdma_shared_device_a."""
    sriov: NotRequired[SriovSpec]
    """SR-IOV operator. Default: off."""
    efa: NotRequired[EfaSpec]
    """EFA devices on EKS: `{mode: device-plugin | dra}`. Default: the EFA device plugin."""


class GpuOperatorSpec(TypedDict):
    """The NVIDIA GPU Operator."""

    # from components.models.platform.GpuOperatorSpec
    enabled: NotRequired[bool]
    """Install the GPU Operator. Default: true, except on GKE, whose pools come with GKE's own
driver and device plugin."""
    driver: NotRequired[bool]
    """Run the containerized driver. Default: false on AWS (the accelerated AMI ships it) and
GCP (GKE-managed drivers), true on existing clusters."""
    rdma: NotRequired[Any]
    """GPUDirect RDMA: dmabuf (the Linux kernel's DMA-BUF, with the open GPU kernel modules and the
inbox NIC drivers; no MOFED) | peermem (the legacy nvidia-peermem module, which needs MOFED: the
hosts' with useHostMofed, else the Network Operator's DOCA-OFED driver container) | true (dmabuf) |
false (off). Default: dmabuf when a pool's fabric is infiniband or roce, else off."""
    use_host_mofed: NotRequired[bool]
    """With rdma: peermem only: MOFED/DOCA-OFED is installed on the hosts, and the GPU Operator builds
nvidia-peermem against it (driver.rdma.useHostMofed), so no driver container brings it. Anywhere else it
would do nothing (DMA-BUF needs no MOFED), so it is an error: `rdma: true` here means DMA-BUF, not the
chart's driver.rdma.enabled. Default: false."""


class TrainingOperatorSpec(TypedDict):
    """The Kubeflow Training Operator and the MPI Operator."""

    # from components.models.platform.TrainingOperatorSpec
    enabled: NotRequired[bool]
    """Install the Training Operator v1 (PyTorchJob, TFJob), the legacy path. Default: on when a job of the stack
is a PyTorchJob or TFJob, or the stack installed it before; set it for job stacks that submit them."""
    mpi: NotRequired[bool]
    """Install MPI Operator v2beta1 for MPIJobs, the legacy path. Default: on when a job of the stack is an MPIJob,
or the stack installed it before; set it for job stacks that submit them."""


class TrainerSpec(TypedDict):
    """Kubeflow Trainer v2 (TrainJob, training runtimes) and JobSet, which it runs on."""

    # from components.models.platform.TrainerSpec
    enabled: NotRequired[bool]
    """Install Kubeflow Trainer v2 and JobSet, and make each GPU pool's ClusterTrainingRuntimes: jobs that name
no launcher are TrainJobs on them. Default: on, unless `scheduler.type` is none (a cluster run as it is)."""
    mpi_image: NotRequired[str]
    """The image the nodes of the pools' DeepSpeed and MPI runtimes run: Trainer v2.3 starts them from the
runtime, not the TrainJob, so a job with another image gets a runtime of its own. It runs sshd as the
upstream deepspeed-runtime image does (user 1000, /home/mpiuser/.sshd_config, port 2222).
Default: Trainer's deepspeed-runtime image of the pinned release."""


class StackConfigDefaultLauncher(StrEnum):
    PYTORCH = "pytorch"
    MPI = "mpi"
    TENSORFLOW = "tensorflow"
    INDEXED = "indexed"
    TRAINJOB = "trainjob"


class SchedulerSpecType(StrEnum):
    VOLCANO = "volcano"
    KUEUE = "kueue"
    NONE = "none"


class QueueSpec(TypedDict):
    """A queue of GPU capacity that jobs submit to."""

    # from components.models.platform.QueueSpec
    name: str
    """Queue name; jobs refer to it as `scheduler.queue`. Required."""
    gpus: int
    """GPUs the queue may use at once. Required."""
    weight: NotRequired[int]
    """Share of the cluster when queues compete (the Volcano Queue's weight, at most 65535 in its CRD
scheduling.volcano.sh/v1beta1 Queue; the Kueue ClusterQueue's fair-sharing weight within its cohort).
Default: 1."""
    reclaimable: NotRequired[bool]
    """Whether other queues may reclaim its idle share (Volcano). Default: true."""
    pools: NotRequired[list[str]]
    """Pools whose GPUs the queue draws on (Kueue flavors). Default: every pool."""
    namespaces: NotRequired[list[str]]
    """Namespaces that get a LocalQueue for it (Kueue). Default: every namespace the stack uses."""
    cohort: NotRequired[str]
    """Kueue cohort: queues of one cohort borrow each other's idle GPUs, and reclaim what they lent.
A cohort of its own keeps a queue apart. Default: `gpu-training`, one cohort for every queue of the stack."""
    borrowing_limit: NotRequired[int]
    """GPUs the queue may borrow from its cohort beyond `gpus`, on each of its pools (Kueue).
Default: none set, so up to what the cohort has idle."""
    lending_limit: NotRequired[int]
    """GPUs of its own quota, on each of its pools, that the queue lends to its cohort while idle (Kueue).
Default: none set, so all of them."""


class PriorityClassSpec(TypedDict):
    """A PriorityClass jobs can name in scheduler.priorityClass."""

    # from components.models.platform.PriorityClassSpec
    name: str
    """Name. Required."""
    value: int
    """Priority; higher preempts lower. Required."""
    preempting: NotRequired[bool]
    """Whether pods of this class preempt lower ones. Default: true."""
    description: NotRequired[str]
    """What the class is for. Default: empty."""


class TopologyLevelSpec(TypedDict):
    """One level of the cluster's network topology, a node label whose value names the domain."""

    # from components.models.platform.TopologyLevelSpec
    name: str
    """Short name jobs use in `topology.level`, e.g. rack. Required."""
    node_label: str
    """The node label, e.g. example.com/rack. Required."""


class SchedulerTopologySpec(TypedDict):
    """Topology-aware placement: jobs land on nodes close together in the network."""

    # from components.models.platform.SchedulerTopologySpec
    enabled: NotRequired[bool]
    """Place jobs by network topology (a Kueue Topology, or Volcano HyperNodes). Default: false."""
    levels: NotRequired[list[TopologyLevelSpec]]
    """Existing clusters: the topology's levels, coarsest first; kubernetes.io/hostname is added as the
finest level `host`. Default: none (on AWS and GCP the levels come from the provider)."""


class SchedulerSpec(TypedDict):
    """The gang scheduler, so that a multi-node job starts whole or not at all."""

    # from components.models.platform.SchedulerSpec
    type: NotRequired[SchedulerSpecType]
    """volcano | kueue | none. Default: volcano."""
    queues: NotRequired[list[QueueSpec]]
    """Queues. Default: none (Volcano's `default` queue)."""
    priority_classes: NotRequired[list[PriorityClassSpec]]
    """PriorityClasses to create. Default: none."""
    topology: NotRequired[SchedulerTopologySpec]
    """Topology-aware placement. Default: off."""


class Backend(StrEnum):
    EFS = "efs"
    FSX_LUSTRE = "fsx-lustre"
    FILESTORE = "filestore"
    MANAGED_LUSTRE = "managed-lustre"
    NFS = "nfs"
    STORAGE_CLASS = "storageClass"
    S3 = "s3"
    GCS = "gcs"


class VolumeSpecAccessMode(StrEnum):
    READ_WRITE_MANY = "ReadWriteMany"
    READ_ONLY_MANY = "ReadOnlyMany"
    READ_WRITE_ONCE = "ReadWriteOnce"


class VolumeSpecTier(StrEnum):
    BASIC_HDD = "BASIC_HDD"
    BASIC_SSD = "BASIC_SSD"
    ZONAL = "ZONAL"
    REGIONAL = "REGIONAL"
    ENTERPRISE = "ENTERPRISE"


class VolumeSpecConnectMode(StrEnum):
    DIRECT_PEERING = "DIRECT_PEERING"
    PRIVATE_SERVICE_ACCESS = "PRIVATE_SERVICE_ACCESS"


class VolumeSpecThroughputPerTib(IntEnum):
    V125 = 125
    V250 = 250
    V500 = 500
    V1000 = 1000


class LustreMetadataSpecMode(StrEnum):
    AUTOMATIC = "AUTOMATIC"
    USER_PROVISIONED = "USER_PROVISIONED"


class LustreMetadataSpec(TypedDict):
    """FSx for Lustre (PERSISTENT_2) metadata performance: how many metadata IOPS the file system has."""

    # from components.models.storage.LustreMetadataSpec
    mode: NotRequired[LustreMetadataSpecMode]
    """AUTOMATIC (FSx scales metadata IOPS with storage capacity) or USER_PROVISIONED (`iops`).
Default: AUTOMATIC."""
    iops: NotRequired[int]
    """USER_PROVISIONED: metadata IOPS, 1500, 3000, 6000, or a multiple of 12000 up to 192000. Required for
USER_PROVISIONED; FSx cannot lower it later without recreating the file system. Default: none."""


class Use(StrEnum):
    """What an object-store volume is for: data (read through a cache) | checkpoints (written, rotated)."""

    DATA = "data"
    CHECKPOINTS = "checkpoints"


class VolumeSpec(TypedDict):
    """A persistent volume claim that jobs mount, and what backs it."""

    # from components.models.storage.VolumeSpec
    name: str
    """Claim name; jobs mount it as `claim`. Required."""
    namespace: NotRequired[str]
    """Namespace of the claim. Default: training."""
    backend: Backend
    """efs | fsx-lustre | filestore | managed-lustre | nfs | storageClass | s3 | gcs. Required."""
    size: NotRequired[str]
    """Requested capacity, e.g. 2Ti. Required, except for s3 and gcs: a bucket has no capacity, and their
claims state 1Pi, which the drivers ignore."""
    access_mode: NotRequired[VolumeSpecAccessMode]
    """Access mode (s3: ReadWriteMany or ReadOnlyMany, the modes Mountpoint serves). Default: ReadWriteMany (every
node of a job mounts it)."""
    server: NotRequired[str]
    """nfs: the NFS server. Required for nfs."""
    share: NotRequired[str]
    """nfs: the exported path. Required for nfs."""
    class_name: NotRequired[str]
    """storageClass: an existing StorageClass. Required for storageClass."""
    file_system_id: NotRequired[str]
    """efs / fsx-lustre / managed-lustre: use this file system instead of creating one (managed-lustre: the
instance's id, in `zone` of the cluster's project, or its full name projects/<project>/locations/<zone>/
instances/<id>). Default: create one."""
    s3_import_path: NotRequired[str]
    """fsx-lustre: link the file system to this S3 prefix. Default: none."""
    tier: NotRequired[VolumeSpecTier]
    """filestore: the service tier. Default: BASIC_SSD."""
    connect_mode: NotRequired[VolumeSpecConnectMode]
    """filestore: how the instance joins the VPC; PRIVATE_SERVICE_ACCESS for a Shared VPC (the network is
then passed as projects/<project>/global/networks/<name>). Default: DIRECT_PEERING (the driver's)."""
    zone: NotRequired[str]
    """fsx-lustre / managed-lustre: the zone of the file system (FSx: one subnet). Default: the zone of the first
GPU pool."""
    throughput_per_ti_b: NotRequired[VolumeSpecThroughputPerTib]
    """fsx-lustre / managed-lustre: the throughput tier in MB/s per TiB (file system throughput = capacity x
tier). FSx (PERSISTENT_2) changes it in place; Managed Lustre fixes it when the instance is made, and it sets
the capacity steps. Default: fsx-lustre 500 (24 TiB give 12 GB/s), managed-lustre 1000 (9,000 GiB give
8.8 GB/s)."""
    filesystem: NotRequired[str]
    """managed-lustre: the Lustre file system name of an instance made here, which `lfs` and mounts use (1-8
letters and digits, starting with a letter). Default: the letters and digits of the volume's name, at most 8."""
    metadata_configuration: NotRequired[LustreMetadataSpec]
    """fsx-lustre: metadata IOPS, `{mode: AUTOMATIC}` or `{mode: USER_PROVISIONED, iops: N}`.
Default: not sent, so FSx applies its own default for the file system."""
    bucket: NotRequired[str]
    """s3 / gcs: an existing bucket to mount (in the cluster's region, for speed and cost). Default: a bucket the
stack makes in the cluster's region (a GCS one with hierarchical namespace), protected and kept when removed
from the stack."""
    prefix: NotRequired[str]
    """s3 / gcs: mount only this folder of the bucket, e.g. `llama-70b/`. Default: the whole bucket."""
    use: NotRequired[Use]
    """s3 / gcs: what the volume is for, which sets its mount options: data (metadata cached for the mount's life
and a read cache of `cacheSize` on each node's disks; gcsfuse downloads a file in parallel chunks) or
checkpoints (Mountpoint may delete and overwrite, as checkpoint rotation and a `latest` file need; gcsfuse
streams writes to the bucket instead of staging whole files on local disk). Default: data when accessMode
is ReadOnlyMany, else checkpoints."""
    cache_size: NotRequired[str]
    """s3 / gcs data volumes: the read cache each node keeps on its disks (the local NVMe / SSD where the pool
has them); "0" turns it off. Default: 100Gi."""
    mount_options: NotRequired[list[str]]
    """nfs / filestore / efs / fsx-lustre / managed-lustre / s3 / gcs: the mount options of the class or volume
made here, replacing the defaults whole. Default: nfs `nfsvers=4.1, nconnect=8, rsize=1048576, wsize=1048576,
hard`; fsx-lustre and managed-lustre `flock`; filestore and efs none (their drivers' own); s3 and gcs those
of their `use` (see docs/storage.md, "Object-store volumes and checkpoints")."""


class StorageConfig(TypedDict):
    """Storage the platform provides."""

    # from components.models.storage.StorageConfig
    volumes: NotRequired[list[VolumeSpec]]
    """Claims for checkpoints and data. Default: none."""


class GrafanaSpec(TypedDict):
    """How Grafana finds the pack's dashboards: its dashboard sidecar loads ConfigMaps that carry a label."""

    # from components.models.platform.GrafanaSpec
    label: NotRequired[str]
    """The label key the sidecar looks for (kube-prometheus-stack's `grafana.sidecar.dashboards.label`).
Default: grafana_dashboard."""
    label_value: NotRequired[str]
    """Its value (`grafana.sidecar.dashboards.labelValue`). Default: "1"."""
    namespace: NotRequired[str]
    """Where the dashboards' ConfigMaps go: a namespace the sidecar searches, which must exist. Default:
`monitoring.namespace`."""


class MonitoringSpec(TypedDict):
    "What the cluster monitors with, and the observability pack: GPU, queue and job dashboards, and the alerts\nfor GPU faults that must page."

    # from components.models.platform.MonitoringSpec
    prometheus: NotRequired[bool]
    """A Prometheus Operator of yours runs on the cluster: add the ServiceMonitors (DCGM exporter, Kueue,
Volcano), and the pack's alerts and dashboards for it. Default: false."""
    install: NotRequired[bool]
    """Install kube-prometheus-stack (Prometheus Operator, Prometheus, Alertmanager, Grafana, kube-state-metrics)
in `namespace`, set up for the pack. Default: false."""
    namespace: NotRequired[str]
    """The namespace kube-prometheus-stack is installed in, and the dashboards' ConfigMaps go to. Default:
monitoring."""
    dashboards: NotRequired[bool]
    """Grafana dashboards as ConfigMaps: GPUs (DCGM), queues (Kueue or Volcano) and training jobs. Default: on
with a Prometheus Operator (`install` or `prometheus`)."""
    alerts: NotRequired[bool]
    """PrometheusRules for the GPU faults that must page (XIDs, ECC, row remaps, NVLink, a GPU off the bus,
thermal throttling) and idle GPUs in running training jobs. Default: on with a Prometheus Operator where the
GPU Operator's DCGM exporter runs (not on GKE's managed DCGM, which does not export those fields)."""
    idle_gpu_minutes: NotRequired[int]
    """How long a running training job's GPU may sit idle (under 1% utilization) before its alert fires.
Default: 30."""
    labels: NotRequired[dict[str, str]]
    """Labels on every ServiceMonitor and PrometheusRule of the pack, for a Prometheus that selects them by label
(e.g. `release: prometheus`). Default: none (the kube-prometheus-stack `install` brings selects them all)."""
    grafana: NotRequired[GrafanaSpec]
    """How Grafana finds the dashboards. Default: kube-prometheus-stack's sidecar label `grafana_dashboard: "1"`."""
    managed_dcgm: NotRequired[bool]
    """GKE: GKE's managed DCGM metrics, collected by Managed Service for Prometheus into Cloud Monitoring (the
cluster's monitoring config). It needs GKE-managed GPU drivers, so not with the GPU Operator. Default: on for
GKE clusters whose GPU nodes use GKE's drivers, off elsewhere."""


class AddonsSpec(TypedDict):
    """How the add-ons (the Helm releases and remote installs `render` lists) get onto the cluster."""

    # from components.models.platform.AddonsSpec
    install: NotRequired[bool]
    """Install them: false when the platform team installs them another way (Argo CD, Flux). Default: true."""


class RepairAgent(StrEnum):
    "eks-node-monitoring-agent (EKS: node conditions, with EKS node auto repair and Karpenter's node repair) |\ngke (GKE node auto-repair) | nvsentinel (NVIDIA NVSentinel: quarantine and drain; needs the GPU Operator)."

    EKS_NODE_MONITORING_AGENT = "eks-node-monitoring-agent"
    GKE = "gke"
    NVSENTINEL = "nvsentinel"


class RepairSpec(TypedDict):
    """Finding GPU, NIC and node faults at run time, and taking the faulty node out of service."""

    # from components.models.health.RepairSpec
    enabled: NotRequired[bool]
    """Install and configure the provider's fault detection and repair. Default: true."""
    agent: NotRequired[RepairAgent]
    """What detects faults and acts on them. Default: eks-node-monitoring-agent on AWS, gke on GCP, nvsentinel on
existing clusters."""
    max_parallel_nodes: NotRequired[int]
    """EKS managed node groups: nodes auto repair replaces or reboots at once, per node group
(maxParallelNodesRepairedCount). Default: 1, so a burst of faults never takes a pool down at once."""
    reboot: NotRequired[bool]
    """NVSentinel: let its fault remediation reboot a faulty node (through its janitor, a privileged Job on the
node) once the node is drained. Default: false, the node stays cordoned for a person to look at."""


class HealthSpec(TypedDict):
    """Healthy GPU nodes only."""

    # from components.models.health.HealthSpec
    repair: NotRequired[RepairSpec]
    """Run-time fault detection and repair. Default: on, with the provider's agent."""


class ImagesSpec(TypedDict):
    """The images every pod the stack runs pulls: through a registry mirror, and the kubectl image of its checks."""

    # from components.models.images.ImagesSpec
    registry_mirror: NotRequired[Any]
    """Pull every image through a mirror (air-gapped clusters, pull-through caches, Docker Hub's rate limits). A
prefix (`mirror.example.com`, `harbor.example.com/proxy`) takes every registry's images with their host kept
in the path: `nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04` becomes
`mirror.example.com/nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04`. A map from upstream registry to
prefix (an ECR pull-through cache's or Harbor's proxy project per upstream, an Artifact Registry remote
repository per upstream) replaces the host: `{docker.io: 123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub}`
makes `alpine/k8s:1.34.1` `123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub/alpine/k8s:1.34.1` (Docker
Hub's official images get their `library/`); the key `*` takes every other registry, its host kept. A
registry the map does not name keeps its images. It applies to the stack's own pods, the jobs' images, every
per-image override, and the Helm charts' images through each chart's values (docs/addons.md, Images and mirrors).
Default: none, every image from its upstream registry."""
    kubectl: NotRequired[str]
    """The kubectl image (with a POSIX shell) of the node check's verdict and the fabric check's scale-up
watcher; the mirror applies to it too. Default: `docker.io/alpine/k8s:1.34.1`."""


class NamespaceSpec(TypedDict):
    """A namespace the platform creates, optionally with a GPU quota."""

    # from components.models.platform.NamespaceSpec
    name: str
    """Namespace name. Required."""
    gpu_quota: NotRequired[int]
    """ResourceQuota on requests.nvidia.com/gpu. Default: none."""


class AwsIdentitySpec(TypedDict):
    "The IAM role a service account's pods run as through EKS Pod Identity: one the stack makes with these\npolicies, or your own."

    # from components.models.identity.AwsIdentitySpec
    policies: NotRequired[list[str]]
    """Managed policy ARNs attached to a role the stack makes for this service account. Default: none."""
    role_arn: NotRequired[str]
    """Your own role (its trust policy must let pods.eks.amazonaws.com sts:AssumeRole and sts:TagSession).
Default: none."""


class GcpIdentitySpec(TypedDict):
    "The Google service account a service account's pods act as through Workload Identity Federation for GKE:\none the stack makes with these project roles, or your own."

    # from components.models.identity.GcpIdentitySpec
    roles: NotRequired[list[str]]
    """IAM roles on the cluster's project granted to a Google service account the stack makes. Default: none."""
    service_account: NotRequired[str]
    """Your own Google service account's email; the stack lets the Kubernetes service account act as it.
Default: none."""


class ServiceAccountSpec(TypedDict):
    """A Kubernetes ServiceAccount the stack makes, with the cloud identity its pods get."""

    # from components.models.identity.ServiceAccountSpec
    name: str
    """The ServiceAccount's name; a job's `serviceAccount` names it. Required."""
    namespace: NotRequired[str]
    """Its namespace. Default: training."""
    aws: NotRequired[AwsIdentitySpec]
    """EKS (provider aws): the IAM role its pods run as, through EKS Pod Identity. Default: none."""
    gcp: NotRequired[GcpIdentitySpec]
    """GKE (provider gcp): the Google service account its pods act as, through Workload Identity. Default: none."""
    annotations: NotRequired[dict[str, str]]
    """Annotations of the ServiceAccount, e.g. an existing cluster's eks.amazonaws.com/role-arn (IRSA) or
iam.gke.io/gcp-service-account. Default: none."""


class Launcher(StrEnum):
    "pytorch (PyTorchJob) | mpi (MPIJob v2beta1) | tensorflow (TFJob) | indexed (Job + headless Service) |\ntrainjob (Kubeflow Trainer v2 TrainJob)."

    PYTORCH = "pytorch"
    MPI = "mpi"
    TENSORFLOW = "tensorflow"
    INDEXED = "indexed"
    TRAINJOB = "trainjob"


class Runtime(StrEnum):
    """The training runtime of a TrainJob: torch (torchrun) | deepspeed | mpi (mpirun) | tensorflow (TF_CONFIG)."""

    TORCH = "torch"
    DEEPSPEED = "deepspeed"
    MPI = "mpi"
    TENSORFLOW = "tensorflow"


class ElasticSpec(TypedDict):
    """Elastic training (torchrun with a c10d rendezvous): the job runs on between min and max nodes."""

    # from components.models.job.ElasticSpec
    min_nodes: int
    """Fewest nodes the job keeps running on. Required."""
    max_nodes: int
    """Most nodes the job scales to. Required."""
    max_restarts: NotRequired[int]
    """Restarts of the worker group torchrun allows. Default: 3."""


class TopologySpecMode(StrEnum):
    REQUIRED = "required"
    PREFERRED = "preferred"


class TopologySpec(TypedDict):
    """How close together in the network the job's nodes must be."""

    # from components.models.job.TopologySpec
    mode: NotRequired[TopologySpecMode]
    """required (the job waits until it fits in one domain) | preferred (one domain when possible).
Default: required."""
    level: str
    """The topology level whose one domain holds the job: block, subblock or host on GKE; layer-1, layer-2,
layer-3 (layer-4 on p6) or host on EKS; the declared levels elsewhere. Required."""


class JobSchedulerSpec(TypedDict):
    """Where the job queues; the scheduler type comes from the stack."""

    # from components.models.job.JobSchedulerSpec
    queue: NotRequired[str]
    """Queue name. Default: the stack's first queue, or Volcano's `default` queue."""
    priority_class: NotRequired[str]
    """PriorityClass of the job's pods. Default: none."""


class ResourcesSpec(TypedDict):
    """CPU and memory of each worker; GPUs come from gpusPerNode."""

    # from components.models.job.ResourcesSpec
    cpu: NotRequired[str]
    """CPU per worker, e.g. "32". Default: none (no request or limit)."""
    memory: NotRequired[str]
    """Memory per worker, e.g. 512Gi. Default: none (no request or limit)."""


class VolumeMountSpec(TypedDict):
    """A claim mounted into every worker."""

    # from components.models.job.VolumeMountSpec
    claim: str
    """The PersistentVolumeClaim, declared in `storage.volumes` of the job's namespace. Required."""
    mount_path: str
    """Where it is mounted, an absolute path. Required."""
    read_only: NotRequired[bool]
    """Mount read-only. Default: false."""
    sub_path: NotRequired[str]
    """Mount only this path inside the volume. Default: the whole volume."""


class FileMountSpec(TypedDict):
    """A Secret's or ConfigMap's keys as read-only files in every worker."""

    # from components.models.job.FileMountSpec
    secret: NotRequired[str]
    """A Secret of the job's namespace, each key a file. Required unless configMap is set."""
    config_map: NotRequired[str]
    """A ConfigMap of the job's namespace, each key a file. Required unless secret is set."""
    mount_path: str
    """Where it is mounted, an absolute path. Required."""
    sub_path: NotRequired[str]
    """Mount only this key (a file) at mountPath. Default: every key, as files in mountPath."""


class CheckpointSpec(TypedDict):
    """Where the job writes its checkpoints, how large one is, and how long writing one may take."""

    # from components.models.job.CheckpointSpec
    claim: str
    """The claim checkpoints go to, declared in `storage.volumes` of the job's namespace; it is mounted into every
worker (at its mount in `volumes`, when listed there). Required."""
    mount_path: NotRequired[str]
    """Where the claim is mounted. Default: its mount in `volumes`, else /checkpoints."""
    folder: NotRequired[str]
    """The folder inside the mount that CHECKPOINT_DIR names ("" for the mount itself). Default: the job's
name."""
    size: NotRequired[str]
    """One checkpoint, every rank's files together, e.g. 1.1T (a 70B-parameter model with Adam state is about 16
bytes a parameter). Default: none; render then states the volume's throughput without a time."""
    max_seconds: NotRequired[int]
    """How long writing one checkpoint may take: render warns when the volume cannot write `size` from the job's
nodes in that time. Default: 300."""


class ScratchSpec(TypedDict):
    "Node-local scratch space: an emptyDir on the node's disks (its local NVMe / SSD RAID0 where\nthe pool has one), gone with the pod."

    # from components.models.job.ScratchSpec
    size: str
    """How much each worker may write, e.g. 500Gi; requested as ephemeral storage. Required."""
    mount_path: NotRequired[str]
    """Where it is mounted. Default: /scratch."""


class EnvFromSpec(TypedDict):
    """Every key of a Secret or ConfigMap as environment variables."""

    # from components.models.envsource.EnvFromSpec
    secret_ref: NotRequired[str]
    """The Secret. Required unless configMapRef is set."""
    config_map_ref: NotRequired[str]
    """The ConfigMap. Required unless secretRef is set."""
    prefix: NotRequired[str]
    """Put before each key's name, e.g. HF_. Default: none."""
    optional: NotRequired[bool]
    """Start the pods without it when it is missing. Default: false."""


class DeepSpeedSpec(TypedDict):
    """A DeepSpeed config, shipped as a ConfigMap and passed as --deepspeed_config."""

    # from components.models.job.DeepSpeedSpec
    config: dict[str, Any]
    """The ds_config.json contents. Required."""
    mount_path: NotRequired[str]
    """Directory the ConfigMap is mounted at. Default: /etc/deepspeed."""


class TrainingJobSpecRestartPolicy(StrEnum):
    ON_FAILURE = "OnFailure"
    NEVER = "Never"


class TrainingJobSpec(TypedDict):
    """A distributed training job: what to run, on how many nodes of which pool, and how."""

    # from components.models.job.TrainingJobSpec
    name: str
    """Job name, a DNS-1035 label. Required."""
    namespace: NotRequired[str]
    """Namespace. Default: training."""
    launcher: NotRequired[Launcher]
    """trainjob | pytorch | mpi | tensorflow | indexed (the v1 operators' launchers are the legacy path).
Default: the stack's `defaultLauncher`, else trainjob where the stack runs Kubeflow Trainer (a job with
`elastic`, `envFrom`, `restartPolicy` or `ttlSecondsAfterFinished`, which Trainer v2.3 lacks, stays pytorch),
else pytorch. A stack deployed before
release 0.3.0 keeps the kind each such job runs as."""
    runtime: NotRequired[Runtime]
    """trainjob: the pool's training runtime it runs on, torch | deepspeed | mpi | tensorflow (each node one
process, told its place by TF_CONFIG, for MultiWorkerMirroredStrategy: what a TFJob ran). Default: torch."""
    image: str
    """Container image. Required."""
    command: list[str]
    """The training program and its arguments, e.g. [train.py, --epochs=3]. torchrun / mpirun
flags are added by the launcher. Required."""
    nodes: NotRequired[int]
    """Nodes (one worker pod per node). Default: elastic.minNodes when elastic, else 1."""
    gpus_per_node: NotRequired[int]
    """GPUs per worker. Default: the pool's GPUs per node."""
    node_pool: NotRequired[str]
    """The pool the job runs on. Default: the stack's only pool."""
    elastic: NotRequired[ElasticSpec]
    """Elastic training, pytorch only. Default: none."""
    topology: NotRequired[TopologySpec]
    """Network placement (scheduler.topology must be on). Default: a multi-node job on a pool with a
topology prefers one domain of its finest level below the host."""
    scheduler: NotRequired[JobSchedulerSpec]
    """Queue and priority. Default: the default queue, no priority class."""
    service_account: NotRequired[str]
    """The ServiceAccount every pod of the job runs as, in the job's namespace: one `serviceAccounts` declares
(with its cloud identity), or one already on the cluster. Default: the namespace's `default`."""
    resources: NotRequired[ResourcesSpec]
    """CPU and memory per worker. Default: none."""
    shm_size: NotRequired[str]
    """Size of the /dev/shm tmpfs. Default: 8Gi per GPU, at most half the worker memory."""
    volumes: NotRequired[list[VolumeMountSpec]]
    """Claims to mount. Default: none."""
    files: NotRequired[list[FileMountSpec]]
    """Secrets and ConfigMaps mounted read-only, each key a file: [{secret: NAME, mountPath: /etc/x}]. Default:
none."""
    checkpoint: NotRequired[CheckpointSpec]
    """Where checkpoints go (a declared claim, mounted, named by CHECKPOINT_DIR), their size and the time one
may take to write. Default: none."""
    scratch: NotRequired[ScratchSpec]
    """Node-local scratch space for each worker. Default: none."""
    env: NotRequired[dict[str, Any]]
    """Extra environment; overrides the fabric's and NCCL settings. A value is text, a key of a Secret or
ConfigMap ({secretKeyRef: {name, key}}, {configMapKeyRef: {name, key}}) or a Pulumi secret, which the stack
keeps in a Secret of its own. Default: none."""
    env_from: NotRequired[list[EnvFromSpec]]
    """Every key of a Secret or ConfigMap as environment: [{secretRef: NAME}, {configMapRef: NAME, prefix: P_}].
Default: none."""
    image_pull_secrets: NotRequired[list[str]]
    """Secrets (kubernetes.io/dockerconfigjson) of the job's namespace that every pod pulls its image with.
Default: none."""
    nccl: NotRequired[dict[str, str]]
    """NCCL settings overriding the fabric's, as `debug: INFO` (NCCL_DEBUG) or `NCCL_BUFFSIZE: ...`.
Default: none (NCCL_DEBUG=WARN plus the fabric's)."""
    deepspeed: NotRequired[DeepSpeedSpec]
    """A DeepSpeed config. Default: none."""
    backoff_limit: NotRequired[int]
    """Whole-job retries before the job is marked failed (a fault stops every rank; each launcher's object
counts it in its controller's unit, e.g. x pods for a PyTorchJob). Default: 3."""
    max_restarts: NotRequired[int]
    """torchrun launchers (pytorch, indexed, trainjob with runtime torch): in-place restarts of every rank before the
pods fail, which recover from a transient fault without rescheduling. Default: 3 (elastic jobs:
elastic.maxRestarts)."""
    ttl_seconds_after_finished: NotRequired[int]
    """Delete the finished job's object this long after it ends. Default: kept. The next `pulumi up`
recreates a job deleted this way, which runs it again: set it only for jobs deployed outside Pulumi."""
    restart_policy: NotRequired[TrainingJobSpecRestartPolicy]
    """Pod restart policy. Default: OnFailure for operator launchers, Never for indexed."""
    port: NotRequired[int]
    """Rendezvous port of the indexed launcher. Default: 29400."""


class WorkerSpec(TypedDict):
    "A worker cluster: MultiKueue dispatches the fleet's jobs to it. Either another stack file of this project\n(`stackFile`), whose own `pulumi up` makes its cluster, pools, namespaces, queues and runtimes, or the worker's\nstack keys inline (`config`), which the fleet deploys itself."

    # from components.models.fleet.WorkerSpec
    name: str
    """The worker's name in the fleet: its MultiKueueCluster on the manager, and the Secret there that holds its
kubeconfig (`multikueue-<name>`). Required."""
    stack_file: NotRequired[str]
    """Another stack file of this project (Pulumi.<stack>.yaml), relative to this one: the worker's pools,
namespaces, queues and runtimes are read from it offline, never restated here. It runs Kueue (scheduler.type
kueue) and Kubeflow Trainer. Its own `pulumi up -s <stack>` makes them; the fleet adds what MultiKueue needs
there. Required unless `config` is set."""
    config: NotRequired[dict[str, Any]]
    """The worker's stack keys inline, as a stack file's `config:` holds them without the `gpu-training:` prefix
(cluster, nodePools, scheduler ...), but no jobs (the fleet's `jobs` run on the workers): the fleet deploys this
worker's whole platform itself, with the provider its `cluster` key gives. Required unless `stackFile` is
set."""
    stack_reference: NotRequired[str]
    """With stackFile: the worker's deployed Pulumi stack (organization/project/stack), whose `kubeconfig` output (a
secret, as every stack of this project exports it) the fleet reads at deploy time to reach the worker. Required
unless `kubeconfig` is set."""
    kubeconfig: NotRequired[str]
    """With stackFile: a kubeconfig that may manage the worker (its contents as a Pulumi secret, `pulumi config set
--secret --path 'gpu-training:fleet.workers[N].kubeconfig'`, or a file's path), read at deploy time. Contents in
plain text are refused. Required unless `stackReference` is set."""


class FleetSpec(TypedDict):
    "A fleet of GPU clusters behind one set of queues (Kueue's MultiKueue): this stack's `cluster` is the\nmanager, which holds the queues and the jobs; the workers run them."

    # from components.models.fleet.FleetSpec
    workers: list[WorkerSpec]
    """The worker clusters, most preferred first: MultiKueue offers a job to every worker that has its queue, in
this order. At most 20 (a MultiKueueConfig's limit). Required."""
    rotation: NotRequired[str]
    """The generation of the workers' MultiKueue tokens, in the name of each worker's token Secret: change it (to
today's date, say) and `pulumi up` makes every worker a new token, puts the kubeconfig made from it on the
manager, then deletes the old token Secret, which revokes the old token. Default: none (the first
generation)."""


class StackConfig(TypedDict):
    """Everything one stack (one environment) declares."""

    # from components.models.stack.StackConfig
    cluster: ClusterSpec
    """The cluster: provider aws, gcp or existing. Required."""
    node_pools: NotRequired[list[NodePoolSpec]]
    """GPU node pools. Default: none."""
    network: NotRequired[NetworkConfig]
    """Multus, NADs, RDMA. Default: Multus on, no networks."""
    gpu_operator: NotRequired[GpuOperatorSpec]
    """NVIDIA GPU Operator. Default: enabled."""
    training_operator: NotRequired[TrainingOperatorSpec]
    """Kubeflow Training Operator and MPI Operator, the legacy path. Default: each where a job of the stack uses it."""
    trainer: NotRequired[TrainerSpec]
    """Kubeflow Trainer v2 and JobSet. Default: installed, unless the stack runs no scheduler."""
    default_launcher: NotRequired[StackConfigDefaultLauncher]
    """What a job that names no launcher becomes: trainjob | pytorch | mpi | tensorflow | indexed. Default: trainjob
where the stack runs Trainer, else pytorch; `pulumi up` on a stack deployed before release 0.3.0 keeps the
kind each such job runs as until this or the job's launcher is set."""
    scheduler: NotRequired[SchedulerSpec]
    """Gang scheduler and queues. Default: Volcano, no queues."""
    storage: NotRequired[StorageConfig]
    """Checkpoint and dataset volumes. Default: none."""
    monitoring: NotRequired[MonitoringSpec]
    """Monitoring the cluster has. Default: no Prometheus Operator."""
    addons: NotRequired[AddonsSpec]
    """Who installs the add-ons: the stack, or another tool while the stack makes their objects. Default: the stack."""
    health: NotRequired[HealthSpec]
    """Healthy GPU nodes: run-time fault detection and repair. Default: repair on, with the provider's agent."""
    images: NotRequired[ImagesSpec]
    """Where every image comes from: a registry mirror, and the checks' kubectl image. Default: upstream."""
    namespaces: NotRequired[list[NamespaceSpec]]
    """Namespaces to create with their GPU quotas; namespaces used elsewhere are created too.
Default: none."""
    service_accounts: NotRequired[list[ServiceAccountSpec]]
    """ServiceAccounts the stack makes for its jobs, each with its cloud identity (EKS Pod Identity, GKE Workload
Identity) or annotations. Default: none."""
    jobs: NotRequired[list[TrainingJobSpec]]
    """TrainingJobs (inline, or paths to YAML files relative to the stack file). Default: none."""
    fleet: NotRequired[FleetSpec]
    """Makes this stack a fleet's manager (Kueue's MultiKueue): `cluster` holds the queues, the workers run the
jobs, and `jobs` are dispatched to the workers that can run them (docs/fleet.md). Default: none (one
cluster)."""


class TrainingJobArgs(TypedDict):
    """The inputs of a TrainingJob: the TrainingJobSpec fields, and the pool, scheduler and queue it runs with."""

    # from components.models.job.TrainingJobSpec and components.kubernetes.trainingjob.TrainingJob
    name: NotRequired[str]
    """Job name, a DNS-1035 label. Default: the resource name."""
    namespace: NotRequired[str]
    """Namespace. Default: training."""
    launcher: NotRequired[Launcher]
    """trainjob | pytorch | mpi | tensorflow | indexed (the v1 operators' launchers are the legacy path).
Default: the stack's `defaultLauncher`, else trainjob where the stack runs Kubeflow Trainer (a job with
`elastic`, `envFrom`, `restartPolicy` or `ttlSecondsAfterFinished`, which Trainer v2.3 lacks, stays pytorch),
else pytorch. A stack deployed before
release 0.3.0 keeps the kind each such job runs as."""
    runtime: NotRequired[Runtime]
    """trainjob: the pool's training runtime it runs on, torch | deepspeed | mpi | tensorflow (each node one
process, told its place by TF_CONFIG, for MultiWorkerMirroredStrategy: what a TFJob ran). Default: torch."""
    image: str
    """Container image. Required."""
    command: list[str]
    """The training program and its arguments, e.g. [train.py, --epochs=3]. torchrun / mpirun
flags are added by the launcher. Required."""
    nodes: NotRequired[int]
    """Nodes (one worker pod per node). Default: elastic.minNodes when elastic, else 1."""
    gpus_per_node: NotRequired[int]
    """GPUs per worker. Default: the pool's GPUs per node."""
    node_pool: NotRequired[str]
    """The pool the job runs on. Default: the stack's only pool."""
    elastic: NotRequired[ElasticSpec]
    """Elastic training, pytorch only. Default: none."""
    topology: NotRequired[TopologySpec]
    """Network placement (scheduler.topology must be on). Default: a multi-node job on a pool with a
topology prefers one domain of its finest level below the host."""
    scheduler: NotRequired[JobSchedulerSpec]
    """Queue and priority. Default: the default queue, no priority class."""
    service_account: NotRequired[str]
    """The ServiceAccount every pod of the job runs as, in the job's namespace: one `serviceAccounts` declares
(with its cloud identity), or one already on the cluster. Default: the namespace's `default`."""
    resources: NotRequired[ResourcesSpec]
    """CPU and memory per worker. Default: none."""
    shm_size: NotRequired[str]
    """Size of the /dev/shm tmpfs. Default: 8Gi per GPU, at most half the worker memory."""
    volumes: NotRequired[list[VolumeMountSpec]]
    """Claims to mount. Default: none."""
    files: NotRequired[list[FileMountSpec]]
    """Secrets and ConfigMaps mounted read-only, each key a file: [{secret: NAME, mountPath: /etc/x}]. Default:
none."""
    checkpoint: NotRequired[CheckpointSpec]
    """Where checkpoints go (a declared claim, mounted, named by CHECKPOINT_DIR), their size and the time one
may take to write. Default: none."""
    scratch: NotRequired[ScratchSpec]
    """Node-local scratch space for each worker. Default: none."""
    env: NotRequired[dict[str, pulumi.Input[Any]]]
    """Extra environment; overrides the fabric's and NCCL settings. A value is text, a key of a Secret or
ConfigMap ({secretKeyRef: {name, key}}, {configMapKeyRef: {name, key}}) or a Pulumi secret, which the stack
keeps in a Secret of its own. Default: none."""
    env_from: NotRequired[list[EnvFromSpec]]
    """Every key of a Secret or ConfigMap as environment: [{secretRef: NAME}, {configMapRef: NAME, prefix: P_}].
Default: none."""
    image_pull_secrets: NotRequired[list[str]]
    """Secrets (kubernetes.io/dockerconfigjson) of the job's namespace that every pod pulls its image with.
Default: none."""
    nccl: NotRequired[dict[str, str]]
    """NCCL settings overriding the fabric's, as `debug: INFO` (NCCL_DEBUG) or `NCCL_BUFFSIZE: ...`.
Default: none (NCCL_DEBUG=WARN plus the fabric's)."""
    deepspeed: NotRequired[DeepSpeedSpec]
    """A DeepSpeed config. Default: none."""
    backoff_limit: NotRequired[int]
    """Whole-job retries before the job is marked failed (a fault stops every rank; each launcher's object
counts it in its controller's unit, e.g. x pods for a PyTorchJob). Default: 3."""
    max_restarts: NotRequired[int]
    """torchrun launchers (pytorch, indexed, trainjob with runtime torch): in-place restarts of every rank before the
pods fail, which recover from a transient fault without rescheduling. Default: 3 (elastic jobs:
elastic.maxRestarts)."""
    ttl_seconds_after_finished: NotRequired[int]
    """Delete the finished job's object this long after it ends. Default: kept. The next `pulumi up`
recreates a job deleted this way, which runs it again: set it only for jobs deployed outside Pulumi."""
    restart_policy: NotRequired[TrainingJobSpecRestartPolicy]
    """Pod restart policy. Default: OnFailure for operator launchers, Never for indexed."""
    port: NotRequired[int]
    """Rendezvous port of the indexed launcher. Default: 29400."""
    pool: pulumi.Input[dict[str, Any]]
    """The pool the job runs on, as plain data: an entry of a platform's `pools` output (a Platform component's, or a platform stack's `pools` export through a StackReference). Required."""
    scheduler_type: NotRequired[pulumi.Input[str]]
    """The cluster's gang scheduler: volcano | kueue | none (a platform's `scheduler` output); the Python API's `scheduler=` keyword, renamed beside the spec's own `scheduler` (queue and priority class). Default: none."""
    default_queue: NotRequired[pulumi.Input[str]]
    """The queue when scheduler.queue names none (a platform's `defaultQueue` output); the Python API's `queue=` keyword. Default: none."""
    storage: NotRequired[pulumi.Input[list[dict[str, Any]]]]
    """The platform's declared volumes (a platform's `storage` output): a claim backed by a bucket gets what its pods need to mount it (GKE's gcsfuse sidecar for gcs). Default: none (every claim mounted as a plain claim)."""
