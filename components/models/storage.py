"""ReadWriteMany storage for checkpoints and datasets."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from components import quantity
from components.gcp import filesystems as managed_lustre
from components.models.base import Count, DnsLabel, ObjectName, Quantity, Spec, at, check_variant_fields

Backend = Literal["efs", "fsx-lustre", "filestore", "managed-lustre", "nfs", "storageClass", "s3", "gcs"]
Use = Literal["data", "checkpoints"]
"""What an object-store volume is for: data (read through a cache) | checkpoints (written, rotated)."""

LUSTRE_BACKENDS = ("fsx-lustre", "managed-lustre")
"""Backends that are Lustre file systems: FSx for Lustre (EKS) and Google Cloud Managed Lustre (GKE)."""
OBJECT_STORES = ("s3", "gcs")
"""Backends that mount a bucket through a FUSE CSI driver: Mountpoint for Amazon S3, Cloud Storage FUSE."""
OBJECT_STORE_CAPACITY = "1Pi"
"""The capacity the claim and volume of a bucket state: Kubernetes requires one and both drivers ignore it
(awslabs/mountpoint-s3-csi-driver docs/CONFIGURATION.md, "Value is ignored but required by Kubernetes";
cluster-toolkit's gke-a4x blueprint states 1,000,000 GiB for its buckets)."""
DEFAULT_CACHE_SIZE = "100Gi"
"""The read cache a data volume keeps on each node: room for the hot part of a dataset on every GPU node's
disks (500 GB boot disks by default, TBs of local NVMe / SSD where the machine has them), well below the
kubelet's eviction threshold on a node whose disks it shares with images and scratch."""

_REQUIRED: dict[str, tuple[str, ...]] = {
    "nfs": ("server", "share", "size"),
    "storageClass": ("className", "size"),
    "efs": ("size",),
    "fsx-lustre": ("size",),
    "filestore": ("size",),
    "managed-lustre": ("size",),
    "s3": (),
    "gcs": (),
}
_ONLY_FOR: dict[str, tuple[str, ...]] = {
    "server": ("nfs",),
    "share": ("nfs",),
    "className": ("storageClass",),
    "fileSystemId": ("efs", "fsx-lustre", "managed-lustre"),
    "s3ImportPath": ("fsx-lustre",),
    "tier": ("filestore",),
    "connectMode": ("filestore",),
    "zone": ("fsx-lustre", "managed-lustre"),
    "filesystem": ("managed-lustre",),
    "metadataConfiguration": ("fsx-lustre",),
    "bucket": OBJECT_STORES,
    "prefix": OBJECT_STORES,
    "use": OBJECT_STORES,
    "cacheSize": OBJECT_STORES,
    # Every backend whose class or volume is made here; a named storageClass carries its own.
    "mountOptions": ("nfs", "filestore", "efs", "fsx-lustre", "managed-lustre", *OBJECT_STORES),
}
# Bucket names (S3 User Guide, "General purpose bucket naming rules"; Cloud Storage, "Bucket names"): 3-63
# lower-case letters, digits, dots and hyphens (GCS also underscores), starting and ending with a letter or
# digit. Dotted GCS names may be longer but need a verified domain; they are left to `gcloud`.
_BUCKET = {
    "s3": re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"),
    "gcs": re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$"),
}
_PREFIX = re.compile(r"^[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*/?$")

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
    iops: Count | None = None
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
    """efs | fsx-lustre | filestore | managed-lustre | nfs | storageClass | s3 | gcs. Required."""
    size: Quantity | None = None
    """Requested capacity, e.g. 2Ti. Required, except for s3 and gcs: a bucket has no capacity, and their
    claims state 1Pi, which the drivers ignore."""
    access_mode: Literal["ReadWriteMany", "ReadOnlyMany", "ReadWriteOnce"] = "ReadWriteMany"
    """Access mode (s3: ReadWriteMany or ReadOnlyMany, the modes Mountpoint serves). Default: ReadWriteMany (every
    node of a job mounts it)."""
    server: str | None = None
    """nfs: the NFS server. Required for nfs."""
    share: str | None = Field(default=None, pattern=r"^/")
    """nfs: the exported path. Required for nfs."""
    class_name: str | None = None
    """storageClass: an existing StorageClass. Required for storageClass."""
    file_system_id: str | None = None
    """efs / fsx-lustre / managed-lustre: use this file system instead of creating one (managed-lustre: the
    instance's id, in `zone` of the cluster's project, or its full name projects/<project>/locations/<zone>/
    instances/<id>). Default: create one."""
    s3_import_path: str | None = Field(default=None, pattern=r"^s3://")
    """fsx-lustre: link the file system to this S3 prefix. Default: none."""
    tier: Literal["BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "ENTERPRISE"] | None = None
    """filestore: the service tier. Default: BASIC_SSD."""
    connect_mode: Literal["DIRECT_PEERING", "PRIVATE_SERVICE_ACCESS"] | None = None
    """filestore: how the instance joins the VPC; PRIVATE_SERVICE_ACCESS for a Shared VPC (the network is
    then passed as projects/<project>/global/networks/<name>). Default: DIRECT_PEERING (the driver's)."""
    zone: str | None = None
    """fsx-lustre / managed-lustre: the zone of the file system (FSx: one subnet). Default: the zone of the first
    GPU pool."""
    throughput_per_tib: Literal[125, 250, 500, 1000] | None = Field(default=None, alias="throughputPerTiB")
    """fsx-lustre / managed-lustre: the throughput tier in MB/s per TiB (file system throughput = capacity x
    tier). FSx (PERSISTENT_2) changes it in place; Managed Lustre fixes it when the instance is made, and it sets
    the capacity steps. Default: fsx-lustre 500 (24 TiB give 12 GB/s), managed-lustre 1000 (9,000 GiB give
    8.8 GB/s)."""
    filesystem: str | None = None
    """managed-lustre: the Lustre file system name of an instance made here, which `lfs` and mounts use (1-8
    letters and digits, starting with a letter). Default: the letters and digits of the volume's name, at most 8."""
    metadata_configuration: LustreMetadataSpec | None = None
    """fsx-lustre: metadata IOPS, `{mode: AUTOMATIC}` or `{mode: USER_PROVISIONED, iops: N}`.
    Default: not sent, so FSx applies its own default for the file system."""
    bucket: str | None = None
    """s3 / gcs: an existing bucket to mount (in the cluster's region, for speed and cost). Default: a bucket the
    stack makes in the cluster's region (a GCS one with hierarchical namespace), protected and kept when removed
    from the stack."""
    prefix: str | None = None
    """s3 / gcs: mount only this folder of the bucket, e.g. `llama-70b/`. Default: the whole bucket."""
    use: Use | None = None
    """s3 / gcs: what the volume is for, which sets its mount options: data (metadata cached for the mount's life
    and a read cache of `cacheSize` on each node's disks; gcsfuse downloads a file in parallel chunks) or
    checkpoints (Mountpoint may delete and overwrite, as checkpoint rotation and a `latest` file need; gcsfuse
    streams writes to the bucket instead of staging whole files on local disk). Default: data when accessMode
    is ReadOnlyMany, else checkpoints."""
    cache_size: Quantity | None = None
    """s3 / gcs data volumes: the read cache each node keeps on its disks (the local NVMe / SSD where the pool
    has them); "0" turns it off. Default: 100Gi."""
    mount_options: list[str] | None = None
    """nfs / filestore / efs / fsx-lustre / managed-lustre / s3 / gcs: the mount options of the class or volume
    made here, replacing the defaults whole. Default: nfs `nfsvers=4.1, nconnect=8, rsize=1048576, wsize=1048576,
    hard`; fsx-lustre and managed-lustre `flock`; filestore and efs none (their drivers' own); s3 and gcs those
    of their `use` (see docs/storage.md, "Object-store volumes and checkpoints")."""

    @field_validator("size")
    @classmethod
    def _some_capacity(cls, value: str | None) -> str | None:
        # The API server refuses a PersistentVolume or claim of no capacity ("must be greater than zero").
        if value is not None and quantity.parse(value) <= 0:
            raise ValueError(f"must be more than 0 (got '{value}'): give the volume's capacity, e.g. 2Ti")
        return value

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
        if self.throughput_per_tib is not None and self.backend not in LUSTRE_BACKENDS:
            raise at(
                "throughputPerTiB",
                f"`throughputPerTiB` applies to the {' / '.join(LUSTRE_BACKENDS)} backend, not {self.backend}",
            )
        self._object_store_fields()
        if self.backend == "managed-lustre":
            self._managed_lustre_fields()
        if self.file_system_id is not None:
            made_here = {
                "throughputPerTiB": self.throughput_per_tib,
                "metadataConfiguration": self.metadata_configuration,
                "filesystem": self.filesystem,
            }
            for key, value in made_here.items():
                if value is not None:
                    raise at(key, f"`{key}` applies to a file system made here, not one named by `fileSystemId`")
        return self

    def _managed_lustre_fields(self) -> None:
        """A file system name, an instance reference and a capacity Managed Lustre accepts."""
        if self.filesystem is not None and not managed_lustre.valid_filesystem(self.filesystem):
            raise at(
                "filesystem",
                f"'{self.filesystem}' is not a Managed Lustre file system name: 1-8 letters and digits, starting "
                "with a letter",
            )
        if self.file_system_id is not None:
            if not managed_lustre.valid_instance_reference(self.file_system_id):
                raise at(
                    "fileSystemId",
                    f"'{self.file_system_id}' names no Managed Lustre instance: write its id (lower-case letters, "
                    "digits and hyphens, starting with a letter) or projects/<project>/locations/<zone>/instances/<id>",
                )
            _, zone, _ = managed_lustre.named_instance(self.file_system_id)
            if zone is not None and self.zone is not None and zone != self.zone:
                raise at("zone", f"`fileSystemId` names an instance in {zone}, not {self.zone}: drop `zone`")
            return
        assert self.size is not None  # required above
        tier = self.lustre_throughput
        if managed_lustre.capacity_gib(self.size, tier) is None:
            largest = managed_lustre.MANAGED_LUSTRE_TIERS[tier].maximum
            raise at(
                "size",
                f"{self.size} is more than a Managed Lustre instance of {tier} MB/s per TiB holds ({largest:,} GiB): "
                "split the data over volumes, or pick a lower throughputPerTiB, whose instances are larger",
            )

    def _object_store_fields(self) -> None:
        """A bucket name the cloud accepts, a relative prefix, and a use its access mode allows."""
        if self.bucket is not None and not _BUCKET[self.backend].match(self.bucket):
            raise at(
                "bucket",
                f"'{self.bucket}' is not a {self.backend} bucket name: 3-63 lower-case letters, digits, dots and "
                "hyphens, starting and ending with a letter or digit",
            )
        if self.prefix is not None and (not _PREFIX.match(self.prefix) or ".." in self.prefix.split("/")):
            raise at("prefix", f"'{self.prefix}' is not a folder of the bucket: write it relative, as llama-70b/")
        if self.backend == "s3" and self.access_mode == "ReadWriteOnce":
            raise at("accessMode", "Mountpoint serves ReadWriteMany and ReadOnlyMany volumes, not ReadWriteOnce")
        if self.use == "checkpoints" and self.access_mode == "ReadOnlyMany":
            raise at(
                "use", "checkpoints are written: a ReadOnlyMany volume cannot hold them (accessMode: ReadWriteMany)"
            )
        if self.cache_size is not None and self.object_use == "checkpoints":
            raise at(
                "cacheSize", "the read cache is for data volumes (use: data); checkpoints are written, not re-read"
            )

    @property
    def object_use(self) -> Use | None:
        """What an object-store volume is for (its `use`, else data when ReadOnlyMany); None for other backends."""
        if self.backend not in OBJECT_STORES:
            return None
        return self.use or ("data" if self.access_mode == "ReadOnlyMany" else "checkpoints")

    @property
    def claim_size(self) -> str:
        """The capacity its claim and volume state: its size, or the placeholder of a bucket."""
        return self.size or OBJECT_STORE_CAPACITY

    @property
    def read_cache(self) -> str | None:
        """The read cache of a data volume on each node; None without one (checkpoints, other backends, "0")."""
        if self.object_use != "data":
            return None
        size = self.cache_size or DEFAULT_CACHE_SIZE
        return None if quantity.parse(size) == 0 else size

    @property
    def lustre_throughput(self) -> int:
        """The Lustre throughput tier, MB/s/TiB: the volume's or its backend's default."""
        if self.throughput_per_tib is not None:
            return self.throughput_per_tib
        return (
            managed_lustre.MANAGED_LUSTRE_DEFAULT_TIER
            if self.backend == "managed-lustre"
            else LUSTRE_THROUGHPUT_PER_TIB
        )

    @property
    def lustre_filesystem(self) -> str:
        """The file system name of a Managed Lustre instance made here: the volume's, or one from its name."""
        return self.filesystem or managed_lustre.default_filesystem(self.name)


class StorageConfig(Spec):
    """Storage the platform provides."""

    volumes: list[VolumeSpec] = Field(default_factory=list)
    """Claims for checkpoints and data. Default: none."""
