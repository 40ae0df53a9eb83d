"""ReadWriteMany storage for checkpoints and datasets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.models.base import DnsLabel, ObjectName, Quantity, Spec, at, check_variant_fields

Backend = Literal["efs", "fsx-lustre", "filestore", "nfs", "storageClass"]

_REQUIRED: dict[str, tuple[str, ...]] = {
    "nfs": ("server", "share"),
    "storageClass": ("className",),
    "efs": (),
    "fsx-lustre": (),
    "filestore": (),
}
_ONLY_FOR: dict[str, tuple[str, ...]] = {
    "server": ("nfs",),
    "share": ("nfs",),
    "className": ("storageClass",),
    "fileSystemId": ("efs", "fsx-lustre"),
    "s3ImportPath": ("fsx-lustre",),
    "tier": ("filestore",),
    "connectMode": ("filestore",),
    "zone": ("fsx-lustre",),
    "metadataConfiguration": ("fsx-lustre",),
    # Every backend whose class or volume is made here; a named storageClass carries its own.
    "mountOptions": ("nfs", "filestore", "efs", "fsx-lustre"),
}

LUSTRE_THROUGHPUT_PER_TIB = 500
"""The default FSx for Lustre throughput tier, MB/s per TiB of storage (PERSISTENT_2 SSD allows 125, 250,
500 and 1000). FSx throughput is capacity x tier (Amazon FSx for Lustre User Guide, "Managing throughput
capacity"; CreateFileSystemLustreConfiguration.PerUnitStorageThroughput). Sized for checkpoints: the
24 TiB prod volume gives 24 x 500 = 12 GB/s, so a 70B-parameter checkpoint with Adam state (about
16 bytes a parameter, 1.1 TB) is written by 8 nodes in about 95 s; at 250 it took about 190 s (6 GB/s)."""

# CreateFileSystemLustreMetadataConfiguration.Iops (SSD): 1500, 3000, 6000, 12000 and multiples of 12000
# up to 192000.
LUSTRE_METADATA_IOPS = (1500, 3000, 6000, *range(12000, 192001, 12000))

# Linux NFS client options for large sequential checkpoint and dataset I/O (csi-driver-nfs passes
# StorageClass mountOptions through to mount):
# - nconnect=8: 8 TCP connections to the server instead of one (the kernel allows 1-16, from 5.3;
#   SUSE KB 000019933, nfs(5)). One connection caps a mount at roughly one CPU's worth of TCP; 8
#   spreads it over NIC queues without the server-side cost of the maximum 16. The first mount of a
#   server sets it for every later mount of that server on the node.
# - rsize/wsize=1048576: 1 MiB per READ/WRITE, the Linux client's maximum (the server may lower it).
# - hard: retry forever rather than return EIO to a writer mid-checkpoint (Linux's default, stated).
# - nfsvers=4.1: sessions, and what every backend here serves.
NFS_MOUNT_OPTIONS = ("nfsvers=4.1", "nconnect=8", "rsize=1048576", "wsize=1048576", "hard")
LUSTRE_MOUNT_OPTIONS = ("flock",)


class LustreMetadataSpec(Spec):
    """FSx for Lustre (PERSISTENT_2) metadata performance: how many metadata IOPS the file system has."""

    mode: Literal["AUTOMATIC", "USER_PROVISIONED"] = "AUTOMATIC"
    """AUTOMATIC (FSx scales metadata IOPS with storage capacity) or USER_PROVISIONED (`iops`).
    Default: AUTOMATIC."""
    iops: int | None = None
    """USER_PROVISIONED: metadata IOPS, 1500, 3000, 6000, or a multiple of 12000 up to 192000. Required for
    USER_PROVISIONED; FSx cannot lower it later without recreating the file system. Default: none."""

    @model_validator(mode="after")
    def _iops_for_mode(self) -> LustreMetadataSpec:
        if self.mode == "AUTOMATIC" and self.iops is not None:
            raise at("iops", "`iops` applies to mode USER_PROVISIONED; AUTOMATIC sizes metadata IOPS itself")
        if self.mode == "USER_PROVISIONED" and self.iops is None:
            raise at("iops", "mode USER_PROVISIONED needs `iops`")
        if self.iops is not None and self.iops not in LUSTRE_METADATA_IOPS:
            raise at(
                "iops",
                f"{self.iops} is not a metadata IOPS value FSx accepts: 1500, 3000, 6000, "
                "or a multiple of 12000 up to 192000",
            )
        return self


class VolumeSpec(Spec):
    """A persistent volume claim that jobs mount, and what backs it."""

    name: ObjectName
    """Claim name; jobs mount it as `claim`. Required."""
    namespace: DnsLabel = "training"
    """Namespace of the claim. Default: training."""
    backend: Backend
    """efs | fsx-lustre | filestore | nfs | storageClass. Required."""
    size: Quantity
    """Requested capacity, e.g. 2Ti. Required."""
    access_mode: Literal["ReadWriteMany", "ReadOnlyMany", "ReadWriteOnce"] = "ReadWriteMany"
    """Access mode. Default: ReadWriteMany (every node of a job mounts it)."""
    server: str | None = None
    """nfs: the NFS server. Required for nfs."""
    share: str | None = Field(default=None, pattern=r"^/")
    """nfs: the exported path. Required for nfs."""
    class_name: str | None = None
    """storageClass: an existing StorageClass. Required for storageClass."""
    file_system_id: str | None = None
    """efs / fsx-lustre: use this file system instead of creating one. Default: create one."""
    s3_import_path: str | None = Field(default=None, pattern=r"^s3://")
    """fsx-lustre: link the file system to this S3 prefix. Default: none."""
    tier: Literal["BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "ENTERPRISE"] | None = None
    """filestore: the service tier. Default: BASIC_SSD."""
    connect_mode: Literal["DIRECT_PEERING", "PRIVATE_SERVICE_ACCESS"] | None = None
    """filestore: how the instance joins the VPC; PRIVATE_SERVICE_ACCESS for a Shared VPC (the network is
    then passed as projects/<project>/global/networks/<name>). Default: DIRECT_PEERING (the driver's)."""
    zone: str | None = None
    """fsx-lustre: the zone of the file system (one subnet). Default: the zone of the first GPU pool."""
    throughput_per_tib: Literal[125, 250, 500, 1000] | None = Field(default=None, alias="throughputPerTiB")
    """fsx-lustre: the PERSISTENT_2 throughput tier in MB/s per TiB (file system throughput = capacity x
    tier; it can be changed in place). Default: 500 (24 TiB give 12 GB/s)."""
    metadata_configuration: LustreMetadataSpec | None = None
    """fsx-lustre: metadata IOPS, `{mode: AUTOMATIC}` or `{mode: USER_PROVISIONED, iops: N}`.
    Default: not sent, so FSx applies its own default for the file system."""
    mount_options: list[str] | None = None
    """nfs / filestore / efs / fsx-lustre: the mount options of the class or volume made here, replacing
    the defaults whole. Default: nfs `nfsvers=4.1, nconnect=8, rsize=1048576, wsize=1048576, hard`;
    fsx-lustre `flock`; filestore and efs none (their drivers' own)."""

    @field_validator("mount_options")
    @classmethod
    def _options(cls, value: list[str] | None) -> list[str] | None:
        for option in value or ():
            if not option or any(c.isspace() for c in option):
                raise ValueError(f"mount option {option!r} must be a non-empty word such as nconnect=8")
        return value

    @model_validator(mode="after")
    def _fields_for_backend(self) -> VolumeSpec:
        check_variant_fields(
            self,
            self.backend,
            _REQUIRED[self.backend],
            _ONLY_FOR,
            needs="the {variant} backend needs `{key}`",
            applies="`{key}` applies to the {variants} backend, not {variant}",
        )
        # Not in _ONLY_FOR: its key does not follow the camelCase-to-snake_case rule (TiB).
        if self.throughput_per_tib is not None and self.backend != "fsx-lustre":
            raise at("throughputPerTiB", f"`throughputPerTiB` applies to the fsx-lustre backend, not {self.backend}")
        if self.file_system_id is not None:
            made_here = {
                "throughputPerTiB": self.throughput_per_tib,
                "metadataConfiguration": self.metadata_configuration,
            }
            for key, value in made_here.items():
                if value is not None:
                    raise at(key, f"`{key}` applies to a file system made here, not one named by `fileSystemId`")
        return self

    @property
    def lustre_throughput(self) -> int:
        """The FSx for Lustre throughput tier, MB/s/TiB: the volume's or the default."""
        return self.throughput_per_tib or LUSTRE_THROUGHPUT_PER_TIB


class StorageConfig(Spec):
    """Storage the platform provides."""

    volumes: list[VolumeSpec] = Field(default_factory=list)
    """Claims for checkpoints and data. Default: none."""
