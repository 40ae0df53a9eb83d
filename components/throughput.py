"""How fast a volume takes a checkpoint: what bounds writes to each backend (the volume as a whole, and each node
writing to it), and how long a checkpoint of a given size takes from a job's nodes.

The figures are the providers' published maxima, cited where they are stated, so an estimate is the least time a
checkpoint can take, not a measurement: file counts, small files, metadata and the training script's own writer
only add to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from components import catalog, quantity
from components.aws.filesystems import lustre_capacity_gib
from components.gcp import filesystems as managed_lustre
from components.models.storage import VolumeSpec

MB = 10**6
MIB = 2**20
TIB = 2**40

EFS_ELASTIC_WRITE_MBPS = 2**30 / MB
"""EFS Regional file systems with Elastic throughput write 1-5 GiB/s, by region (Amazon EFS User Guide, "Amazon EFS
performance specifications", General Purpose table): the least, 1 GiB/s, is assumed."""
EFS_CLIENT_MBPS = 1500 * MIB / MB
"""EFS Elastic throughput serves one client up to 1,500 MiB/s (same table; with efs-utils 2 or later, which the EFS
CSI driver mounts with)."""
S3_PREFIX_PUTS = 3500
"""S3 takes at least 3,500 PUT requests a second per partitioned prefix, and partitions a prefix further as load on
it persists (Amazon S3 User Guide, "Best practices design patterns: optimizing Amazon S3 performance")."""
MOUNTPOINT_PART_BYTES = 8 * MIB
"""Mountpoint uploads a file in 8 MiB parts, one PUT each (mountpoint-s3 doc/CONFIGURATION.md, --write-part-size)."""
# Filestore's write throughput (Filestore, "Performance": the limits table): fixed for the basic tiers, linear in
# capacity for the others (MiB/s, and MiB/s per TiB); the smallest capacity each tier provisions.
FILESTORE_FIXED_MIBPS = {"BASIC_HDD": (100, 120), "BASIC_SSD": (350, 350)}
"""BASIC_HDD: 100 MiB/s below 10 TiB, 120 from 10 TiB; BASIC_SSD: 350 MiB/s."""
FILESTORE_PER_TIB_MIBPS = {"ZONAL": (88, 88), "REGIONAL": (100, 88), "ENTERPRISE": (100, 100)}
"""Per TiB, below 10 TiB and from 10 TiB: ZONAL 88 (1 TiB: 88, 100 TiB: 8,800), REGIONAL 100 then 88 (9.75 TiB: 975,
10 TiB: 880), ENTERPRISE 100 (10 TiB: 1,000)."""
FILESTORE_MIN_TIB = {"BASIC_HDD": 1.0, "BASIC_SSD": 2.5, "ZONAL": 1.0, "REGIONAL": 1.0, "ENTERPRISE": 1.0}
FILESTORE_DEFAULT_TIER = "BASIC_SSD"


@dataclass(frozen=True, slots=True)
class WriteRate:
    """What bounds writes to a volume: the volume as a whole, and each node writing to it (MB/s, 10^6 bytes)."""

    volume: float | None
    """What the volume takes from every client together; None when it has no such bound, or it is not known."""
    volume_basis: str
    """Where the volume's figure comes from, or why there is none."""
    node: float | None
    """What one node can write to it: the backend's per-client limit and the node's network; None when unknown."""
    node_basis: str
    """Where the node's figure comes from, or why there is none."""
    known: bool = True
    """Whether the volume's own throughput is known here (False for nfs, a named class, a named file system)."""

    def aggregate(self, writers: int) -> float | None:
        """What `writers` nodes write together: the lesser of the volume and the nodes; None when neither is known."""
        nodes = self.node * writers if self.node is not None else None
        bounds = [b for b in (self.volume, nodes) if b is not None]
        return min(bounds) if bounds else None


@dataclass(frozen=True, slots=True)
class CheckpointEstimate:
    """A job's checkpoint on its volume: its size, its writers, what bounds them, and the time it takes."""

    volume: VolumeSpec
    writers: int
    rate: WriteRate
    size: str | None
    max_seconds: int

    @property
    def throughput(self) -> float | None:
        """MB/s the job's nodes write the checkpoint at; None when unknown."""
        return self.rate.aggregate(self.writers) if self.rate.known else None

    @property
    def seconds(self) -> float | None:
        """The least time one checkpoint takes; None without a size or a throughput."""
        rate = self.throughput
        if self.size is None or not rate:
            return None
        return float(quantity.parse(self.size)) / (rate * MB)

    @property
    def node_bound(self) -> bool:
        """Whether the nodes' networks, not the volume, bound the checkpoint's throughput."""
        node, volume = self.rate.node, self.rate.volume
        return node is not None and (volume is None or node * self.writers < volume)

    @property
    def over(self) -> bool:
        """Whether the checkpoint takes longer than checkpoint.maxSeconds."""
        return self.seconds is not None and self.seconds > self.max_seconds

    def describe(self) -> str:
        """`1.1T to <volume> (backend): 12.9 GB/s (...) -> at least 86 s (budget 300 s)`, or what is not known."""
        v = self.volume
        what = f"{self.size} to" if self.size else "to"
        head = f"{what} {v.namespace}/{v.name} ({v.backend})"
        if not self.rate.known:
            return f"{head}: throughput unknown ({self.rate.volume_basis})"
        rate = self.throughput
        bounds = [f"volume {_rate(self.rate.volume)} ({self.rate.volume_basis})" if self.rate.volume else ""]
        if self.rate.node is not None:
            bounds.append(f"{self.writers} nodes x {_rate(self.rate.node)} ({self.rate.node_basis})")
        else:
            bounds.append(f"each node unknown ({self.rate.node_basis})")
        if not self.rate.volume:
            bounds.append(self.rate.volume_basis)
        stated = "; ".join(b for b in bounds if b)
        if rate is None:
            return f"{head}: {stated}"
        if self.seconds is None:
            return f"{head}: {_rate(rate)} ({stated}); checkpoint.size not stated, so no time"
        seconds = math.ceil(self.seconds)
        if self.over:
            return f"{head}: {_rate(rate)} ({stated}) -> at least {seconds} s, over its {self.max_seconds} s budget"
        return f"{head}: {_rate(rate)} ({stated}) -> at least {seconds} s (budget {self.max_seconds} s)"


def _rate(mbps: float | None) -> str:
    """MB/s as GB/s, one decimal."""
    return "?" if mbps is None else f"{mbps / 1000:.1f} GB/s"


def node_network(machine: catalog.MachineType | None) -> tuple[float | None, str]:
    """MB/s a node's pods reach storage at, and why: the network card its primary interface is on (AWS: the
    instance's bandwidth over its network cards, so 100 Gbps of a p5.48xlarge's 3,200, whose other cards carry
    EFA), or the gVNIC eth0 beside a GCP machine's GPU NICs, or the machine's network."""
    if machine is None or not machine.network_gbps:
        return None, "the pool's machine bandwidth is not catalogued"
    if machine.provider == "aws":
        gbps = machine.network_gbps / machine.network_cards
        where = "a network card's share" if machine.network_cards > 1 else "the instance's network"
    elif machine.gpudirect:
        gbps = machine.gvnic_gbps / (1 + machine.extra_gvnics)
        where = "eth0, beside the GPU NICs"
    else:
        gbps = machine.network_gbps
        where = "the machine's network"
    return gbps * 1000 / 8, f"{gbps:g} Gbps: {where}"


def write_rate(volume: VolumeSpec, machine: catalog.MachineType | None) -> WriteRate:
    """What bounds writes to a volume from nodes of `machine` (None: not catalogued)."""
    nic, nic_basis = node_network(machine)
    backend = volume.backend
    if backend in ("fsx-lustre", "managed-lustre"):
        if volume.file_system_id is not None:
            named = "a file system" if backend == "fsx-lustre" else "an instance"
            return WriteRate(
                None,
                f"{named} named by fileSystemId: its capacity and tier are not known here",
                nic,
                nic_basis,
                known=False,
            )
        assert volume.size is not None  # enforced by VolumeSpec
        if backend == "fsx-lustre":
            gib: int | None = lustre_capacity_gib(volume.size)
        else:
            gib = managed_lustre.capacity_gib(volume.size, volume.lustre_throughput)
        assert gib is not None  # VolumeSpec refuses a size over the tier's largest
        # Throughput is capacity x tier on both (FSx for Lustre User Guide, "Managing throughput capacity"; Managed
        # Lustre, "Performance tiers": MBps per TiB).
        mbps = gib / 1024 * volume.lustre_throughput
        return WriteRate(mbps, f"{gib} GiB x {volume.lustre_throughput} MB/s/TiB", nic, nic_basis)
    if backend == "efs":
        if volume.file_system_id is not None:
            return WriteRate(
                None,
                "a file system named by fileSystemId: its throughput mode is not known here",
                nic,
                nic_basis,
                known=False,
            )
        node, basis = _least(nic, nic_basis, EFS_CLIENT_MBPS, "EFS's 1,500 MiB/s per client")
        return WriteRate(EFS_ELASTIC_WRITE_MBPS, "Elastic: 1 GiB/s, the least any region gives", node, basis)
    if backend == "filestore":
        mbps, basis = filestore_write(volume)
        return WriteRate(mbps, basis, nic, nic_basis)
    if backend == "s3":
        prefix = S3_PREFIX_PUTS * MOUNTPOINT_PART_BYTES / MB
        return WriteRate(
            prefix, "one prefix's 3,500 PUT/s of 8 MiB parts, until S3 partitions it under load", nic, nic_basis
        )
    if backend == "gcs":
        return WriteRate(None, "Cloud Storage publishes no bucket-wide write limit", nic, nic_basis)
    what = "an NFS server's" if backend == "nfs" else f"StorageClass {volume.class_name}'s"
    return WriteRate(None, f"{what} throughput is not known here", nic, nic_basis, known=False)


def _least(a: float | None, a_basis: str, b: float, b_basis: str) -> tuple[float, str]:
    """The lesser of two bounds and its basis (`a` may be unknown)."""
    return (a, a_basis) if a is not None and a < b else (b, b_basis)


def filestore_write(volume: VolumeSpec) -> tuple[float, str]:
    """A Filestore instance's write throughput in MB/s, from its tier and capacity, and how."""
    tier = volume.tier or FILESTORE_DEFAULT_TIER
    assert volume.size is not None  # enforced by VolumeSpec
    tib = max(float(quantity.parse(volume.size) / Decimal(TIB)), FILESTORE_MIN_TIB[tier])
    if tier in FILESTORE_FIXED_MIBPS:
        small, large = FILESTORE_FIXED_MIBPS[tier]
        mibps = small if tib < 10 else large
        return mibps * MIB / MB, f"{tier}: {mibps} MiB/s"
    small, large = FILESTORE_PER_TIB_MIBPS[tier]
    per_tib = small if tib < 10 else large
    return tib * per_tib * MIB / MB, f"{tier}: {tib:g} TiB x {per_tib} MiB/s/TiB"


def estimate(
    volume: VolumeSpec, writers: int, machine: catalog.MachineType | None, size: str | None, max_seconds: int
) -> CheckpointEstimate:
    """A checkpoint of `size` written by `writers` nodes of `machine` to `volume`."""
    return CheckpointEstimate(volume, writers, write_rate(volume, machine), size, max_seconds)
