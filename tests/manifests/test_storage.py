"""Tests for the StorageClasses and PersistentVolumeClaims behind checkpoint and dataset volumes."""

from __future__ import annotations

from typing import Any

import pytest

from components.manifests.storage import persistent_volume, persistent_volume_claim, storage_class, storage_class_name
from components.models import VolumeSpec
from components.models.cluster import GcpClusterSpec
from tests.support.schemas import assert_valid

NFS = {
    "name": "training-checkpoints",
    "namespace": "training",
    "backend": "nfs",
    "server": "nfs.example.internal",
    "share": "/exports/checkpoints",
    "size": "2Ti",
}


def volume(**fields: Any) -> VolumeSpec:
    return VolumeSpec.model_validate(fields)


def test_nfs_volume_gets_a_csi_driver_nfs_class() -> None:
    cls = storage_class(volume(**NFS))
    assert cls is not None
    assert (cls["apiVersion"], cls["kind"]) == ("storage.k8s.io/v1", "StorageClass")
    assert cls["provisioner"] == "nfs.csi.k8s.io"
    assert cls["parameters"] == {"server": "nfs.example.internal", "share": "/exports/checkpoints"}
    assert "namespace" not in cls["metadata"]


def test_nfs_mounts_are_tuned_for_large_sequential_io() -> None:
    cls = storage_class(volume(**NFS))
    assert cls is not None
    assert cls["mountOptions"] == ["nfsvers=4.1", "nconnect=8", "rsize=1048576", "wsize=1048576", "hard"]
    assert cls["volumeBindingMode"] == "Immediate", "an NFS export has no zone to wait for"
    assert_valid(cls)


def test_mount_options_override_the_defaults_whole() -> None:
    cls = storage_class(volume(**NFS, mountOptions=["nfsvers=3", "nconnect=16", "soft"]))
    assert cls is not None
    assert cls["mountOptions"] == ["nfsvers=3", "nconnect=16", "soft"]
    filestore = storage_class(volume(name="dataset", backend="filestore", size="1Ti", mountOptions=["nconnect=4"]))
    assert filestore is not None and filestore["mountOptions"] == ["nconnect=4"]
    efs = storage_class(volume(name="home", backend="efs", size="1Ti", mountOptions=["tls"]), "fs-0123")
    assert efs is not None and efs["mountOptions"] == ["tls"]


def test_filestore_and_efs_classes_keep_their_drivers_mount_options() -> None:
    filestore = storage_class(volume(name="dataset", backend="filestore", size="1Ti"))
    efs = storage_class(volume(name="home", backend="efs", size="1Ti"), "fs-0123")
    assert filestore is not None and "mountOptions" not in filestore
    assert efs is not None and "mountOptions" not in efs


@pytest.mark.parametrize(
    "fields",
    [NFS, {"name": "dataset", "backend": "filestore", "size": "1Ti"}],
)
def test_classes_made_here_retain_their_volumes(fields: dict[str, Any]) -> None:
    cls = storage_class(volume(**fields))
    assert cls is not None
    assert cls["reclaimPolicy"] == "Retain"


def test_claim_uses_the_nfs_class() -> None:
    v = volume(**NFS)
    cls = storage_class(v)
    assert cls is not None
    claim = persistent_volume_claim(v)
    assert claim["spec"]["storageClassName"] == cls["metadata"]["name"]


def test_claim_has_the_volumes_name_namespace_size_and_access_mode() -> None:
    claim = persistent_volume_claim(volume(**NFS))
    assert (claim["apiVersion"], claim["kind"]) == ("v1", "PersistentVolumeClaim")
    assert (claim["metadata"]["name"], claim["metadata"]["namespace"]) == ("training-checkpoints", "training")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "2Ti"


@pytest.mark.parametrize("mode", ["ReadWriteMany", "ReadOnlyMany", "ReadWriteOnce"])
def test_claim_access_mode(mode: str) -> None:
    assert persistent_volume_claim(volume(**NFS, accessMode=mode))["spec"]["accessModes"] == [mode]


def test_storage_class_backend_uses_the_named_class_and_makes_none() -> None:
    v = volume(name="shared", backend="storageClass", className="ceph-cephfs", size="500Gi")
    assert storage_class(v) is None
    assert storage_class_name(v) == "ceph-cephfs"
    assert persistent_volume_claim(v)["spec"]["storageClassName"] == "ceph-cephfs"


GKE = GcpClusterSpec.model_validate(
    {"provider": "gcp", "name": "train", "project": "ml-project", "region": "us-central1", "network": "train-vpc"}
)


def test_filestore_class() -> None:
    cls = storage_class(volume(name="dataset", backend="filestore", size="1Ti"))
    assert cls is not None
    assert cls["provisioner"] == "filestore.csi.storage.gke.io"
    assert cls["parameters"] == {"tier": "basic_ssd"}, "no GKE cluster known: the driver's default network"
    assert (
        persistent_volume_claim(volume(name="dataset", backend="filestore", size="1Ti"))["spec"]["storageClassName"]
        == cls["metadata"]["name"]
    )


def test_filestore_instances_are_made_in_the_zone_of_their_first_pod() -> None:
    cls = storage_class(volume(name="dataset", backend="filestore", size="1Ti"), cluster=GKE)
    assert cls is not None
    assert cls["volumeBindingMode"] == "WaitForFirstConsumer"
    assert "allowedTopologies" not in cls
    claim = persistent_volume_claim(volume(name="dataset", backend="filestore", size="1Ti"))
    assert claim["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}, "Pending until a job mounts it"
    assert_valid(cls, claim)
    assert "annotations" not in persistent_volume_claim(volume(**NFS))["metadata"]


def test_filestore_joins_the_clusters_network() -> None:
    cls = storage_class(volume(name="dataset", backend="filestore", size="1Ti"), cluster=GKE)
    assert cls is not None
    assert cls["parameters"] == {"tier": "basic_ssd", "network": "train-vpc"}
    default = GcpClusterSpec.model_validate({**GKE.model_dump(), "network": "default"})
    cls = storage_class(volume(name="dataset", backend="filestore", size="1Ti"), cluster=default)
    assert cls is not None and cls["parameters"]["network"] == "default"


def test_filestore_private_service_access_names_the_network_in_full() -> None:
    v = volume(name="dataset", backend="filestore", size="1Ti", tier="ENTERPRISE", connectMode="PRIVATE_SERVICE_ACCESS")
    cls = storage_class(v, cluster=GKE)
    assert cls is not None
    assert cls["parameters"] == {
        "tier": "enterprise",
        "network": "projects/ml-project/global/networks/train-vpc",
        "connect-mode": "PRIVATE_SERVICE_ACCESS",
    }
    shared = GcpClusterSpec.model_validate({**GKE.model_dump(), "network": "projects/host/global/networks/shared"})
    cls = storage_class(v, cluster=shared)
    assert cls is not None and cls["parameters"]["network"] == "projects/host/global/networks/shared"


@pytest.mark.parametrize(
    ("tier", "sent"),
    [("BASIC_HDD", "basic_hdd"), ("ZONAL", "zonal"), ("REGIONAL", "regional"), ("ENTERPRISE", "enterprise")],
)
def test_filestore_tier_is_sent_as_the_driver_compares_it(tier: str, sent: str) -> None:
    # The driver places enterprise and regional instances in the region only for the lower-case names.
    cls = storage_class(volume(name="dataset", backend="filestore", size="10Ti", tier=tier))
    assert cls is not None
    assert cls["parameters"]["tier"] == sent


def test_an_efs_class_needs_its_file_system() -> None:
    v = volume(name="checkpoints", backend="efs", size="1Ti")
    assert storage_class(v) is None, "the cloud stack makes it once the file system exists"
    assert persistent_volume_claim(v)["spec"]["storageClassName"] == storage_class_name(v)
    cls = storage_class(v, "fs-0123456789abcdef0")
    assert_valid(cls)
    assert cls["provisioner"] == "efs.csi.aws.com" and cls["reclaimPolicy"] == "Retain"
    assert cls["parameters"] == {
        "provisioningMode": "efs-ap",
        "fileSystemId": "fs-0123456789abcdef0",
        "directoryPerms": "700",
    }
    given = volume(name="home", backend="efs", size="1Ti", fileSystemId="fs-0aaaaaaaaaaaaaaaa")
    assert storage_class(given)["parameters"]["fileSystemId"] == "fs-0aaaaaaaaaaaaaaaa"


def test_an_fsx_claim_binds_to_its_retained_volume() -> None:
    v = volume(name="checkpoints", backend="fsx-lustre", size="2400Gi")
    assert storage_class(v) is None
    claim = persistent_volume_claim(v)
    assert claim["spec"]["storageClassName"] == "" and claim["spec"]["volumeName"] == "fsx-training-checkpoints"
    assert persistent_volume(v) is None, "unknown until the file system exists"
    pv = persistent_volume(v, "fs-0123", "fs-0123.fsx.us-east-1.amazonaws.com", "abcdefgh")
    assert_valid(pv, claim)
    assert pv["metadata"]["name"] == claim["spec"]["volumeName"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["spec"]["csi"] == {
        "driver": "fsx.csi.aws.com",
        "volumeHandle": "fs-0123",
        "volumeAttributes": {"dnsname": "fs-0123.fsx.us-east-1.amazonaws.com", "mountname": "abcdefgh"},
    }
    assert pv["spec"]["mountOptions"] == ["flock"]


def test_fsx_mount_options_override() -> None:
    v = volume(name="checkpoints", backend="fsx-lustre", size="2400Gi", mountOptions=["flock", "noatime"])
    pv = persistent_volume(v, "fs-0123", "fs-0123.fsx.us-east-1.amazonaws.com", "abcdefgh")
    assert pv is not None and pv["spec"]["mountOptions"] == ["flock", "noatime"]
    bare = persistent_volume(v.model_copy(update={"mount_options": []}), "fs-0123", "dns", "mount")
    assert bare is not None and "mountOptions" not in bare["spec"]
    assert_valid(pv)


def test_each_volume_gets_its_own_class() -> None:
    a = volume(**NFS)
    b = volume(**{**NFS, "name": "training-dataset", "share": "/exports/dataset"})
    assert storage_class_name(a) != storage_class_name(b)


def test_same_claim_name_in_two_namespaces_does_not_share_a_class() -> None:
    # StorageClasses are cluster-scoped: two classes with one name but different shares collide.
    a = volume(**NFS)
    b = volume(**{**NFS, "namespace": "research", "share": "/exports/research"})
    class_a, class_b = storage_class(a), storage_class(b)
    assert class_a is not None
    assert class_b is not None
    assert class_a["metadata"]["name"] != class_b["metadata"]["name"]


@pytest.mark.parametrize(
    "fields",
    [
        NFS,
        {**NFS, "accessMode": "ReadOnlyMany"},
        {"name": "dataset", "backend": "filestore", "size": "1Ti", "tier": "ENTERPRISE"},
        {"name": "dataset", "backend": "filestore", "size": "1Ti", "connectMode": "PRIVATE_SERVICE_ACCESS"},
        {**NFS, "mountOptions": ["nfsvers=4.2", "nconnect=16"]},
        {"name": "shared", "backend": "storageClass", "className": "ceph-cephfs", "size": "500Gi"},
        {"name": "fsx", "backend": "fsx-lustre", "size": "1200Gi"},
    ],
)
def test_validates(fields: dict[str, Any]) -> None:
    v = volume(**fields)
    objects = [persistent_volume_claim(v)]
    cls = storage_class(v, cluster=GKE)
    if cls is not None:
        objects.append(cls)
    assert_valid(*objects)
