"""Volume specs: the speed settings of each backend, their defaults, and one clear error naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from components.config import parse_stack
from components.errors import ConfigError
from components.models import VolumeSpec
from components.models.storage import LUSTRE_THROUGHPUT_PER_TIB

CLUSTER = {"provider": "existing", "name": "lab"}
FSX = {"name": "checkpoints", "backend": "fsx-lustre", "size": "24Ti"}
NFS = {"name": "data", "backend": "nfs", "server": "nfs.internal", "share": "/exports/data", "size": "1Ti"}


def issues(volume: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        parse_stack({"cluster": CLUSTER, "storage": {"volumes": [volume]}})
    return [(i.path, i.message) for i in caught.value.issues]


def test_lustre_throughput_defaults_to_500_mb_per_tib() -> None:
    v = VolumeSpec.model_validate(FSX)
    assert v.throughput_per_tib is None and v.lustre_throughput == LUSTRE_THROUGHPUT_PER_TIB == 500
    assert v.metadata_configuration is None
    assert v.to_config()["throughputPerTiB"] is None, "the key is spelled throughputPerTiB"


@pytest.mark.parametrize("tier", [125, 250, 500, 1000])
def test_lustre_throughput_tiers(tier: int) -> None:
    assert VolumeSpec.model_validate({**FSX, "throughputPerTiB": tier}).lustre_throughput == tier


def test_a_throughput_persistent_2_does_not_offer() -> None:
    (found,) = issues({**FSX, "throughputPerTiB": 200})
    assert found[0] == "storage.volumes[0].throughputPerTiB"


def test_throughput_applies_to_the_lustre_backends_only() -> None:
    assert issues({**NFS, "throughputPerTiB": 500}) == [
        (
            "storage.volumes[0].throughputPerTiB",
            "`throughputPerTiB` applies to the fsx-lustre / managed-lustre backend, not nfs",
        )
    ]


def test_metadata_configuration() -> None:
    v = VolumeSpec.model_validate({**FSX, "metadataConfiguration": {"mode": "USER_PROVISIONED", "iops": 24000}})
    assert v.metadata_configuration is not None
    assert (v.metadata_configuration.mode, v.metadata_configuration.iops) == ("USER_PROVISIONED", 24000)
    auto = VolumeSpec.model_validate({**FSX, "metadataConfiguration": {}})
    assert auto.metadata_configuration is not None and auto.metadata_configuration.mode == "AUTOMATIC"


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"mode": "AUTOMATIC", "iops": 3000}, "`iops` applies to mode USER_PROVISIONED"),
        ({"mode": "USER_PROVISIONED"}, "mode USER_PROVISIONED needs `iops`"),
        ({"mode": "USER_PROVISIONED", "iops": 2000}, "2000 is not a metadata IOPS value FSx accepts"),
        ({"mode": "USER_PROVISIONED", "iops": 204000}, "204000 is not a metadata IOPS value FSx accepts"),
    ],
)
def test_invalid_metadata_configuration(metadata: dict[str, Any], message: str) -> None:
    (found,) = issues({**FSX, "metadataConfiguration": metadata})
    assert found[0] == "storage.volumes[0].metadataConfiguration.iops"
    assert found[1].startswith(message)


def test_speed_settings_apply_to_a_file_system_made_here() -> None:
    existing = {**FSX, "fileSystemId": "fs-0123"}
    assert issues({**existing, "throughputPerTiB": 1000})[0][0] == "storage.volumes[0].throughputPerTiB"
    assert issues({**existing, "metadataConfiguration": {}})[0][0] == "storage.volumes[0].metadataConfiguration"


def test_metadata_configuration_applies_to_fsx_only() -> None:
    assert issues({**NFS, "metadataConfiguration": {}})[0][0] == "storage.volumes[0].metadataConfiguration"


def test_connect_mode_applies_to_filestore_only() -> None:
    assert issues({**NFS, "connectMode": "PRIVATE_SERVICE_ACCESS"}) == [
        ("storage.volumes[0].connectMode", "`connectMode` applies to the filestore backend, not nfs")
    ]


def test_mount_options_default_to_none_and_apply_where_a_class_or_volume_is_made() -> None:
    assert VolumeSpec.model_validate(NFS).mount_options is None
    shared = {"name": "shared", "backend": "storageClass", "className": "ceph", "size": "1Ti"}
    assert issues({**shared, "mountOptions": ["nconnect=8"]})[0][0] == "storage.volumes[0].mountOptions"


@pytest.mark.parametrize("option", ["", "nconnect = 8"])
def test_a_mount_option_is_one_word(option: str) -> None:
    (found,) = issues({**NFS, "mountOptions": ["hard", option]})
    assert found[0].startswith("storage.volumes[0].mountOptions")


# Bucket volumes (s3, gcs).

S3 = {"name": "checkpoints", "backend": "s3"}
GCS = {"name": "dataset", "backend": "gcs", "accessMode": "ReadOnlyMany"}


def test_a_bucket_volume_needs_no_size_and_its_use_follows_its_access_mode() -> None:
    checkpoints = VolumeSpec.model_validate(S3)
    data = VolumeSpec.model_validate(GCS)
    assert checkpoints.size is None and checkpoints.claim_size == "1Pi"
    assert (checkpoints.object_use, data.object_use) == ("checkpoints", "data")
    assert (checkpoints.read_cache, data.read_cache) == (None, "100Gi")
    assert VolumeSpec.model_validate({**S3, "use": "data"}).object_use == "data", "a read-write data volume"
    assert VolumeSpec.model_validate({**GCS, "cacheSize": "0"}).read_cache is None
    assert VolumeSpec.model_validate(NFS).object_use is None


def test_every_other_backend_still_needs_its_size() -> None:
    assert issues({"name": "c", "backend": "fsx-lustre"}) == [
        ("storage.volumes[0].size", "the fsx-lustre backend needs `size`")
    ]


@pytest.mark.parametrize("key", ["bucket", "prefix", "use", "cacheSize"])
def test_bucket_keys_apply_to_bucket_backends_only(key: str) -> None:
    value = {"bucket": "my-bucket", "prefix": "runs/", "use": "data", "cacheSize": "10Gi"}[key]
    assert issues({**NFS, key: value}) == [
        (f"storage.volumes[0].{key}", f"`{key}` applies to the s3 / gcs backend, not nfs")
    ]


@pytest.mark.parametrize(
    ("backend", "name"), [("s3", "My_Bucket"), ("s3", "ab"), ("gcs", "-bucket"), ("s3", "under_score")]
)
def test_a_bucket_name_the_cloud_refuses_is_an_error(backend: str, name: str) -> None:
    assert issues({"name": "v", "backend": backend, "bucket": name}) == [
        (
            "storage.volumes[0].bucket",
            f"'{name}' is not a {backend} bucket name: 3-63 lower-case letters, digits, dots and hyphens, starting "
            "and ending with a letter or digit",
        )
    ]
    assert VolumeSpec.model_validate({"name": "v", "backend": "gcs", "bucket": "under_score"}).bucket


@pytest.mark.parametrize("prefix", ["/runs", "runs/../secrets", "a//b"])
def test_a_prefix_is_a_relative_folder(prefix: str) -> None:
    assert issues({**S3, "prefix": prefix}) == [
        ("storage.volumes[0].prefix", f"'{prefix}' is not a folder of the bucket: write it relative, as llama-70b/")
    ]


def test_checkpoints_cannot_go_on_a_read_only_bucket_volume_nor_cache_reads() -> None:
    assert issues({**GCS, "use": "checkpoints"}) == [
        (
            "storage.volumes[0].use",
            "checkpoints are written: a ReadOnlyMany volume cannot hold them (accessMode: ReadWriteMany)",
        )
    ]
    assert issues({**S3, "cacheSize": "10Gi"}) == [
        (
            "storage.volumes[0].cacheSize",
            "the read cache is for data volumes (use: data); checkpoints are written, not re-read",
        )
    ]


def test_mountpoint_serves_no_read_write_once_volume() -> None:
    assert issues({**S3, "accessMode": "ReadWriteOnce"}) == [
        ("storage.volumes[0].accessMode", "Mountpoint serves ReadWriteMany and ReadOnlyMany volumes, not ReadWriteOnce")
    ]
    assert VolumeSpec.model_validate({**GCS, "accessMode": "ReadWriteOnce"}).object_use == "checkpoints"


# Google Cloud Managed Lustre (managed-lustre).

LUSTRE = {"name": "training-checkpoints", "backend": "managed-lustre", "size": "18000Gi"}


def test_managed_lustre_defaults_to_the_1000_tier_and_a_file_system_named_after_the_volume() -> None:
    v = VolumeSpec.model_validate(LUSTRE)
    assert (v.lustre_throughput, v.lustre_filesystem) == (1000, "training")
    assert VolumeSpec.model_validate({**LUSTRE, "name": "2024-ckpt"}).lustre_filesystem == "ckpt"
    assert VolumeSpec.model_validate({**LUSTRE, "name": "123"}).lustre_filesystem == "lustre"
    named = VolumeSpec.model_validate({**LUSTRE, "throughputPerTiB": 250, "filesystem": "ckpt1"})
    assert (named.lustre_throughput, named.lustre_filesystem) == (250, "ckpt1")
    assert issues({"name": "c", "backend": "managed-lustre"}) == [
        ("storage.volumes[0].size", "the managed-lustre backend needs `size`")
    ]


def test_a_throughput_managed_lustre_does_not_offer_is_named() -> None:
    assert issues({**LUSTRE, "throughputPerTiB": 2000}) == [
        ("storage.volumes[0].throughputPerTiB", "must be one of 125, 250, 500 or 1000 (got 2000)")
    ]


@pytest.mark.parametrize("name", ["checkpoints", "1ckpt", "ckpt-1", ""])
def test_a_file_system_name_managed_lustre_refuses_is_an_error(name: str) -> None:
    assert issues({**LUSTRE, "filesystem": name}) == [
        (
            "storage.volumes[0].filesystem",
            f"'{name}' is not a Managed Lustre file system name: 1-8 letters and digits, starting with a letter",
        )
    ]


def test_a_size_over_the_tiers_largest_instance_names_the_limit() -> None:
    assert issues({**LUSTRE, "size": "10Pi"}) == [
        (
            "storage.volumes[0].size",
            "10Pi is more than a Managed Lustre instance of 1000 MB/s per TiB holds (10,008,000 GiB): split the data "
            "over volumes, or pick a lower throughputPerTiB, whose instances are larger",
        )
    ]
    assert VolumeSpec.model_validate({**LUSTRE, "size": "10Pi", "throughputPerTiB": 500}).size == "10Pi"


def test_an_existing_instance_is_named_by_its_id_or_full_name() -> None:
    for name in ("shared-lustre", "projects/data-project/locations/us-central1-b/instances/shared-lustre"):
        assert VolumeSpec.model_validate({**LUSTRE, "fileSystemId": name}).file_system_id == name
    assert issues({**LUSTRE, "fileSystemId": "Shared_Lustre"}) == [
        (
            "storage.volumes[0].fileSystemId",
            "'Shared_Lustre' names no Managed Lustre instance: write its id (lower-case letters, digits and hyphens, "
            "starting with a letter) or projects/<project>/locations/<zone>/instances/<id>",
        )
    ]
    full = {**LUSTRE, "fileSystemId": "projects/p/locations/us-central1-b/instances/shared", "zone": "us-central1-a"}
    assert issues(full) == [
        ("storage.volumes[0].zone", "`fileSystemId` names an instance in us-central1-b, not us-central1-a: drop `zone`")
    ]


@pytest.mark.parametrize(("key", "value"), [("throughputPerTiB", 500), ("filesystem", "ckpt")])
def test_settings_of_an_instance_made_here_do_not_apply_to_a_named_one(key: str, value: Any) -> None:
    assert issues({**LUSTRE, "fileSystemId": "shared", key: value}) == [
        (f"storage.volumes[0].{key}", f"`{key}` applies to a file system made here, not one named by `fileSystemId`")
    ]


def test_managed_lustre_keys_apply_to_it_alone() -> None:
    assert issues({**NFS, "filesystem": "ckpt"}) == [
        ("storage.volumes[0].filesystem", "`filesystem` applies to the managed-lustre backend, not nfs")
    ]
    assert issues({**LUSTRE, "metadataConfiguration": {}}) == [
        (
            "storage.volumes[0].metadataConfiguration",
            "`metadataConfiguration` applies to the fsx-lustre backend, not managed-lustre",
        )
    ]


@pytest.mark.parametrize("size", [0, "0", "0Ti"])
def test_a_volume_of_no_capacity_is_refused(size: Any) -> None:
    # Found by the simulate tier's dry run: the API server refuses a claim of storage 0, which render had written.
    (found,) = issues({**NFS, "size": size})
    assert found[0] == "storage.volumes[0].size" and "must be more than 0" in found[1], found
