"""GPU instance types (AWS) and machine types (GCP) with the facts a training job is sized from.

Pure data, standard library only. Each family below cites where its figures were checked. Two
machine-readable sources carry most AWS figures, both generated from the EC2 DescribeInstanceTypes
API:

* [KIT] Karpenter, "Instance Types" reference, https://karpenter.sh/docs/reference/instance-types/
  (aws/karpenter-provider-aws @1d927085, website/content/en/docs/reference/instance-types.md, last
  changed 2026-07-11; the preview copy has the same figures): GPU count, GPU name and memory
  (MiB), vCPUs, memory (MiB) and the `vpc.amazonaws.com/efa` resource, which is
  EfaInfo.MaximumEfaInterfaces.
* [VPC] aws/karpenter-provider-aws, pkg/providers/instancetype/zz_generated.vpclimits.go
  (generated 2026-08-06): the NetworkCards list of each type, i.e. MaximumNetworkCards.

Most GCP figures come from:

* [SKY] skypilot-org/skypilot-catalog, catalogs/v8/gcp/vms.csv (generated from the Compute Engine
  API): vCPUs and memory per machine type.
* [GCPGPU] Google Cloud, "GPU machine types", https://cloud.google.com/compute/docs/gpus: the
  accelerator type attached to each series.
* [CT] GoogleCloudPlatform/cluster-toolkit @1047080, pkg/config/hardware.go (AcceleratorShorthandMap,
  ValidGPUAccelerators): GPU count per machine type and the accelerator type names.

Units: AWS memory is GiB, as EC2 documents it. GCP memory is the number Google documents, which
Google labels "GB". [SKY], built from the Compute Engine API, has the same numbers in a column it
names MemoryGiB (a3-highgpu-8g: 1872), so they are most likely binary GiB; Google's text does not
say so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Provider = Literal["aws", "gcp"]
AS_OF = "2026-08-06"
"""The day of the catalog's newest machine-readable source ([VPC]): types launched later are not in it."""
Arch = Literal["x86_64", "arm64"]
KUBERNETES_ARCH: dict[str, str] = {"x86_64": "amd64", "arm64": "arm64"}
"""The kubernetes.io/arch value of each CPU architecture."""
GpuDirect = Literal["tcpx", "tcpxo", "rdma"]
"""GKE's GPUDirect fabrics: TCPX (A3 High), TCPXO (A3 Mega), RDMA over RoCE with gIB (A3 Ultra, A4)."""


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


# (size, gpus, vcpus, memory_gib, efa_interfaces, network_cards)
_AwsRow = tuple[str, int, int, int, int, int]
# (suffix, gpus, vcpus, memory as documented)
_GcpRow = tuple[str, int, int, int]


def _aws_family(
    family: str,
    gpu_model: str,
    gpu_memory_gib: int,
    rows: list[_AwsRow],
    *,
    gpudirect_rdma: bool = False,
    arch: Arch = "x86_64",
) -> dict[str, MachineType]:
    """One AWS instance family: `family.size` for each row."""
    return {
        f"{family}.{size}": MachineType(
            name=f"{family}.{size}",
            provider="aws",
            gpus=gpus,
            gpu_model=gpu_model,
            gpu_memory_gib=gpu_memory_gib,
            vcpus=vcpus,
            memory_gib=memory,
            efa_interfaces=efa,
            network_cards=cards,
            gpudirect_rdma=gpudirect_rdma,
            arch=arch,
        )
        for size, gpus, vcpus, memory, efa, cards in rows
    }


def _gcp_family(
    prefix: str,
    gpu_model: str,
    gpu_memory_gib: int,
    accelerator_type: str,
    rows: list[_GcpRow],
) -> dict[str, MachineType]:
    """One GCP machine series: `prefix-suffix` for each row."""
    return {
        f"{prefix}-{suffix}": MachineType(
            name=f"{prefix}-{suffix}",
            provider="gcp",
            gpus=gpus,
            gpu_model=gpu_model,
            gpu_memory_gib=gpu_memory_gib,
            vcpus=vcpus,
            memory_gib=memory,
            accelerator_type=accelerator_type,
        )
        for suffix, gpus, vcpus, memory in rows
    }


# ---------------------------------------------------------------------------------------------
# AWS
# ---------------------------------------------------------------------------------------------

_AWS: dict[str, MachineType] = {
    # P4d / P4de: 8x A100 (40 GB on p4d, 80 GB on p4de), 96 vCPU, 1152 GiB, 4 EFA on 4 cards.
    # Sources: [KIT] (gpu-memory 40960 / 81920 MiB, efa 4); [VPC] (4 network cards). EFA GPUDirect
    # RDMA from p4d on: aws/aws-ofi-nccl#547, per /work/shared/research/aws-anchors.md section 2.
    **_aws_family("p4d", "NVIDIA A100 40GB", 40, [("24xlarge", 8, 96, 1152, 4, 4)], gpudirect_rdma=True),
    **_aws_family("p4de", "NVIDIA A100 80GB", 80, [("24xlarge", 8, 96, 1152, 4, 4)], gpudirect_rdma=True),
    # P5: H100 80 GB. p5.48xlarge: 8 GPUs, 192 vCPU, 2048 GiB, 32 EFA on 32 cards.
    # p5.4xlarge: 1 GPU, 16 vCPU, 256 GiB, 1 EFA on 1 card.
    # Sources: [KIT], [VPC]; AWS, "Maximize network bandwidth on accelerated computing instances
    # with EFA", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/p5-efa.html (P5 and P5e: up
    # to 32 network cards), read in its pt_BR copy. GPUDirect RDMA for p5.4xlarge is inferred from
    # the family; no page read says so for that size.
    **_aws_family(
        "p5",
        "NVIDIA H100 80GB",
        80,
        [("4xlarge", 1, 16, 256, 1, 1), ("48xlarge", 8, 192, 2048, 32, 32)],
        gpudirect_rdma=True,
    ),
    # P5e: 8x H200 141 GB, 192 vCPU, 2048 GiB, 32 EFA on 32 cards.
    # Sources: [KIT] (gpu-memory 144384 MiB = 141 GiB), [VPC]; p5-efa.html as for P5.
    **_aws_family("p5e", "NVIDIA H200 141GB", 141, [("48xlarge", 8, 192, 2048, 32, 32)], gpudirect_rdma=True),
    # P5en: 8x H200 141 GB, 192 vCPU, 2048 GiB, 16 EFA on 16 cards.
    # Sources: [KIT] (efa 16), [VPC] (16 cards). Not confirmed on an AWS documentation page.
    **_aws_family("p5en", "NVIDIA H200 141GB", 141, [("48xlarge", 8, 192, 2048, 16, 16)], gpudirect_rdma=True),
    # P6-B200: 8x B200, 192 vCPU, 2048 GiB, 8 EFA on 8 cards.
    # Sources: [KIT] (gpu-memory 183359 MiB, about 179 GiB; efa 8), [VPC] (8 cards). AWS marketing
    # material says 1440 GB for 8 GPUs (180 GB each); 179 is the API figure. No AWS documentation
    # page confirming the EFA or card count was read.
    **_aws_family("p6-b200", "NVIDIA B200", 179, [("48xlarge", 8, 192, 2048, 8, 8)], gpudirect_rdma=True),
    # P6-B300: 8x B300, 192 vCPU, 4096 GiB, 16 EFA on 17 cards. Card 0 carries ENA only; cards 1-16 carry EFA
    # (see `first_efa_card`). Sources: [KIT] (gpu-memory 275040 MiB, about 268 GiB, which public nvidia-smi
    # output shows too; NVIDIA's nominal figure is 288 GB; efa 16), [VPC] (17 cards, 4 interfaces each);
    # aws/aws-parallelcluster#7143, quoting AWS engineering (2025-12): "P6-B300 has 17 network cards, of which
    # the primary network card (network card index 0) only supports ENA". GPUDirect RDMA is inferred from the
    # family; no page read says so for B300.
    **_aws_family("p6-b300", "NVIDIA B300", 268, [("48xlarge", 8, 192, 4096, 16, 17)], gpudirect_rdma=True),
    # P6e-GB200: 4x B200 on two GB200 superchips (Grace, arm64), 144 vCPU, 960 GiB; sold only as UltraServers
    # (u-p6e-gb200x36: 9 instances, x72: 18) through Capacity Blocks. Neither [KIT] nor [VPC] lists the type
    # (Karpenter's generator hard-codes it as a preview type). vCPU and memory: AWS's P6e-GB200 table as
    # third-party copies of it show it (144 vCPU, 960 GiB, "740 GB" of GPU memory for 4 GPUs: 185 each, nominal).
    # EFA: the EC2 User Guide, "EFA configuration for P6e-GB200 instances" (efa-acc-inst-types, #efa-for-p6e):
    # 17 network cards; card 0 carries ENA only (100 Gbps); cards 1-16 pair up on 8 physical 400 Gbps NICs
    # ([1, 2], [3, 4], ...), and each GPU sends over the pairs [1, 3], [5, 7], [9, 11], [13, 15] at most 400 Gbps
    # of EFA, so 1,600 Gbps in all. AWS's layout for it: one EFA-only interface on each GPU's first card, 1, 5, 9
    # and 13 (4 x 400 Gbps; 8 x 200 Gbps on the odd cards is the same total). The EKS UltraServer guide expects 4
    # allocatable EFA devices per node with it, NVIDIA AICR's EKS Terraform launches the same cards, and AWS's
    # UltraServer figure (28.8 Tbps of EFA per u-p6e-gb200x72) is 1,600 Gbps per instance.
    **{
        name: replace(machine, efa_card_indices=(1, 5, 9, 13), efa_gbps=1600)
        for name, machine in _aws_family(
            "p6e-gb200", "NVIDIA GB200", 185, [("36xlarge", 4, 144, 960, 4, 17)], gpudirect_rdma=True, arch="arm64"
        ).items()
    },
    # G7e: RTX PRO 6000 Blackwell Server Edition, 96 GB. EFA from 8xlarge up: 1 on 8xlarge and 12xlarge, 2 on
    # 24xlarge (2 cards), 4 on 48xlarge (4 cards). Sources: [KIT] (every figure; gpu-memory 98304 MiB), [VPC]
    # (cards). GPUDirect RDMA over EFA is not recorded: no source read says so.
    **_aws_family(
        "g7e",
        "NVIDIA RTX PRO 6000 Blackwell",
        96,
        [
            ("2xlarge", 1, 8, 64, 0, 1),
            ("4xlarge", 1, 16, 128, 0, 1),
            ("8xlarge", 1, 32, 256, 1, 1),
            ("12xlarge", 2, 48, 512, 1, 1),
            ("24xlarge", 4, 96, 1024, 2, 2),
            ("48xlarge", 8, 192, 2048, 4, 4),
        ],
    ),
    # G5: A10G 24 GB. EFA (1 interface) from 8xlarge up; one network card on every size.
    # Sources: AWS Batch, "Run GPU jobs", https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html
    # (GPUs, 24 GiB GPU memory, vCPUs and memory per size; read in its pt_BR, de_DE and ko_KR copies);
    # [KIT] (efa per size; the API reports 22888 MiB usable per GPU); [VPC] (1 card).
    **_aws_family(
        "g5",
        "NVIDIA A10G",
        24,
        [
            ("xlarge", 1, 4, 16, 0, 1),
            ("2xlarge", 1, 8, 32, 0, 1),
            ("4xlarge", 1, 16, 64, 0, 1),
            ("8xlarge", 1, 32, 128, 1, 1),
            ("12xlarge", 4, 48, 192, 1, 1),
            ("16xlarge", 1, 64, 256, 1, 1),
            ("24xlarge", 4, 96, 384, 1, 1),
            ("48xlarge", 8, 192, 768, 1, 1),
        ],
    ),
    # G6: L4 24 GB. Same GPU, vCPU, memory and EFA layout as G5.
    # Sources: AWS Batch "Run GPU jobs" (g6.xlarge-16xlarge rows, ko_KR copy); [KIT] for every
    # size including 12/24/48xlarge and the efa counts; [VPC] (1 card).
    **_aws_family(
        "g6",
        "NVIDIA L4",
        24,
        [
            ("xlarge", 1, 4, 16, 0, 1),
            ("2xlarge", 1, 8, 32, 0, 1),
            ("4xlarge", 1, 16, 64, 0, 1),
            ("8xlarge", 1, 32, 128, 1, 1),
            ("12xlarge", 4, 48, 192, 1, 1),
            ("16xlarge", 1, 64, 256, 1, 1),
            ("24xlarge", 4, 96, 384, 1, 1),
            ("48xlarge", 8, 192, 768, 1, 1),
        ],
    ),
    # G6e: L40S 48 GB. EFA from 8xlarge up; 24xlarge has 2 EFA on 2 cards, 48xlarge 4 on 4.
    # Sources: [KIT] (every figure; the API reports 45776 MiB per GPU, 48 GB is NVIDIA's nominal
    # size); [VPC] (cards); p5-efa.html (G6e: up to four network cards).
    **_aws_family(
        "g6e",
        "NVIDIA L40S",
        48,
        [
            ("xlarge", 1, 4, 32, 0, 1),
            ("2xlarge", 1, 8, 64, 0, 1),
            ("4xlarge", 1, 16, 128, 0, 1),
            ("8xlarge", 1, 32, 256, 1, 1),
            ("12xlarge", 4, 48, 384, 1, 1),
            ("16xlarge", 1, 64, 512, 1, 1),
            ("24xlarge", 4, 96, 768, 2, 2),
            ("48xlarge", 8, 192, 1536, 4, 4),
        ],
    ),
}


# ---------------------------------------------------------------------------------------------
# GCP
# ---------------------------------------------------------------------------------------------

_GCP: dict[str, MachineType] = {
    # A2 Standard: A100 40 GB, accelerator nvidia-tesla-a100; 12 vCPU and 85 GB per GPU.
    # Sources: [GCPGPU] (A2 Standard carries the 40 GB A100 as nvidia-tesla-a100); [SKY] (vCPU,
    # memory);
    # [CT] (a100-40gb-N -> a2-highgpu-Ng, a2-megagpu-16g).
    **_gcp_family(
        "a2-highgpu",
        "NVIDIA A100 40GB",
        40,
        "nvidia-tesla-a100",
        [("1g", 1, 12, 85), ("2g", 2, 24, 170), ("4g", 4, 48, 340), ("8g", 8, 96, 680)],
    ),
    **_gcp_family("a2-megagpu", "NVIDIA A100 40GB", 40, "nvidia-tesla-a100", [("16g", 16, 96, 1360)]),
    # A2 Ultra: A100 80 GB, accelerator nvidia-a100-80gb; 12 vCPU and 170 GB per GPU.
    # Sources: [GCPGPU] (A2 Ultra carries the 80 GB A100 as nvidia-a100-80gb); [SKY]; cluster-toolkit
    # docs/gpu-support.md (a2-ultragpu-8g -> nvidia-a100-80gb). cluster-toolkit's
    # pkg/config/machine_mappings.json maps a2-ultragpu to nvidia-tesla-a100; that contradicts
    # Google's page and is not followed.
    **_gcp_family(
        "a2-ultragpu",
        "NVIDIA A100 80GB",
        80,
        "nvidia-a100-80gb",
        [("1g", 1, 12, 170), ("2g", 2, 24, 340), ("4g", 4, 48, 680), ("8g", 8, 96, 1360)],
    ),
    # A3 High: H100 80 GB, accelerator nvidia-h100-80gb; 26 vCPU and 234 GB per GPU.
    # Sources: [GCPGPU] (a3-highgpu-8g: 8 GPUs, 208 vCPUs, 1872 GB); Google Cloud,
    # "Accelerator-optimized machine family",
    # https://cloud.google.com/compute/docs/accelerator-optimized-machines (A3: 208 vCPUs, 1,872 GB);
    # [SKY] (1g/2g/4g); [CT].
    **_gcp_family(
        "a3-highgpu",
        "NVIDIA H100 80GB",
        80,
        "nvidia-h100-80gb",
        [("1g", 1, 26, 234), ("2g", 2, 52, 468), ("4g", 4, 104, 936), ("8g", 8, 208, 1872)],
    ),
    # A3 Mega: H100 80 GB Mega, accelerator nvidia-h100-mega-80gb.
    # Sources: [GCPGPU] (A3 Mega carries the H100 80GB Mega as nvidia-h100-mega-80gb); [SKY]; [CT].
    **_gcp_family("a3-megagpu", "NVIDIA H100 80GB Mega", 80, "nvidia-h100-mega-80gb", [("8g", 8, 208, 1872)]),
    # A3 Ultra: H200 141 GB, accelerator nvidia-h200-141gb.
    # Sources: [GCPGPU] (A3 Ultra: NVIDIA H200 SXM; the type name is cut off in the copy read);
    # [CT] (h200-141gb-8 -> a3-ultragpu-8g; ValidGPUAccelerators lists nvidia-h200-141gb); [SKY].
    **_gcp_family("a3-ultragpu", "NVIDIA H200 141GB", 141, "nvidia-h200-141gb", [("8g", 8, 224, 2952)]),
    # A4: B200, accelerator nvidia-b200. GPU memory 180 is the vendor's nominal per-GPU figure (as a
    # third-party P6-B200 article states it); no Google page read here showed A4's GPU memory, and
    # EC2 reports the same GPU as about 179 GiB (see p6-b200).
    # Sources: [GCPGPU] (A4 carries B200 GPUs as nvidia-b200); [CT] (b200-8); [SKY].
    **_gcp_family("a4-highgpu", "NVIDIA B200", 180, "nvidia-b200", [("8g", 8, 224, 3968)]),
    # A4X: 4 x B200 of two GB200 Grace Blackwell Superchips (arm64 Grace, Neoverse V2), accelerator nvidia-gb200,
    # 140 vCPUs, 884 GB, 744 GB HBM3e (186 per GPU). A4X Max (bare metal): 4 x B300 of two GB300 Grace Blackwell
    # Ultra Superchips, accelerator nvidia-gb300, 144 vCPUs, 960 GB, 1,116 GB HBM3e (279 per GPU). Both are NVL72
    # racks: 18 machines, 72 GPUs in one NVLink domain (catalog.nvlink_domain_nodes).
    # Sources: Google Cloud, "Accelerator-optimized machine family",
    # https://cloud.google.com/compute/docs/accelerator-optimized-machines (A4X Max and A4X tables: vCPUs, memory,
    # GPU memory, 6 physical NICs, 12,000 GiB local SSD, 2,000 / 3,600 Gbps); [CT] (gb200-4 -> a4x-highgpu-4g,
    # ValidGPUAccelerators nvidia-gb200; examples/gke-a4x-max-bm: nvidia-gb300, a4x-maxgpu-4g-metal, 4 GPUs).
    **{
        n: replace(m, arch="arm64")
        for n, m in {
            **_gcp_family("a4x-highgpu", "NVIDIA GB200", 186, "nvidia-gb200", [("4g", 4, 140, 884)]),
            **_gcp_family("a4x-maxgpu", "NVIDIA GB300", 279, "nvidia-gb300", [("4g-metal", 4, 144, 960)]),
        }.items()
    },
    # G4: RTX PRO 6000 Blackwell Server Edition, 96 GB GDDR7, accelerator nvidia-rtx-pro-6000; 48 vCPUs and 180 GB
    # per GPU. g4-standard-6/12/24 carry 1/8, 1/4 and 1/2 of a GPU, which a pool of whole GPUs cannot use, so they
    # are not catalogued. Network 50 / 100 / 200 / 400 Gbps on eth0 (two NICs on 384), no GPUDirect: NCCL runs on
    # TCP. Titanium SSD is optional on G4 (not bundled), so none is counted here.
    # Sources: "Accelerator-optimized machine family" (G4 table, as above); [CT] (rtx-6000-1/2/4/8 ->
    # g4-standard-48/96/192/384).
    **_gcp_family(
        "g4-standard",
        "NVIDIA RTX PRO 6000",
        96,
        "nvidia-rtx-pro-6000",
        [("48", 1, 48, 180), ("96", 2, 96, 360), ("192", 4, 192, 720), ("384", 8, 384, 1440)],
    ),
    # G2: L4 24 GB, accelerator nvidia-l4; 4 GB per vCPU. Only 24 (2), 48 (4) and 96 (8) carry more
    # than one GPU.
    # Sources: [GCPGPU] (G2 carries L4 GPUs as nvidia-l4); [SKY] (vCPU, memory); [CT] (l4-1/2/4/8 ->
    # g2-standard-12/24/48/96). The 1-GPU count of g2-standard-4/8/16/32 comes from third-party
    # code only (a GPU price table found by search), not from a Google page read here.
    **_gcp_family(
        "g2-standard",
        "NVIDIA L4",
        24,
        "nvidia-l4",
        [
            ("4", 1, 4, 16),
            ("8", 1, 8, 32),
            ("12", 1, 12, 48),
            ("16", 1, 16, 64),
            ("24", 2, 24, 96),
            ("32", 1, 32, 128),
            ("48", 4, 48, 192),
            ("96", 8, 96, 384),
        ],
    ),
}

# Local disks. AWS: instance-store NVMe, total GB per type, from [KIT]
# (karpenter.k8s.aws/instance-local-nvme), which matches AWS's instance-store table ("Specifications
# for accelerated computing instances"; p5.48xlarge: 8 x 3800 GB). GCP: local SSDs bundled with the
# machine, 375 GB each, from [CT] modules/compute/gke-node-pool/disk_definitions.tf (A3 High and
# Mega 16, A3 Ultra and A4 32). A2 Ultra also comes with local SSD, but its counts were not
# confirmed, so it has none here.
_AWS_LOCAL_NVME_GB = {
    "p4d.24xlarge": 8000,
    "p4de.24xlarge": 8000,
    "p5.4xlarge": 3800,
    "p5.48xlarge": 30400,
    "p5e.48xlarge": 30400,
    "p5en.48xlarge": 30400,
    "p6-b200.48xlarge": 30400,
    "p6-b300.48xlarge": 30400,
    # p6e-gb200: 22.5 TB, AWS's UltraServer figure (405 TB per u-p6e-gb200x72) over its 18 instances, as
    # third-party copies of AWS's table give it; not an API figure.
    "p6e-gb200.36xlarge": 22500,
    **{
        f"g7e.{size}": gb
        for size, gb in (
            ("2xlarge", 1900),
            ("4xlarge", 1900),
            ("8xlarge", 1900),
            ("12xlarge", 3800),
            ("24xlarge", 7600),
            ("48xlarge", 15200),
        )
    },
    **{
        f"{family}.{size}": gb
        for family in ("g5", "g6e")
        for size, gb in (
            ("xlarge", 250),
            ("2xlarge", 450),
            ("4xlarge", 600),
            ("8xlarge", 900),
            ("12xlarge", 3800),
            ("16xlarge", 1900),
            ("24xlarge", 3800),
            ("48xlarge", 7600),
        )
    },
    **{
        f"g6.{size}": gb
        for size, gb in (
            ("xlarge", 250),
            ("2xlarge", 450),
            ("4xlarge", 600),
            ("8xlarge", 900),
            ("12xlarge", 3760),
            ("16xlarge", 1880),
            ("24xlarge", 3760),
            ("48xlarge", 7520),
        )
    },
}
# A4X and A4X Max come with 4 Titanium SSDs, 12,000 GiB together (Google Cloud, "About Local SSD disks",
# https://cloud.google.com/compute/docs/disks/local-ssd, last updated 2026-04-14: the table of machine types that
# attach Local SSD automatically; "Accelerator-optimized machine family": 12,000 GiB). The total is kept in the
# same unit as the other GCP totals (A4's 32 x 375 = 12,000), as Google's tables give both.
_GCP_LOCAL_SSDS = {
    "a3-highgpu-8g": 16,
    "a3-megagpu-8g": 16,
    "a3-ultragpu-8g": 32,
    "a4-highgpu-8g": 32,
    "a4x-highgpu-4g": 4,
    "a4x-maxgpu-4g-metal": 4,
}
GCP_LOCAL_SSD_GB = 375
"""The size of one GCP local SSD."""
_GCP_LOCAL_SSD_SIZES = {"a4x-highgpu-4g": 3000, "a4x-maxgpu-4g-metal": 3000}
"""Machines whose bundled local SSDs are not GCP_LOCAL_SSD_GB each: the size of one."""
_AWS = {n: replace(m, local_storage_gb=_AWS_LOCAL_NVME_GB.get(n, 0)) for n, m in _AWS.items()}
_GCP = {
    n: replace(
        m,
        local_ssds=_GCP_LOCAL_SSDS.get(n, 0),
        local_storage_gb=_GCP_LOCAL_SSDS.get(n, 0) * _GCP_LOCAL_SSD_SIZES.get(n, GCP_LOCAL_SSD_GB),
    )
    for n, m in _GCP.items()
}

# Network bandwidth, from [KIT] (karpenter.k8s.aws/instance-network-bandwidth, Mbps, divided by 1000).
# On EFA types it is the sum of every network card, which is what the EFA devices together carry.
_AWS_NETWORK_GBPS: dict[str, float] = {
    "p4d.24xlarge": 400,
    "p4de.24xlarge": 400,
    "p5.4xlarge": 100,
    "p5.48xlarge": 3200,
    "p5e.48xlarge": 3200,
    "p5en.48xlarge": 3200,
    "p6-b200.48xlarge": 3200,
    "p6-b300.48xlarge": 6400,  # 16 x 400 Gbps EFA (aws-parallelcluster#7143; third-party: "6,400 Gbps EFA")
    # p6e-gb200: [KIT]'s generated bandwidth table (zz_generated.bandwidth.go, 3200000 Mbps): the 8 physical NICs'
    # 400 Gbps each, shared by EFA and ENA. Its GPUs use 1,600 of it over EFA (`efa_gbps`, above).
    "p6e-gb200.36xlarge": 3200,
    **{
        f"g7e.{size}": gbps
        for size, gbps in (
            ("2xlarge", 50),
            ("4xlarge", 50),
            ("8xlarge", 100),
            ("12xlarge", 400),
            ("24xlarge", 800),
            ("48xlarge", 1600),
        )
    },
    **{
        f"{family}.{size}": gbps
        for family in ("g5", "g6")
        for size, gbps in (
            ("xlarge", 2.5),
            ("2xlarge", 5),
            ("4xlarge", 10),
            ("8xlarge", 25),
            ("12xlarge", 40),
            ("16xlarge", 25),
            ("24xlarge", 50),
            ("48xlarge", 100),
        )
    },
    **{
        f"g6e.{size}": gbps
        for size, gbps in (
            ("xlarge", 2.5),
            ("2xlarge", 5),
            ("4xlarge", 20),
            ("8xlarge", 25),
            ("12xlarge", 100),
            ("16xlarge", 35),
            ("24xlarge", 200),
            ("48xlarge", 400),
        )
    },
}
# GPUDirect on GCP: (fabric, GPU NICs, Gbps per GPU NIC, extra gVNICs, the machine's total Gbps). Only the
# 8-GPU sizes have GPU NICs. Sources: Google Cloud, "GPU machine types" and "Network bandwidth and GPU machines",
# https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth (A3 High: 4 x 200 Gbps GPU NICs
# beside a 200 Gbps gVNIC; A3 Mega: 8 x 200; A3 Ultra and A4: 8 x 400 Gbps ConnectX-7 RoCE NICs and
# 2 gVNICs); [CT] examples/gke-a3-highgpu (4 GPU VPCs, TCPX), gke-a3-megagpu (8, TCPXO), gke-a3-ultragpu
# and gke-a4 (a gVNIC VPC and an 8-subnet RoCE VPC, RDMA with gIB).
# The total is the same page's overview table, "Max total bandwidth" (read 2026): A3 High 1,000, A3 Mega
# 1,800, A3 Ultra and A4 3,600 Gbps. It counts the gVNICs: A3 Mega's NIC arrangement is 8+1 (eight 200 Gbps
# GPU NICs and one gVNIC), A3 Ultra's and A4's 8 CX-7 NICs (3,200 Gbps) beside 2 gVNICs (400). The GPU
# fabric, what NCCL's GPU traffic can use, is the GPU NICs alone: 1,600 Gbps on A3 Mega. Rechecked for issue 28:
# the machine table of "Accelerator-optimized machine family" (a copy read 2026) gives a3-megagpu-8g 9 physical
# NICs and 1,800 Gbps; one newer copy of the bandwidth page's summary list says "A3 Mega: up to 1,600 Gbps", which
# is the GPU fabric's figure. Both agree with 1,600 of GPU fabric, which is what render and the gate use.
# A4X: 4 ConnectX-7 NICs, 1,600 Gbps of RDMA (MRDMA virtual functions), beside 2 Titanium NICs (400 Gbps): 2,000
# (the bandwidth page's A4X section; cluster-toolkit examples/gke-a4x: RDMA through GKE's DRANET; NVIDIA AICR's
# "GKE GB200 (A4X) Networking Prerequisites": gvnic-1 and rdma-0..rdma-3 when GKE multi-networking attaches them).
# A4X Max: 4 ConnectX-8 SuperNICs give 3,200 Gbps "in an 8-way rail-aligned topology" (the bandwidth page): 8
# MRDMA physical functions of 400 Gbps, which cluster-toolkit examples/gke-a4x-max-bm claims as 8 mrdma.google.com
# devices and attaches as 8 interfaces of the vpc-roce-metal network; beside them the host NICs, 400 Gbps: 3,600.
_GCP_GPUDIRECT: dict[str, tuple[GpuDirect, int, int, int, int]] = {
    "a3-highgpu-8g": ("tcpx", 4, 200, 0, 1000),
    "a3-megagpu-8g": ("tcpxo", 8, 200, 0, 1800),
    "a3-ultragpu-8g": ("rdma", 8, 400, 1, 3600),
    "a4-highgpu-8g": ("rdma", 8, 400, 1, 3600),
    "a4x-highgpu-4g": ("rdma", 4, 400, 1, 2000),
    "a4x-maxgpu-4g-metal": ("rdma", 8, 400, 1, 3600),
}
# Machines without GPU NICs whose network bandwidth is recorded: G4 ("Accelerator-optimized machine family", G4
# table, maximum network bandwidth), whose only fabric is TCP on eth0.
_GCP_NETWORK_GBPS: dict[str, float] = {
    "g4-standard-48": 50,
    "g4-standard-96": 100,
    "g4-standard-192": 200,
    "g4-standard-384": 400,
}
_GCP_BARE_METAL = {"a4x-maxgpu-4g-metal"}
"""Bare-metal machine types (the -metal suffix; "Accelerator-optimized machine family": A4X Max is bare metal)."""
# The gIB installer's NCCL tuner profile per machine, a file of its configs directory: GKE's "Fine-tune and
# scale reinforcement learning with verl on GKE" (updated 2026-04-13) sets tuner_config_a4.txtpb for B200 and
# tuner_config_a3u.txtpb for H200; cluster-toolkit v1.95.0 examples/machine-learning/a3-ultragpu-8g/
# nemo-framework/Dockerfile names the same A3 Ultra file "to match what is in set_nccl_env.sh". (The toolkit's
# a4high VM example, which installs the nccl-gib Debian package rather than GKE's installer, names
# tuner_config.txtpb.) The rdma fabric gate fails on a node whose installer lacks the pool's file.
# No source read names a tuner profile for A4X or A4X Max (cluster-toolkit's gke-a4x and gke-a4x-max-bm NCCL tests
# set none), so their workers run gIB's default tuning.
_GIB_TUNER_CONFIGS = {"a3-ultragpu-8g": "tuner_config_a3u.txtpb", "a4-highgpu-8g": "tuner_config_a4.txtpb"}
# The least GKE version a GPUDirect machine runs its fabric on. A3 High (TCPX) and A3 Mega (TCPXO), per minor:
# cluster-toolkit v1.95.0 modules/compute/gke-node-pool/gpu_direct.tf (major_minor_version_acceptable_map).
# A3 Ultra and A4 (RDMA): GKE's "Fine-tune and scale reinforcement learning with verl on GKE" (updated
# 2026-04-13): "1.31.4-gke.1183000 or later" for H200, "1.32.2-gke.1422000 or later" for B200.
_GKE_LEAST_VERSIONS: dict[str, tuple[str, ...]] = {
    "a3-highgpu-8g": ("1.27.16-gke.2874000", "1.28.15-gke.3163000", "1.29.15-gke.2467000"),
    "a3-megagpu-8g": (
        "1.28.15-gke.3163000",
        "1.29.15-gke.2467000",
        "1.30.14-gke.1922000",
        "1.31.14-gke.1243000",
        "1.32.11-gke.1174000",
    ),
    "a3-ultragpu-8g": ("1.31.4-gke.1183000",),
    "a4-highgpu-8g": ("1.32.2-gke.1422000",),
    # A4X Max: "The recommended GKE version for A4X-Max support is 1.34.3-gke.1318000 ... the required minimum
    # version" (cluster-toolkit v1.95.0 examples/gke-a4x-max-bm/README.md; GB300 needs driver 580.95.05, which GKE
    # installs from that version on). A4X: no least version was found in a source read here (cluster-toolkit's
    # gke-a4x pins the 1.35 prefix); none is enforced.
    "a4x-maxgpu-4g-metal": ("1.34.3-gke.1318000",),
}
_AWS = {n: replace(m, network_gbps=_AWS_NETWORK_GBPS.get(n, 0)) for n, m in _AWS.items()}
_GCP = {
    n: replace(
        m,
        gpudirect=d[0],
        gpu_nics=d[1],
        gpu_nic_gbps=d[2],
        extra_gvnics=d[3],
        network_gbps=d[4],
        gib_tuner_config=_GIB_TUNER_CONFIGS.get(n, ""),
        gke_least_versions=_GKE_LEAST_VERSIONS.get(n, ()),
        bare_metal=n in _GCP_BARE_METAL,
    )
    if (d := _GCP_GPUDIRECT.get(n))
    else replace(m, network_gbps=_GCP_NETWORK_GBPS.get(n, 0))
    for n, m in _GCP.items()
}

# Bus bandwidth floors for the fabric check: GB/s at the largest message size across two nodes, from
# published pass thresholds, never from one measurement. Machines without one get a floor derived from
# their nominal fabric bandwidth (components/fabriccheck.py says how): A4X and A4X Max, p4d/p4de, p5e, p5en, p6-b200,
# p6-b300, p6e-gb200, g7e and the single-EFA g5/g6/g6e, for which no like-for-like threshold is published
# (awsome-distributed-training's health check asks 300/800/900 GB/s of p4d/p5*/p6-b200, but of the in-place
# peak over 8 B-128 MB, and only as a warning: it is not a figure of this measure).
_BUSBW_FLOORS: dict[str, tuple[float, str]] = {
    # NVIDIA AICR v0.11.1 recipes/overlays/h100-eks-ubuntu-training.yaml: all_reduce_perf 1K-16G,
    # out-of-place busbw of the largest size >= 300 GB/s, passed at 90% of it
    # (validators/performance/nccl_all_reduce_bw_constraint.go). Measured: 479 GB/s at 8 GiB on 2 x
    # p5.48xlarge (awsome-distributed-training micro-benchmarks/nccl-tests/README.md).
    "p5.48xlarge": (270, "NVIDIA AICR, H100 on EKS: 300 GB/s less its 10% tolerance"),
    # NVIDIA AICR v0.11.1 recipes/overlays/h100-gke-cos-training.yaml (nvidia-h100-mega-80gb): the same
    # measure, >= 250 GB/s, passed at 90%.
    "a3-megagpu-8g": (225, "NVIDIA AICR, H100 Mega on GKE: 250 GB/s less its 10% tolerance"),
    # GoogleCloudPlatform/cluster-health-scanner @81c525d deploy/helm/health_checks/nccl_healthcheck/
    # a3.yaml, a3ultra.yaml, a4.yaml: all_gather_perf 2G-8G between two nodes, average busbw >= 60 / 250 /
    # 250 GB/s. Measured: all_gather 328.85 GB/s at 8 GiB on 2 x a3-ultragpu-8g (cluster-toolkit
    # examples/gke-consumption-options/dws-flex-start/README.md).
    "a3-highgpu-8g": (60, "Google cluster-health-scanner, A3 High"),
    "a3-ultragpu-8g": (250, "Google cluster-health-scanner, A3 Ultra"),
    "a4-highgpu-8g": (250, "Google cluster-health-scanner, A4"),
}
_AWS = {
    n: replace(m, busbw_floor_gbs=f[0], busbw_floor_source=f[1]) if (f := _BUSBW_FLOORS.get(n)) else m
    for n, m in _AWS.items()
}
_GCP = {
    n: replace(m, busbw_floor_gbs=f[0], busbw_floor_source=f[1]) if (f := _BUSBW_FLOORS.get(n)) else m
    for n, m in _GCP.items()
}

_CATALOG: dict[str, dict[str, MachineType]] = {"aws": _AWS, "gcp": _GCP}
_NAMES: dict[str, tuple[str, ...]] = {provider: tuple(sorted(table)) for provider, table in _CATALOG.items()}


# NVLink bandwidth per GPU, both directions together, in GB/s, from NVIDIA's data sheets: A100 SXM4 600
# (NVLink 3), H100 SXM5 and H200 900 (NVLink 4), B200, B300, GB200 and GB300 1,800 (NVLink 5; the NVL72
# racks' 130 TB/s is 72 x 1.8 TB/s). A10G, L4 and L40S are PCIe cards
# without NVLink. Keys are the catalog's GPU models; a stated model is matched by its longest known prefix.
_NVLINK_GBS: dict[str, int] = {
    "NVIDIA A100": 600,
    "NVIDIA H100": 900,
    "NVIDIA H200": 900,
    "NVIDIA B200": 1800,
    "NVIDIA B300": 1800,
    "NVIDIA GB200": 1800,
    "NVIDIA GB300": 1800,
}


# Rack-scale NVLink: GB200 and GB300 NVL72 racks join 18 compute trays of 4 GPUs (72 GPUs) through NVLink
# switch trays, one NVLink domain per rack (NVIDIA GB200 NVL72 and GB300 NVL72 product pages; AWS's
# u-p6e-gb200x72 UltraServer is 18 p6e-gb200.36xlarge, GCP's A4X "1x72" sub-block 18 a4x-highgpu-4g). A
# smaller partition of the rack (AWS's u-p6e-gb200x36, 9 instances) is the pool's to say.
_NVLINK_DOMAIN_NODES: dict[str, int] = {
    "NVIDIA GB200": 18,
    "NVIDIA GB300": 18,
}


# AWS UltraServers: the instances of one NVLink domain, bought together. A Capacity Block for them is bought per
# UltraServer, not per instance: its offering names the UltraServer type and a count of UltraServers (EC2
# DescribeCapacityBlockOfferings, UltraServerType and UltraServerCount), and a node group consumes it by its
# cr- id like any Capacity Block. u-p6e-gb200x36 is 9 p6e-gb200.36xlarge (36 GPUs), u-p6e-gb200x72 18 (72 GPUs):
# EKS user guide, ml-eks-nvidia-ultraserver; research turn3-peers section 2.3.
_ULTRASERVERS: dict[str, dict[int, str]] = {
    "p6e-gb200.36xlarge": {9: "u-p6e-gb200x36", 18: "u-p6e-gb200x72"},
}


def ultraservers(instance_type: str | None) -> dict[int, str]:
    """AWS: the UltraServers an instance type is sold in, by instances per UltraServer; empty for other types."""
    return dict(_ULTRASERVERS.get(instance_type or "", {}))


def nvlink_domain_nodes(gpu_model: str | None) -> int:
    """The most nodes one NVLink domain of a GPU model joins (18 for an NVL72 rack); 0 when NVLink stays
    inside the node or the model is unknown."""
    if not gpu_model:
        return 0
    known = [prefix for prefix in _NVLINK_DOMAIN_NODES if gpu_model.startswith(prefix)]
    return _NVLINK_DOMAIN_NODES[max(known, key=len)] if known else 0


def nvlink_gbs(gpu_model: str | None) -> int:
    """A GPU model's NVLink bandwidth per GPU, both directions together, in GB/s; 0 without NVLink or when the
    model is unknown."""
    if not gpu_model:
        return 0
    known = [prefix for prefix in _NVLINK_GBS if gpu_model.startswith(prefix)]
    return _NVLINK_GBS[max(known, key=len)] if known else 0


@dataclass(frozen=True, slots=True)
class DomainSize:
    """How many nodes one domain of a topology level holds, and where that figure comes from."""

    nodes: int
    """Nodes (machines) one domain holds at most."""
    source: str
    """Where the figure comes from or, when `assumed`, why there is no public one."""
    assumed: bool = False
    """No public figure: the number is ours, and `simulate` says so wherever it decides an outcome."""


# Domain sizes of the providers' topology levels (the level names of components/topology.py).
# GKE: Google's AI Hypercomputer "Terminology" page (cloud.google.com/ai-hypercomputer/docs/terminology, read 2026)
# defines a sub-block as the hosts and connectivity hardware of one rack and a block as a collection of sub-blocks,
# with no count, except for A4X and A4X Max, whose sub-block is their NVLink domain: 18 instances (72 GPUs). A3 Mega,
# A3 Ultra, A4 and A4X VMs each take a whole physical host, so a gce-host domain holds one node.
# EKS: "How Amazon EC2 topology works" (docs.aws.amazon.com/AWSEC2/latest/UserGuide/how-ec2-instance-topology-works
# .html) says several instances connect to one bottom-layer network node and that instances sharing a node are
# closer, but not how many share one at any layer.
_GKE_HOST = DomainSize(1, "a whole-host VM: one per physical host")
_GKE_NVL72_SUBBLOCK = DomainSize(18, "Google's Terminology page: an A4X / A4X Max sub-block is one NVLink domain of 18")
_ASSUMED_SUBBLOCK = 16
"""Nodes of an 8-GPU machine's GKE sub-block (one rack), assumed; Google publishes no figure."""
_ASSUMED_EKS_FINEST = 16
"""Instances under one bottom-layer EC2 network node, assumed; AWS publishes no figure."""
_ASSUMED_FANOUT = 4
"""Domains of a level inside one of the next coarser level, assumed where no figure is published."""
_GKE_RACK_SCALE = ("a4x-highgpu-", "a4x-maxgpu-")


EKS_FOUR_LAYER_MACHINES = ("p6-b200.", "p6-b300.")
"""The instance families EC2 instance topology places under four network layers, not three
(docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html)."""


def eks_network_layers(machine: str) -> int:
    """How many network-node layers EKS labels above an instance of `machine`."""
    return 4 if machine.startswith(EKS_FOUR_LAYER_MACHINES) else 3


def topology_domains(provider: str, machine_type: str | None) -> dict[str, DomainSize]:
    """Level name -> the nodes one domain of that level of the provider's topology holds for this machine type, with
    its source; a figure no source gives is marked assumed. Empty for a provider whose levels are not its own."""
    machine = machine_type or ""
    if provider == "gcp":
        subblock = (
            _GKE_NVL72_SUBBLOCK
            if machine.startswith(_GKE_RACK_SCALE)
            else DomainSize(_ASSUMED_SUBBLOCK, "Google gives no sub-block size for this machine (one rack)", True)
        )
        block = DomainSize(
            subblock.nodes * _ASSUMED_FANOUT,
            f"Google gives no block size; assumed {_ASSUMED_FANOUT} sub-blocks",
            assumed=True,
        )
        return {"block": block, "subblock": subblock, "gce-host": _GKE_HOST}
    if provider == "aws":
        layers = eks_network_layers(machine)
        why = "AWS gives no count of instances per network node"
        return {
            f"layer-{n}": DomainSize(_ASSUMED_EKS_FINEST * _ASSUMED_FANOUT ** (layers - n), why, assumed=True)
            for n in range(1, layers + 1)
        }
    return {}


def _table(provider: str) -> dict[str, MachineType]:
    """The catalog of one provider; an unknown provider is a programming error."""
    try:
        return _CATALOG[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r}; expected one of {sorted(_CATALOG)}") from None


def lookup(provider: Provider, name: str) -> MachineType | None:
    """The catalog entry for a type, or None when the type is not in the catalog."""
    return _table(provider).get(name)


def names(provider: Provider) -> tuple[str, ...]:
    """Every catalogued type name of a provider, sorted."""
    _table(provider)
    return _NAMES[provider]
