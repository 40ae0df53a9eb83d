"""A GPU machine type and the facts a training job is sized from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from components.catalog.gpus import nvlink_domain_nodes
from components.catalog.kinds import Arch, GpuDirect, Provider


@dataclass(frozen=True, slots=True)
class MachineType:
    """A GPU instance (AWS) or machine (GCP) type and the facts a training job needs."""

    name: str
    provider: Provider
    gpus: int
    """GPUs per node."""
    gpu_model: str
    """Human-readable GPU model, e.g. "NVIDIA H100 80GB"."""
    gpu_memory_gib: int
    """Memory per GPU."""
    vcpus: int
    memory_gib: int
    """Host memory: GiB on AWS; on GCP the documented figure, which Google labels GB."""
    efa_interfaces: int = 0
    """AWS: maximum EFA interfaces (0 = no EFA support)."""
    network_cards: int = 1
    """AWS: number of network cards."""
    efa_card_indices: tuple[int, ...] = ()
    """AWS: the network cards that carry an EFA-only interface, where AWS prescribes which (p6e-gb200: one card of
    each GPU's pair); empty: one EFA per card in order, card 0 included unless it carries ENA only
    (`first_efa_card`)."""
    efa_gbps: float = 0
    """AWS: the EFA bandwidth the GPUs can use together, where it is below the instance's network bandwidth
    (p6e-gb200: 400 Gbps per GPU); 0: the network bandwidth."""
    gpudirect_rdma: bool = False
    """AWS: EFA supports GPUDirect RDMA (FI_EFA_USE_DEVICE_RDMA=1); p4d and newer P instances."""
    accelerator_type: str | None = None
    """GCP: guest accelerator type, e.g. "nvidia-h100-80gb"."""
    local_storage_gb: int = 0
    """Local NVMe (AWS instance store) or local SSD (GCP) the machine comes with, all disks together, in GB."""
    local_ssds: int = 0
    """GCP: the local SSDs that come with the machine (375 GB each; 3,000 GiB Titanium SSDs on A4X and A4X Max);
    GKE must be told their count."""
    network_gbps: float = 0
    """The machine's network bandwidth, every NIC together, in Gbps (0 = not recorded): AWS, the instance's;
    GCP, Google's "max total bandwidth", which counts the gVNICs beside the GPU NICs."""
    gpudirect: GpuDirect | None = None
    """GCP: the machine's GPUDirect fabric, if it has GPU NICs."""
    gpu_nics: int = 0
    """GCP: NICs that carry GPU traffic, beside eth0 (and the extra gVNIC, if any)."""
    gpu_nic_gbps: int = 0
    """GCP: line rate of one GPU NIC, in Gbps."""
    extra_gvnics: int = 0
    """GCP: gVNICs beside eth0 that GKE attaches to their own network (A3 Ultra and A4 have one)."""
    gib_tuner_config: str = ""
    """GCP RDMA: the file name of this machine's NCCL tuner profile in the gIB installer's configs directory."""
    gke_least_versions: tuple[str, ...] = ()
    """GCP GPUDirect: the least GKE version its fabric runs on in each minor that has one, oldest first; no
    minor below the first one runs it, and minors above the last have no least patch."""
    busbw_floor_gbs: float = 0
    """The least NCCL bus bandwidth in GB/s a healthy pair of these machines reaches on their own fabric,
    at the largest message size, from a public figure (0 = none published)."""
    busbw_floor_source: str = ""
    """Where `busbw_floor_gbs` comes from, in a few words."""
    arch: Arch = "x86_64"
    """The host CPU's architecture: images, AMIs and plugin installers must match it (Grace machines are arm64)."""
    bare_metal: bool = False
    """GCP: a bare-metal machine (A4X Max), whose RDMA NICs are physical functions on the zone's metal RoCE network
    profile (vpc-roce-metal), and whose host NIC beside eth0 is IDPF rather than gVNIC."""

    def __post_init__(self) -> None:
        """Reject figures no real machine type can have."""
        for attr in ("gpus", "gpu_memory_gib", "vcpus", "memory_gib", "network_cards"):
            value = getattr(self, attr)
            if value < 1:
                raise ValueError(f"{self.name}: {attr} must be at least 1, got {value}")
        if not 0 <= self.efa_interfaces <= self.network_cards:
            raise ValueError(
                f"{self.name}: efa_interfaces ({self.efa_interfaces}) must be between 0 and "
                f"network_cards ({self.network_cards})"
            )
        if self.efa_card_indices and (
            len(self.efa_card_indices) != self.efa_interfaces
            or not all(0 < card < self.network_cards for card in self.efa_card_indices)
        ):
            raise ValueError(
                f"{self.name}: efa_card_indices {self.efa_card_indices} must name {self.efa_interfaces} cards "
                f"from 1 to {self.network_cards - 1}"
            )
        if self.gpudirect_rdma and not self.efa_interfaces:
            raise ValueError(f"{self.name}: gpudirect_rdma needs at least one EFA interface")
        if bool(self.gpudirect) != bool(self.gpu_nics and self.gpu_nic_gbps):
            raise ValueError(f"{self.name}: a GPUDirect fabric comes with its GPU NICs and their line rate")
        if self.network_gbps and self.network_gbps < self.fabric_gbps:
            raise ValueError(f"{self.name}: the machine's {self.network_gbps} Gbps cannot be below its GPU fabric's")

    @property
    def nvlink_domain_nodes(self) -> int:
        """The most machines of this type one NVLink domain joins; 0 when NVLink stays inside the machine."""
        return nvlink_domain_nodes(self.gpu_model)

    @property
    def first_efa_card(self) -> int:
        """AWS: the first network card that carries EFA: 0, or 1 on a type with fewer EFA interfaces than network
        cards, whose card 0 carries ENA only (p6-b300, p6e-gb200). aws-parallelcluster infers it the same way from
        DescribeInstanceTypes (cli/src/pcluster/templates/queues_stack.py, add_network_interfaces)."""
        if self.efa_card_indices:
            return self.efa_card_indices[0]
        return 1 if 0 < self.efa_interfaces < self.network_cards else 0

    @property
    def efa_cards(self) -> tuple[int, ...]:
        """AWS: the network card of each EFA interface, in order (card 0's sits behind the ENA primary)."""
        if self.efa_card_indices:
            return self.efa_card_indices
        first = self.first_efa_card
        return tuple(range(first, first + self.efa_interfaces))

    @property
    def has_efa(self) -> bool:
        """Whether the type supports at least one EFA interface."""
        return self.efa_interfaces > 0

    @property
    def fabric(self) -> Literal["efa", "tcpx", "tcpxo", "rdma", "tcp"]:
        """The fastest fabric the machine offers its GPUs: what a pool of it gets by default."""
        if self.has_efa:
            return "efa"
        return self.gpudirect or "tcp"

    @property
    def fabric_gbps(self) -> float:
        """Nominal bandwidth of the machine's GPU fabric in Gbps: all EFA cards (the instance's
        network bandwidth), or every GPU NIC's line rate; on a machine without either, its network
        bandwidth. 0 when not recorded."""
        if self.provider == "gcp" and self.gpudirect:
            return self.gpu_nics * self.gpu_nic_gbps
        return self.efa_gbps or self.network_gbps

    @property
    def gvnic_gbps(self) -> float:
        """GCP: the bandwidth of the gVNICs beside the GPU NICs (eth0 and any extra one), which NCCL's GPU
        traffic does not use: the machine's total less its GPU fabric; 0 when not recorded."""
        if self.provider != "gcp" or not self.network_gbps:
            return 0
        return self.network_gbps - self.fabric_gbps
