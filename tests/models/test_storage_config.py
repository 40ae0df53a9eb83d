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


def test_throughput_applies_to_fsx_only() -> None:
    assert issues({**NFS, "throughputPerTiB": 500}) == [
        ("storage.volumes[0].throughputPerTiB", "`throughputPerTiB` applies to the fsx-lustre backend, not nfs")
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
