"""Storage objects: the StorageClass behind each volume, the PersistentVolumes of file systems and buckets the
stack names or makes, and the ReadWriteMany claims jobs mount."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from components import quantity
from components.manifests.meta import metadata
from components.models.cluster import ClusterSpec
from components.models.storage import (
    LUSTRE_BACKENDS,
    LUSTRE_MOUNT_OPTIONS,
    NFS_MOUNT_OPTIONS,
    OBJECT_STORES,
    VolumeSpec,
)

NFS_PROVISIONER = "nfs.csi.k8s.io"
FILESTORE_PROVISIONER = "filestore.csi.storage.gke.io"
EFS_PROVISIONER = "efs.csi.aws.com"
FSX_PROVISIONER = "fsx.csi.aws.com"
MANAGED_LUSTRE_DRIVER = "lustre.csi.storage.gke.io"
"""GKE's Managed Lustre CSI driver (GoogleCloudPlatform/lustre-csi-driver)."""
S3_DRIVER = "s3.csi.aws.com"
"""Mountpoint for Amazon S3's CSI driver (awslabs/mountpoint-s3-csi-driver)."""
GCS_DRIVER = "gcsfuse.csi.storage.gke.io"
"""GKE's Cloud Storage FUSE CSI driver (GoogleCloudPlatform/gcs-fuse-csi-driver)."""
OBJECT_STORE_DRIVERS = (S3_DRIVER, GCS_DRIVER)
# Backends whose class binds a claim when its first pod is scheduled (volumeBindingMode WaitForFirstConsumer).
LATE_BINDING = frozenset({"filestore"})
# Backends whose claim binds to a PersistentVolume made here (static provisioning), not through a class.
STATIC = frozenset({"fsx-lustre", "managed-lustre", *OBJECT_STORES})
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}
_PREFIX = {
    "nfs": "nfs",
    "efs": "efs",
    "fsx-lustre": "fsx",
    "filestore": "filestore",
    "managed-lustre": "lustre",
    "s3": "s3",
    "gcs": "gcs",
}

# Mountpoint for Amazon S3 (1.22.3, in CSI driver v2.7.0; mountpoint-s3 doc/CONFIGURATION.md). A mount may create
# files and nothing else unless told: checkpoint rotation deletes old checkpoints (`allow-delete`), and a pointer
# file rewritten at every save (Megatron's latest_checkpointed_iteration.txt, DeepSpeed's `latest`) is an
# overwrite (`allow-overwrite`, for a file opened with O_TRUNC). A dataset does not change under a run, so its
# metadata is kept for the mount's life (`metadata-ttl=indefinite`, which the doc advises for a bucket whose
# content does not change). The CSI driver adds `read-only` itself for a ReadOnlyMany volume (pkg/driver/node/
# node.go) and allow-other / allow-root for the pod's user. Options are written `name=value`, which the driver
# reads as it reads `name value` (pkg/mountpoint/args.go), so every option is one word as mountOptions requires.
S3_CHECKPOINT_OPTIONS = ("allow-delete", "allow-overwrite")
S3_DATA_OPTIONS = ("metadata-ttl=indefinite",)
# Cloud Storage FUSE, as GKE's add-on runs it: flags as `name` or `name=value`, config-file keys as
# `section:key:value` (gcs-fuse-csi-driver pkg/sidecar_mounter/sidecar_mounter_config.go). What gcsfuse's own
# aiml-training and aiml-checkpointing profiles set (gcsfuse cfg/params.yaml, v3.11.2, the GKE storage profiles
# gcsfusecsi-training and -checkpointing build on them): implicit directories, metadata kept for the mount's life
# with no negative cache, unbounded stat and type caches. Written out rather than as `profile:...` so they hold
# on every gcsfuse a GKE version runs (profiles came in v3.4, streaming writes by default in v3.0).
GCS_METADATA_OPTIONS = (
    "implicit-dirs",
    "metadata-cache:negative-ttl-secs:0",
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
)
# Data: the file cache (in the sidecar's emptyDir on the node's disks: the local SSDs where the pool has them)
# filled by parallel downloads of each file; caching is on when max-size-mb is not 0.
GCS_DATA_OPTIONS = ("file-cache:enable-parallel-downloads:true",)
# Checkpoints: streaming writes upload as the file is written, instead of staging the whole file on local disk
# first ("up to 40% faster" checkpoints, gcsfuse README); directory renames of a flat bucket up to 200000 objects,
# as aiml-checkpointing sets (a hierarchical-namespace bucket renames folders itself).
GCS_CHECKPOINT_OPTIONS = ("write:enable-streaming-writes:true", "rename-dir-limit=200000")
GCSFUSE_VOLUMES_ANNOTATION = "gke-gcsfuse/volumes"
"""The pod annotation that makes GKE's webhook add the gcsfuse sidecar."""
# The sidecar's limits, "0" for none: it keeps its default requests and may use what the node has, as GKE advises
# for high-throughput training (gcs-fuse-csi-driver pkg/webhook/config.go: a zero limit with no request keeps the
# default request). Its ephemeral storage is requested at the size of the read caches it holds, so the scheduler
# keeps that room on the node.
GCSFUSE_SIDECAR_LIMITS = {
    "gke-gcsfuse/cpu-limit": "0",
    "gke-gcsfuse/memory-limit": "0",
    "gke-gcsfuse/ephemeral-storage-limit": "0",
}
GCSFUSE_EPHEMERAL_REQUEST = "gke-gcsfuse/ephemeral-storage-request"


def storage_class_name(volume: VolumeSpec) -> str:
    """The StorageClass a volume's claim uses: the named one, or the one made for it (cluster-wide, so
    named after its namespace too)."""
    if volume.backend == "storageClass":
        assert volume.class_name is not None  # enforced by VolumeSpec
        return volume.class_name
    return f"{_PREFIX[volume.backend]}-{volume.namespace}-{volume.name}"[:253]


def mount_options(volume: VolumeSpec) -> list[str]:
    """The mount options of the class or volume made for a volume: its own, or the backend's defaults (an object
    store's for its use)."""
    if volume.mount_options is not None:
        return list(volume.mount_options)
    if volume.backend == "s3":
        prefix = [f"prefix={volume.prefix.rstrip('/')}/"] if volume.prefix else []
        use = S3_DATA_OPTIONS if volume.object_use == "data" else S3_CHECKPOINT_OPTIONS
        return [*use, *prefix]
    if volume.backend == "gcs":
        prefix = [f"only-dir={volume.prefix.rstrip('/')}"] if volume.prefix else []
        if volume.object_use == "checkpoints":
            return [*GCS_METADATA_OPTIONS, *GCS_CHECKPOINT_OPTIONS, *prefix]
        cache = volume.read_cache
        files = [f"file-cache:max-size-mb:{mebibytes(cache)}", *GCS_DATA_OPTIONS] if cache else []
        return [*GCS_METADATA_OPTIONS, *files, *prefix]
    lustre = dict.fromkeys(LUSTRE_BACKENDS, LUSTRE_MOUNT_OPTIONS)
    return list({"nfs": NFS_MOUNT_OPTIONS, **lustre}.get(volume.backend, ()))


def mebibytes(size: str) -> int:
    """A quantity in whole MiB, rounded up (gcsfuse sizes its caches in MiB)."""
    return math.ceil(quantity.parse(size) / 2**20)


def pod_annotations(volumes: Iterable[VolumeSpec]) -> dict[str, str]:
    """What a pod mounting these volumes needs on its metadata: for gcs volumes, GKE's gcsfuse sidecar with no
    limits and its read caches' room requested; nothing otherwise."""
    buckets = [v for v in volumes if v.backend == "gcs"]
    if not buckets:
        return {}
    annotations = {GCSFUSE_VOLUMES_ANNOTATION: "true", **GCSFUSE_SIDECAR_LIMITS}
    caches = sum(mebibytes(v.read_cache) for v in buckets if v.read_cache)
    if caches:
        annotations[GCSFUSE_EPHEMERAL_REQUEST] = f"{caches}Mi"
    return annotations


def filestore_network(volume: VolumeSpec, cluster: ClusterSpec | None) -> str | None:
    """The VPC a Filestore instance joins: the GKE cluster's network, so nodes reach it (the driver
    would use `default` otherwise). PRIVATE_SERVICE_ACCESS needs the full name, which a bare name in
    the cluster's own project is expanded to. None when the cluster is not GKE (the driver's default)."""
    if cluster is None or cluster.provider != "gcp":
        return None
    network = cluster.network
    if volume.connect_mode == "PRIVATE_SERVICE_ACCESS" and "/" not in network:
        network = f"projects/{cluster.project}/global/networks/{network}"
    return network


def storage_class(
    volume: VolumeSpec, file_system_id: Any = None, *, cluster: ClusterSpec | None = None
) -> dict[str, Any] | None:
    """The StorageClass made for a volume, or None where it needs none (storageClass, the Lustre backends, buckets) or
    its file system is not known yet (efs created by the stack: the cloud side makes it then).

    `cluster` is the stack's cluster: a Filestore class joins a GKE cluster's network.
    Every class keeps its volumes (`reclaimPolicy: Retain`): deleting a claim never deletes data.
    """
    binding = "Immediate"
    if volume.backend == "nfs":
        provisioner = NFS_PROVISIONER
        parameters: dict[str, Any] = {"server": volume.server, "share": volume.share}
    elif volume.backend == "filestore":
        provisioner = FILESTORE_PROVISIONER
        # The driver compares the tier in lower case (gcp-filestore-csi-driver pkg/csi_driver/controller.go):
        # an upper-case ENTERPRISE or REGIONAL would not be placed in the region those tiers need.
        parameters = {"tier": (volume.tier or "BASIC_SSD").lower()}
        network = filestore_network(volume, cluster)
        if network is not None:
            parameters["network"] = network
        if volume.connect_mode is not None:
            parameters["connect-mode"] = volume.connect_mode
        # Placement: WaitForFirstConsumer, not allowedTopologies. The instance is made when the first pod
        # that mounts the claim is scheduled, in that node's zone (the driver's README, "Topology
        # preferences"; GKE's own standard-rwx class binds this way). A training job's pods are the
        # consumers, so the instance lands with the GPU pool on a regional cluster with pools in any
        # zone, and needs no zone list kept in step with the pools. allowedTopologies on
        # topology.gke.io/zone can pin it only where a single pool zone is known, and with Immediate
        # binding the instance is still made at claim time, before any GPU node exists.
        binding = "WaitForFirstConsumer"
    elif volume.backend == "efs" and (file_system_id or volume.file_system_id):
        # Dynamic access points: each claim gets its own directory on the one file system.
        provisioner = EFS_PROVISIONER
        parameters = {
            "provisioningMode": "efs-ap",
            "fileSystemId": file_system_id or volume.file_system_id,
            "directoryPerms": "700",
        }
    else:
        return None
    obj: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": metadata(storage_class_name(volume)),
        "provisioner": provisioner,
        "parameters": parameters,
        "reclaimPolicy": "Retain",
        "volumeBindingMode": binding,
        "allowVolumeExpansion": volume.backend != "efs",
    }
    options = mount_options(volume)
    if options:
        obj["mountOptions"] = options
    return obj


def persistent_volume_name(volume: VolumeSpec) -> str:
    """The PersistentVolume a static claim binds to: a Lustre file system's, or a bucket's."""
    return f"{_PREFIX[volume.backend]}-{volume.namespace}-{volume.name}"[:253]


def bucket_volume(volume: VolumeSpec, bucket: Any = None) -> dict[str, Any] | None:
    """The PersistentVolume of an s3 or gcs volume, kept when released and reserved for its claim; None while
    the bucket is unknown (one the stack makes: the cloud side makes the volume then)."""
    bucket = bucket or volume.bucket
    if volume.backend not in OBJECT_STORES or bucket is None:
        return None
    name = persistent_volume_name(volume)
    if volume.backend == "s3":
        # Static provisioning only; volumeHandle must be unique across volumes (docs/CONFIGURATION.md). The read
        # cache is an emptyDir of the Mountpoint pod on the node's disks, its size limit passed on to Mountpoint
        # as --max-cache-size (docs/CACHING.md; v2.5.0).
        attributes: dict[str, Any] = {"bucketName": bucket}
        if volume.read_cache:
            attributes |= {"cache": "emptyDir", "cacheEmptyDirSizeLimit": volume.read_cache}
        csi: dict[str, Any] = {"driver": S3_DRIVER, "volumeHandle": name, "volumeAttributes": attributes}
    else:
        # The bucket is the volume handle (GKE, "Static provisioning"); the driver checks at mount that the pod's
        # service account can reach it.
        csi = {"driver": GCS_DRIVER, "volumeHandle": bucket}
    return _static_volume(volume, csi, reserved=True)


def persistent_volume(
    volume: VolumeSpec, file_system_id: Any = None, dns_name: Any = None, mount_name: Any = None
) -> dict[str, Any] | None:
    """The PersistentVolume of an FSx for Lustre file system, kept when released; None while unknown."""
    if volume.backend != "fsx-lustre":
        return None
    file_system_id = file_system_id or volume.file_system_id
    if file_system_id is None or dns_name is None or mount_name is None:
        return None
    csi = {
        "driver": FSX_PROVISIONER,
        "volumeHandle": file_system_id,
        "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name},
    }
    return _static_volume(volume, csi, reserved=False)


def managed_lustre_volume(
    volume: VolumeSpec, handle: Any = None, ip: Any = None, filesystem: Any = None
) -> dict[str, Any] | None:
    """The PersistentVolume of a Managed Lustre instance, kept when released and reserved for its claim; None while
    its address is unknown (the cloud side makes it once the instance exists).

    `handle` is `<project>/<zone>/<instance id>`, `ip` and `filesystem` the instance's mount point: the driver mounts
    `<ip>@tcp:/<filesystem>` (GKE, "Access existing Managed Lustre instances"; lustre-csi-driver pkg/csi_driver/
    node.go reads `ip` and `filesystem`, which every driver version takes).
    """
    if volume.backend != "managed-lustre" or handle is None or ip is None or filesystem is None:
        return None
    csi = {
        "driver": MANAGED_LUSTRE_DRIVER,
        "volumeHandle": handle,
        "volumeAttributes": {"ip": ip, "filesystem": filesystem},
    }
    return _static_volume(volume, csi, reserved=True)


def _static_volume(volume: VolumeSpec, csi: dict[str, Any], *, reserved: bool) -> dict[str, Any]:
    """A statically provisioned PersistentVolume of a volume: its CSI source, kept when released, with the volume's
    mount options; `reserved` binds it to the volume's claim alone (claimRef)."""
    spec: dict[str, Any] = {
        "capacity": {"storage": volume.claim_size},
        "volumeMode": "Filesystem",
        "accessModes": [volume.access_mode],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "",
    }
    if reserved:
        spec["claimRef"] = {"namespace": volume.namespace, "name": volume.name}
    options = mount_options(volume)
    if options:
        spec["mountOptions"] = options
    spec["csi"] = csi
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata(persistent_volume_name(volume)),
        "spec": spec,
    }


def persistent_volume_claim(volume: VolumeSpec) -> dict[str, Any]:
    """The claim jobs mount: by StorageClass, or bound to its PersistentVolume (Lustre file systems, buckets)."""
    spec: dict[str, Any] = {"accessModes": [volume.access_mode]}
    if volume.backend in STATIC:
        spec |= {"storageClassName": "", "volumeName": persistent_volume_name(volume)}
    else:
        spec["storageClassName"] = storage_class_name(volume)
    spec["resources"] = {"requests": {"storage": volume.claim_size}}
    # A late-binding claim stays Pending until a job mounts it: Pulumi must not wait for it to bind
    # (pulumi-kubernetes waits for Bound unless it finds the class's binding mode, #895, #3130, #4181).
    annotations = SKIP_AWAIT if volume.backend in LATE_BINDING else None
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(volume.name, volume.namespace, annotations=annotations),
        "spec": spec,
    }
