"""ReadWriteMany storage for checkpoints and datasets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from components.models.base import DnsLabel, ObjectName, Quantity, Spec, check_variant_fields

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
    "zone": ("fsx-lustre",),
}


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
    zone: str | None = None
    """fsx-lustre: the zone of the file system (one subnet). Default: the zone of the first GPU pool."""

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
        return self


class StorageConfig(Spec):
    """Storage the platform provides."""

    volumes: list[VolumeSpec] = Field(default_factory=list)
    """Claims for checkpoints and data. Default: none."""
