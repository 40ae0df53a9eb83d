"""Storage objects: the StorageClass behind each volume and the ReadWriteMany claims jobs mount."""

from __future__ import annotations

from typing import Any

from components.manifests.meta import metadata
from components.models.cluster import ClusterSpec
from components.models.storage import LUSTRE_MOUNT_OPTIONS, NFS_MOUNT_OPTIONS, VolumeSpec

NFS_PROVISIONER = "nfs.csi.k8s.io"
FILESTORE_PROVISIONER = "filestore.csi.storage.gke.io"
EFS_PROVISIONER = "efs.csi.aws.com"
FSX_PROVISIONER = "fsx.csi.aws.com"
# Backends whose class binds a claim when its first pod is scheduled (volumeBindingMode WaitForFirstConsumer).
LATE_BINDING = frozenset({"filestore"})
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}
_PREFIX = {"nfs": "nfs", "efs": "efs", "fsx-lustre": "fsx", "filestore": "filestore"}


def storage_class_name(volume: VolumeSpec) -> str:
    """The StorageClass a volume's claim uses: the named one, or the one made for it (cluster-wide, so
    named after its namespace too)."""
    if volume.backend == "storageClass":
        assert volume.class_name is not None  # enforced by VolumeSpec
        return volume.class_name
    return f"{_PREFIX[volume.backend]}-{volume.namespace}-{volume.name}"[:253]


def mount_options(volume: VolumeSpec) -> list[str]:
    """The mount options of the class or volume made for a volume: its own, or the backend's defaults."""
    if volume.mount_options is not None:
        return list(volume.mount_options)
    return list({"nfs": NFS_MOUNT_OPTIONS, "fsx-lustre": LUSTRE_MOUNT_OPTIONS}.get(volume.backend, ()))


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
    """The StorageClass made for a volume, or None where it needs none (storageClass, fsx-lustre) or
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
    """The PersistentVolume an FSx for Lustre claim binds to (static: the stack made the file system)."""
    return f"fsx-{volume.namespace}-{volume.name}"[:253]


def persistent_volume(
    volume: VolumeSpec, file_system_id: Any = None, dns_name: Any = None, mount_name: Any = None
) -> dict[str, Any] | None:
    """The PersistentVolume of an FSx for Lustre file system, kept when released; None while unknown."""
    if volume.backend != "fsx-lustre":
        return None
    file_system_id = file_system_id or volume.file_system_id
    if file_system_id is None or dns_name is None or mount_name is None:
        return None
    pv: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata(persistent_volume_name(volume)),
        "spec": {
            "capacity": {"storage": volume.size},
            "volumeMode": "Filesystem",
            "accessModes": [volume.access_mode],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "csi": {
                "driver": FSX_PROVISIONER,
                "volumeHandle": file_system_id,
                "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name},
            },
        },
    }
    options = mount_options(volume)
    if options:
        pv["spec"]["mountOptions"] = options
    return pv


def persistent_volume_claim(volume: VolumeSpec) -> dict[str, Any]:
    """The claim jobs mount: by StorageClass, or bound to its PersistentVolume for FSx for Lustre."""
    spec: dict[str, Any] = {"accessModes": [volume.access_mode]}
    if volume.backend == "fsx-lustre":
        spec |= {"storageClassName": "", "volumeName": persistent_volume_name(volume)}
    else:
        spec["storageClassName"] = storage_class_name(volume)
    spec["resources"] = {"requests": {"storage": volume.size}}
    # A late-binding claim stays Pending until a job mounts it: Pulumi must not wait for it to bind
    # (pulumi-kubernetes waits for Bound unless it finds the class's binding mode, #895, #3130, #4181).
    annotations = SKIP_AWAIT if volume.backend in LATE_BINDING else None
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(volume.name, volume.namespace, annotations=annotations),
        "spec": spec,
    }
