"""Tests for the StorageClasses and PersistentVolumeClaims behind checkpoint and dataset volumes."""

from __future__ import annotations

from typing import Any

import pytest

from components.manifests.storage import (
    bucket_volume,
    managed_lustre_volume,
    persistent_volume,
    persistent_volume_claim,
    pod_annotations,
    storage_class,
    storage_class_name,
)
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


def test_a_managed_lustre_claim_binds_to_the_instances_volume_reserved_for_it() -> None:
    v = volume(name="checkpoints", backend="managed-lustre", size="18000Gi")
    assert storage_class(v, cluster=GKE) is None, "the instance is made by the stack, not the driver"
    claim = persistent_volume_claim(v)
    assert claim["spec"]["storageClassName"] == "" and claim["spec"]["volumeName"] == "lustre-training-checkpoints"
    assert managed_lustre_volume(v) is None, "unknown until the instance exists"
    pv = managed_lustre_volume(v, "ml-prod/us-central1-a/train-training-checkpoints", "10.90.1.4", "checkpoi")
    assert pv is not None
    assert_valid(pv, claim)
    spec = pv["spec"]
    assert pv["metadata"]["name"] == claim["spec"]["volumeName"]
    assert spec["csi"] == {
        "driver": "lustre.csi.storage.gke.io",
        "volumeHandle": "ml-prod/us-central1-a/train-training-checkpoints",
        "volumeAttributes": {"ip": "10.90.1.4", "filesystem": "checkpoi"},
    }
    assert spec["claimRef"] == {"namespace": "training", "name": "checkpoints"}, "reserved for its own claim"
    assert spec["persistentVolumeReclaimPolicy"] == "Retain" and spec["storageClassName"] == ""
    assert spec["capacity"] == claim["spec"]["resources"]["requests"] == {"storage": "18000Gi"}
    assert spec["mountOptions"] == ["flock"], "coherent flock across nodes, as FSx's"
    own = managed_lustre_volume(v.model_copy(update={"mount_options": ["flock", "noatime"]}), "h", "10.0.0.2", "fs")
    assert own is not None and own["spec"]["mountOptions"] == ["flock", "noatime"]
    assert managed_lustre_volume(volume(name="c", backend="fsx-lustre", size="1200Gi"), "h", "ip", "fs") is None


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
        {"name": "lustre", "backend": "managed-lustre", "size": "18000Gi"},
    ],
)
def test_validates(fields: dict[str, Any]) -> None:
    v = volume(**fields)
    objects = [persistent_volume_claim(v)]
    cls = storage_class(v, cluster=GKE)
    if cls is not None:
        objects.append(cls)
    assert_valid(*objects)


# Bucket volumes: a PersistentVolume per bucket, its claim bound to it, mount options by use.

S3_CHECKPOINTS = {"name": "checkpoints", "backend": "s3", "bucket": "example-checkpoints"}
GCS_DATA = {"name": "dataset", "backend": "gcs", "bucket": "example-dataset", "accessMode": "ReadOnlyMany"}


def test_an_s3_checkpoint_volume_is_a_static_mountpoint_volume_that_may_delete_and_overwrite() -> None:
    v = volume(**S3_CHECKPOINTS)
    pv = bucket_volume(v)
    assert pv is not None
    assert_valid(pv)
    spec = pv["spec"]
    assert spec["csi"] == {
        "driver": "s3.csi.aws.com",
        "volumeHandle": "s3-training-checkpoints",
        "volumeAttributes": {"bucketName": "example-checkpoints"},
    }
    assert spec["mountOptions"] == ["allow-delete", "allow-overwrite"]
    assert spec["persistentVolumeReclaimPolicy"] == "Retain" and spec["storageClassName"] == ""
    assert spec["claimRef"] == {"namespace": "training", "name": "checkpoints"}, "reserved for its own claim"
    assert spec["capacity"] == {"storage": "1Pi"}, "a bucket has no size; Kubernetes needs one"
    claim = persistent_volume_claim(v)
    assert_valid(claim)
    assert claim["spec"]["volumeName"] == pv["metadata"]["name"] and claim["spec"]["storageClassName"] == ""
    assert claim["spec"]["resources"]["requests"]["storage"] == spec["capacity"]["storage"]
    assert storage_class(v) is None


def test_an_s3_data_volume_caches_reads_on_the_node_and_keeps_its_metadata() -> None:
    pv = bucket_volume(volume(name="dataset", backend="s3", bucket="example-dataset", accessMode="ReadOnlyMany"))
    assert pv is not None
    assert_valid(pv)
    assert pv["spec"]["mountOptions"] == ["metadata-ttl=indefinite"], "the driver adds read-only for ReadOnlyMany"
    assert pv["spec"]["csi"]["volumeAttributes"] == {
        "bucketName": "example-dataset",
        "cache": "emptyDir",
        "cacheEmptyDirSizeLimit": "100Gi",
    }
    uncached = bucket_volume(volume(name="d", backend="s3", bucket="b-1", use="data", cacheSize="0"))
    assert uncached is not None and "cache" not in uncached["spec"]["csi"]["volumeAttributes"]


def test_a_prefix_mounts_one_folder_of_the_bucket() -> None:
    s3 = bucket_volume(volume(**S3_CHECKPOINTS, prefix="llama/run-1"))
    gcs = bucket_volume(volume(**GCS_DATA, prefix="shards/"))
    assert s3 is not None and "prefix=llama/run-1/" in s3["spec"]["mountOptions"], "Mountpoint's prefix ends in /"
    assert gcs is not None and "only-dir=shards" in gcs["spec"]["mountOptions"]


def test_a_gcs_data_volume_reads_through_gcsfuses_file_cache_with_parallel_downloads() -> None:
    pv = bucket_volume(volume(**GCS_DATA, cacheSize="200Gi"))
    assert pv is not None
    assert_valid(pv)
    assert pv["spec"]["csi"] == {"driver": "gcsfuse.csi.storage.gke.io", "volumeHandle": "example-dataset"}
    options = pv["spec"]["mountOptions"]
    assert "file-cache:max-size-mb:204800" in options and "file-cache:enable-parallel-downloads:true" in options
    assert {"implicit-dirs", "metadata-cache:ttl-secs:-1", "metadata-cache:negative-ttl-secs:0"} <= set(options)
    assert not any(o.startswith("write:") for o in options)


def test_a_gcs_checkpoint_volume_streams_its_writes_and_caches_no_reads() -> None:
    pv = bucket_volume(volume(name="checkpoints", backend="gcs", bucket="example-checkpoints"))
    assert pv is not None
    options = pv["spec"]["mountOptions"]
    assert "write:enable-streaming-writes:true" in options and "rename-dir-limit=200000" in options
    assert not any(o.startswith("file-cache:") for o in options)


def test_a_bucket_the_stack_makes_has_its_volume_made_once_the_bucket_exists() -> None:
    made = volume(name="checkpoints", backend="gcs")
    assert bucket_volume(made) is None
    later = bucket_volume(made, "train-training-checkpoints-123")
    assert later is not None and later["spec"]["csi"]["volumeHandle"] == "train-training-checkpoints-123"


def test_a_bucket_volumes_own_mount_options_replace_the_defaults() -> None:
    pv = bucket_volume(volume(**S3_CHECKPOINTS, mountOptions=["allow-delete"]))
    assert pv is not None and pv["spec"]["mountOptions"] == ["allow-delete"]


def test_pods_mounting_a_gcs_volume_get_the_gcsfuse_sidecar_with_room_for_its_caches() -> None:
    data = volume(**GCS_DATA)
    checkpoints = volume(name="checkpoints", backend="gcs")
    assert pod_annotations([volume(**S3_CHECKPOINTS), volume(**NFS)]) == {}
    assert pod_annotations([data, checkpoints]) == {
        "gke-gcsfuse/volumes": "true",
        "gke-gcsfuse/cpu-limit": "0",
        "gke-gcsfuse/memory-limit": "0",
        "gke-gcsfuse/ephemeral-storage-limit": "0",
        "gke-gcsfuse/ephemeral-storage-request": "102400Mi",
    }
    assert "gke-gcsfuse/ephemeral-storage-request" not in pod_annotations([checkpoints])
