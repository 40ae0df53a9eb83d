"""GPU node pools: machine type, size, taints, placement, capacity and fabric."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AwareDatetime, Field, field_validator, model_validator

from components.models.base import Count, DnsLabel, ImageRef, Number, Quantity, Spec, at, snake
from components.models.network import NetworkSpec, RailsSpec
from components.wellknown import GPU_TAINT_KEY, NODE_CHECK_KEY, STARTUP_TAINT_PREFIX

Fabric = Literal["efa", "infiniband", "roce", "tcp", "tcpx", "tcpxo", "rdma"]
"""How GPUs talk across nodes: EFA (AWS), InfiniBand or RoCE through Multus (existing clusters),
GKE GPUDirect (tcpx, tcpxo, rdma), or TCP sockets on eth0."""
GPUDIRECT_FABRICS = ("tcpx", "tcpxo", "rdma")
"""GKE's GPUDirect fabrics, each tied to its machine types."""

DcgmLevel = Literal[1, 2, 3, 4]
NcclTest = Literal["all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "alltoall_perf"]
"""The NCCL-tests collectives a fabric check can run."""
_NCCL_SIZE = re.compile(r"^[1-9][0-9]*[KMG]?$")


class Taint(Spec):
    """A node taint; jobs on the pool get the matching toleration."""

    key: str
    """Taint key. Required."""
    value: str = ""
    """Taint value. Default: empty."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"
    """Taint effect. Default: NoSchedule."""


NODE_CHECK_TAINT = Taint(key=f"{STARTUP_TAINT_PREFIX}gpu-training-node-check", value="pending", effect="NoSchedule")
"""The startup taint a checked pool's nodes come up with, until their node check gives its verdict."""
NODE_CHECK_FAILED_TAINT = Taint(key="gpu-training/node-check-failed", value="true", effect="NoSchedule")
"""What a node that failed its check carries instead: a key of its own, no startup taint, so that every
autoscaler sees a started node no pending pod fits, and makes another."""
LEGACY_NODE_CHECK_TAINT_KEY = NODE_CHECK_KEY
"""The startup taint's key in earlier releases. A node that joined under it still gets its check (the check
tolerates it, and removes it with the new key)."""


def default_taints(provider: str) -> list[Taint]:
    """The taint a GPU pool carries unless told otherwise: nvidia.com/gpu=present on GKE (the taint
    GKE itself puts on GPU nodes), nvidia.com/gpu=true elsewhere; NoSchedule."""
    value = "present" if provider == "gcp" else "true"
    return [Taint(key=GPU_TAINT_KEY, value=value, effect="NoSchedule")]


class CapacitySpec(Spec):
    """How the pool's nodes are bought."""

    type: Literal["on-demand", "spot", "reservation", "capacity-block", "flex-start"] = "on-demand"
    """on-demand | spot | reservation (AWS ODCR or GCP specific reservation) | capacity-block (AWS
    Capacity Block for ML) | flex-start (GCP DWS). Default: on-demand."""
    reservation_id: str | None = None
    """The reservation (ODCR id, Capacity Block id, or GCP reservation name). Required for
    reservation and capacity-block; not allowed otherwise. Default: none."""
    end_time: AwareDatetime | None = None
    """When a Capacity Block ends, with its time zone (e.g. 2026-12-01T11:30:00Z). A node group pool
    scales to zero an hour before it, so pods drain and checkpoint before EC2 reclaims the instances
    (from 30 minutes before the end); Karpenter learns the end from EC2 itself. Default: none."""

    @model_validator(mode="after")
    def _reservation_id(self) -> CapacitySpec:
        needs = self.type in ("reservation", "capacity-block")
        if needs and not self.reservation_id:
            raise at("reservationId", f"capacity type '{self.type}' needs `reservationId` (the reservation to consume)")
        if not needs and self.reservation_id:
            raise at(
                "reservationId",
                f"`reservationId` is only used with capacity type reservation or capacity-block, not '{self.type}'",
            )
        if self.end_time is not None and self.type != "capacity-block":
            raise at("endTime", f"`endTime` is the end of a capacity-block, not of '{self.type}' capacity")
        return self


PROVISIONING_CLASS = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
"""A ProvisioningRequest class name: a DNS-1123 subdomain, as Kueue's ProvisioningRequestConfig CRD checks it."""


class QueuedProvisioningSpec(Spec):
    """Capacity provisioned on demand and all at once: Kueue admits a job on the pool only once the cluster's
    autoscaler has provisioned every node the job's GPU pods need (a ProvisioningRequest), so a multi-node job never
    holds half its nodes while it waits for the rest."""

    enabled: bool = False
    """Admit the pool's jobs through a ProvisioningRequest admission check. `queuedProvisioning: true` is short for
    `{enabled: true}`. Default: false."""
    class_name: str | None = Field(default=None, max_length=253)
    """The ProvisioningRequest class the cluster's autoscaler serves. Default: queued-provisioning.gke.io on GKE
    (DWS flex-start with queued provisioning), best-effort-atomic-scale-up.autoscaling.x-k8s.io with the Cluster
    Autoscaler (EKS node group pools); required on existing clusters, where the stack cannot know which class
    their autoscaler serves."""
    retries: Count = Field(default=3, ge=0, le=100)
    """How many times Kueue asks again after a request fails (or its booking expires before admission), backing
    off 60 s doubling up to 30 minutes; after the last the job is deactivated. 0 asks once. Default: 3 (Kueue's)."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"enabled": data} if isinstance(data, bool) else data

    @field_validator("class_name")
    @classmethod
    def _class_name(cls, value: str | None) -> str | None:
        if value is not None and not PROVISIONING_CLASS.match(value):
            raise ValueError(f"'{value}' is not a provisioning class name: lowercase letters, digits, '-' and '.'")
        return value


class AllocatableSpec(Spec):
    """What one node of the pool advertises as allocatable, for a machine the catalog does not know."""

    cpu: Quantity | None = None
    """The node's allocatable cpu, e.g. "190" or 190500m. Default: from the catalog for a known machine; else
    unknown (render checks no pod's cpu against it; simulate assumes 64 and says so)."""
    memory: Quantity | None = None
    """The node's allocatable memory, e.g. 1900Gi. Default: from the catalog for a known machine; else unknown
    (render checks no pod's memory against it; simulate assumes 512Gi and says so)."""


class NcclSizesSpec(Spec):
    """The message sizes of an NCCL test, in nccl-tests notation (8, 64K, 1M, 8G)."""

    min: str = "1M"
    """Smallest message. Default: 1M."""
    max: str | None = None
    """Largest message, where the floor applies. Default: 8G on GPUs with 40 GiB or more, else 1G."""
    factor: Count = Field(default=2, ge=2)
    """Each size is the previous one times this. Default: 2."""

    @field_validator("min", "max", mode="before")
    @classmethod
    def _size(cls, value: str | int | None) -> str | None:
        if value is None:
            return None
        text = str(value)
        if not _NCCL_SIZE.match(text):
            raise ValueError(f"'{text}' is not an nccl-tests size: write bytes with an optional K, M or G (e.g. 8G)")
        return text

    @model_validator(mode="after")
    def _order(self) -> NcclSizesSpec:
        if self.max is not None and nccl_bytes(self.min) > nccl_bytes(self.max):
            raise at("min", f"min ({self.min}) is larger than max ({self.max})")
        return self


class FabricCheckSpec(Spec):
    """The pool's fabric acceptance gate: NCCL tests across its nodes at deploy time, which fail
    `pulumi up` below the expected bus bandwidth or on a fallback to sockets."""

    enabled: bool | None = None
    """Run the check. Default: on for a pool with a fast fabric (efa, infiniband, roce, tcpx, tcpxo, rdma):
    at deploy time on a pool that keeps at least `nodes` nodes (minNodes), which `pulumi up` waits for; else on
    scale-up, once the pool first has `nodes` checked nodes (a check never scales a pool up by itself)."""
    nodes: Count = Field(default=2, ge=2)
    """Nodes the test spans, all GPUs of each. At most maxNodes; above minNodes, the check runs on scale-up.
    Default: 2."""
    min_bus_bandwidth: Number | None = Field(default=None, gt=0)
    """The floor, in GB/s of bus bandwidth at the largest message size. Default: the catalog's figure
    for the machine and fabric, else half the fabric's nominal bandwidth; required where neither is
    known."""
    test: NcclTest = "all_reduce_perf"
    """all_reduce_perf | all_gather_perf | reduce_scatter_perf | alltoall_perf. Default: all_reduce_perf."""
    sizes: NcclSizesSpec = Field(default_factory=NcclSizesSpec)
    """The message sizes: `{min, max, factor}`. Default: 1M to 8G (1G on GPUs under 40 GiB), doubling."""
    image: ImageRef | None = None
    """The NCCL-tests image (with mpirun, sshd and the fabric's NCCL plugin). Default: a pinned public
    image for the pool's fabric."""
    timeout_minutes: Count = Field(default=30, ge=5, le=24 * 60)
    """How long the gate may take, image pulls included, before it fails. Default: 30."""

    @property
    def stated(self) -> list[str]:
        """The keys set beside `enabled`, as config names."""
        return [type(self).model_fields[f].alias or f for f in sorted(self.model_fields_set - {"enabled"})]


class NodeCheckSpec(Spec):
    """Each node's check when it joins the pool: it comes up tainted, and takes work only once its GPUs, its
    fabric NICs and its NVLink pass."""

    enabled: bool = True
    """Check every new node before it takes work. Default: on."""
    dcgm_level: DcgmLevel = 2
    """The DCGM diagnostic level: 1 (seconds: deployment and software), 2 (about 2 minutes: adds PCIe, memory
    and a short stress), 3 (about 30 minutes), 4 (an hour or more). Default: 2."""
    min_bus_bandwidth: Number | None = Field(default=None, gt=0)
    """The single-node all_reduce floor across the node's GPUs, in GB/s of bus bandwidth at the largest
    message size. Default: derived from the GPU's NVLink bandwidth (catalog); none on GPUs without NVLink,
    where the result is recorded but not judged."""
    image: ImageRef | None = None
    """The NCCL-tests image of the NVLink test. Default: the fabric check's image for the pool's fabric."""
    dcgm_image: ImageRef | None = None
    """The DCGM image the diagnostics run in. Default: NVIDIA's pinned DCGM image."""
    timeout_minutes: Count = Field(default=60, ge=5, le=24 * 60)
    """How long one node's check may take before it counts as failed. Default: 60."""


def nccl_bytes(size: str) -> int:
    """The bytes of an nccl-tests size (K, M and G are powers of 1024, as nccl-tests reads them)."""
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size[-1], 1)
    return int(size.rstrip("KMG")) * scale


class NodePoolSpec(Spec):
    """A pool of identical GPU nodes."""

    name: DnsLabel
    """Pool name; jobs refer to it as `nodePool`. Required."""
    instance_type: str | None = None
    """AWS instance type, e.g. p5.48xlarge. Required on AWS."""
    machine_type: str | None = None
    """GCP machine type, e.g. a3-highgpu-8g. Required on GCP."""
    accelerator_type: str | None = None
    """GCP accelerator type. Default: from the catalog for the machine type."""
    gpus_per_node: Count | None = Field(default=None, ge=1)
    """GPUs per node. Required on existing clusters; elsewhere derived from the catalog, and a
    stated value that contradicts it is an error. Default: from the catalog."""
    gpu_model: str | None = None
    """GPU model, for summaries. Default: from the catalog."""
    allocatable: AllocatableSpec = Field(default_factory=AllocatableSpec)
    """What one node advertises as allocatable: `{cpu, memory}`. For a machine the catalog does not know (an existing
    cluster's pool without instanceType, or a type not catalogued); the catalog's figures are used otherwise, and on
    an existing cluster a stated figure replaces them (its kubelet's reservations are its own). Default: the
    catalog's, else unknown."""
    min_nodes: Count = Field(default=0, ge=0)
    """Minimum nodes. Default: 0."""
    max_nodes: Count | None = Field(default=None, ge=1)
    """Maximum nodes; a job's `nodes` may not exceed it. Default: the most nodes a job of this stack
    asks of the pool (its `nodes`, or `elastic.maxNodes`), and at least minNodes and 1."""
    zone: str | None = None
    """The zone the pool lives in. Required with EFA or a placement group. Default: none."""
    taints: list[Taint] | None = None
    """Node taints. Default: nvidia.com/gpu=true:NoSchedule (nvidia.com/gpu=present:NoSchedule on
    GKE, the taint GKE sets itself)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra node labels. Default: none."""
    placement: Literal["cluster", "compact", "none"] | None = None
    """cluster (AWS cluster placement group) | compact (GCP compact placement) | none. On GKE rack-scale pools
    (A4X, A4X Max) compact is a "1x72" workload policy, which keeps the pool in one NVLink sub-block of 18
    machines. Default: cluster on AWS, compact on GCP, none on existing clusters (none on reserved capacity,
    except GKE rack-scale pools with a zone, which get compact)."""
    capacity: CapacitySpec = Field(default_factory=CapacitySpec)
    """How nodes are bought. Default: on-demand; flex-start on GKE pools with queuedProvisioning."""
    queued_provisioning: QueuedProvisioningSpec = Field(default_factory=QueuedProvisioningSpec)
    """Capacity provisioned on demand, all at once, before Kueue admits a job (`{enabled, className, retries}`, or
    `true`): GKE's DWS flex-start with queued provisioning, or the Cluster Autoscaler's ProvisioningRequests on EKS
    node group pools. Needs scheduler.type kueue. Default: off."""
    fabric: Fabric | None = None
    """efa | infiniband | roce | tcpx | tcpxo | rdma | tcp. Default: the machine's fastest: efa for an
    AWS type with EFA; on GKE tcpx for a3-highgpu-8g, tcpxo for a3-megagpu-8g, rdma for a3-ultragpu-8g
    and a4-highgpu-8g; else tcp, which is also the explicit opt-out."""
    accelerator_network_profile: Literal["auto", "none"] | None = None
    """GKE rdma pools: auto (GKE makes the RDMA networks itself and pods claim the NICs through DRA,
    device class mrdma.google.com; GKE 1.34.1-gke.1829001 and later) or none (this stack makes the
    RoCE VPC, its subnets and the Network objects). Default: auto when cluster.kubernetesVersion is
    1.35 or later, else none (on 1.34, set auto once the cluster runs 1.34.1-gke.1829001 or later). Not
    allowed on bare metal (A4X Max), whose NICs are on the metal RoCE network this stack attaches."""
    networks: list[DnsLabel] = Field(default_factory=list)
    """NetworkAttachmentDefinitions a pod on this pool attaches (infiniband / roce). Default: none."""
    node_selector: dict[str, str] = Field(default_factory=dict)
    """Existing clusters: the labels that find this pool's nodes. Default, when the stack has this one
    pool and installs the GPU Operator: nvidia.com/gpu.present=true, the label its GPU Feature
    Discovery puts on every GPU node; required otherwise."""
    disk_size_gb: Count = Field(default=500, ge=20, le=16384)
    """Root disk size in GiB, at most 16384 (an EBS gp3 volume's largest, as Karpenter's EC2NodeClass volumeSize
    and the EBS user guide state it; a larger root disk is no GPU node's need on any provider). Default: 500."""
    gpu_driver_version: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"] = "DEFAULT"
    """GKE-managed driver version. Default: DEFAULT."""
    provisioner: Literal["karpenter", "nodegroup"] | None = None
    """EKS: what makes the pool's nodes. karpenter (a NodePool and EC2NodeClass: nodes appear when
    pods need them and go when empty) or nodegroup (a managed node group, scaled between minNodes
    and maxNodes by the Cluster Autoscaler). Default: karpenter for pools that scale from zero
    (minNodes 0), nodegroup for pools that keep minNodes nodes warm."""
    local_storage: Literal["raid0", "none"] | None = None
    """The machine's local NVMe or SSD disks: raid0 (one RAID0 array for the container runtime, images
    and pods' ephemeral storage) or none. Default: raid0 when the catalog says the machine has
    local disks, else none."""
    rails: RailsSpec | None = None
    """roce / infiniband: the node's GPU rails, declared once. `{count: 8, interfaces: "ens{n}f0np0",
    devices: "mlx5_{i}", range: 192.168.0.0/16, speedGbps: 400}` makes one NAD per rail (<pool>-rail-0,
    <pool>-rail-1, ...) and attaches them all; `rails: 8` (or count, devices and speedGbps alone) only
    states them, for a pool that lists its rails' NADs by hand in `networks`. Default: none."""
    traffic_class: Count | None = Field(default=None, ge=0, le=255)
    """roce / infiniband: NCCL_IB_TC, the traffic class NCCL's RDMA traffic carries, matching the
    fabric's lossless (PFC / ECN) class: DSCP x 4, plus the ECN bits (e.g. 106 for DSCP 26). Default:
    unset (NCCL's 0)."""
    service_level: Count | None = Field(default=None, ge=0, le=15)
    """roce / infiniband: NCCL_IB_SL, the InfiniBand service level (the priority on RoCE) of NCCL's
    traffic. Default: unset (NCCL's 0)."""
    nvlink_domain_nodes: Count | None = Field(default=None, ge=2)
    """Rack-scale NVLink pools (GB200 / GB300): the most nodes one NVLink domain of this pool joins, e.g. 9
    for AWS's u-p6e-gb200x36 UltraServer. Default: the whole rack the GPU model comes in (18 for NVL72)."""
    fabric_check: FabricCheckSpec = Field(default_factory=FabricCheckSpec)
    """The fabric acceptance gate: `{enabled, nodes, minBusBandwidth, test, minBytes, maxBytes, image}`.
    Default: on for a fast fabric with minNodes of 2 or more, at the catalog's floor."""
    node_check: NodeCheckSpec = Field(default_factory=NodeCheckSpec)
    """Each node's check at join: `{enabled, dcgmLevel, minBusBandwidth, image, dcgmImage, timeoutMinutes}`.
    Default: on, DCGM level 2, the NVLink floor derived from the catalog."""

    def rail_networks(self) -> list[NetworkSpec]:
        """The NADs this pool's rails make: none when it has no rails or lists its networks by hand."""
        if self.rails is None or self.networks or not self.rails.makes_nads:
            return []
        return self.rails.networks(self.name, self.fabric)

    @model_validator(mode="after")
    def _rdma_keys(self) -> NodePoolSpec:
        fabric = f"'{self.fabric}'" if self.fabric else "unset (set fabric: roce or infiniband)"
        for key in ("trafficClass", "serviceLevel"):
            if getattr(self, snake(key)) is not None and self.fabric not in ("roce", "infiniband"):
                raise at(key, f"applies to roce and infiniband pools, and this pool's fabric is {fabric}")
        # GKE GPUDirect pools' rails are their GPU NICs, checked against the machine when the pool
        # resolves, as are rails stating a count on a pool whose fabric comes from its machine.
        states_only = self.rails is not None and not self.rails.makes_nads
        if self.rails is not None and not (states_only and self.fabric in (None, *GPUDIRECT_FABRICS)):
            found = self.rails.problem(self.fabric, by_hand=bool(self.networks))
            if found:
                key, message = found
                raise at(f"rails.{key}" if key else "rails", message)
            last = f"{self.name}-rail-{self.rails.count - 1}"
            if len(last) > 63:
                raise at("name", f"the rails' NAD names ({last}) pass 63 characters: shorten the pool name")
        return self

    @model_validator(mode="after")
    def _sizes(self) -> NodePoolSpec:
        if self.max_nodes is not None and self.min_nodes > self.max_nodes:
            raise at("minNodes", f"minNodes ({self.min_nodes}) is greater than maxNodes ({self.max_nodes})")
        if self.fabric in ("efa", "tcp", *GPUDIRECT_FABRICS) and self.networks:
            raise at("networks", f"`networks` attach secondary RDMA networks; a '{self.fabric}' pool takes none")
        return self
