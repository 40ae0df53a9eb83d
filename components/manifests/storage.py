"""Storage objects: the StorageClass behind each volume and the ReadWriteMany claims jobs mount."""

from __future__ import annotations

from typing import Any

from components.manifests.meta import metadata
from components.models.storage import VolumeSpec

NFS_PROVISIONER = "nfs.csi.k8s.io"
FILESTORE_PROVISIONER = "filestore.csi.storage.gke.io"
EFS_PROVISIONER = "efs.csi.aws.com"
FSX_PROVISIONER = "fsx.csi.aws.com"
_PREFIX = {"nfs": "nfs", "efs": "efs", "fsx-lustre": "fsx", "filestore": "filestore"}


def storage_class_name(volume: VolumeSpec) -> str:
    """The StorageClass a volume's claim uses: the named one, or the one made for it (cluster-wide, so
    named after its namespace too)."""
    if volume.backend == "storageClass":
        assert volume.class_name is not None  # enforced by VolumeSpec
        return volume.class_name
    return f"{_PREFIX[volume.backend]}-{volume.namespace}-{volume.name}"[:253]


def storage_class(volume: VolumeSpec, file_system_id: Any = None) -> dict[str, Any] | None:
    """The StorageClass made for a volume, or None where it needs none (storageClass, fsx-lustre) or
    its file system is not known yet (efs created by the stack: the cloud side makes it then).

    Every class keeps its volumes (`reclaimPolicy: Retain`): deleting a claim never deletes data.
    """
    options: list[str] = []
    if volume.backend == "nfs":
        provisioner = NFS_PROVISIONER
        parameters: dict[str, Any] = {"server": volume.server, "share": volume.share}
        options = ["nfsvers=4.1"]
    elif volume.backend == "filestore":
        provisioner = FILESTORE_PROVISIONER
        parameters = {"tier": volume.tier or "BASIC_SSD"}
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
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": volume.backend != "efs",
    }
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
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata(persistent_volume_name(volume)),
        "spec": {
            "capacity": {"storage": volume.size},
            "volumeMode": "Filesystem",
            "accessModes": [volume.access_mode],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "mountOptions": ["flock"],
            "csi": {
                "driver": FSX_PROVISIONER,
                "volumeHandle": file_system_id,
                "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name},
            },
        },
    }


def persistent_volume_claim(volume: VolumeSpec) -> dict[str, Any]:
    """The claim jobs mount: by StorageClass, or bound to its PersistentVolume for FSx for Lustre."""
    spec: dict[str, Any] = {"accessModes": [volume.access_mode]}
    if volume.backend == "fsx-lustre":
        spec |= {"storageClassName": "", "volumeName": persistent_volume_name(volume)}
    else:
        spec["storageClassName"] = storage_class_name(volume)
    spec["resources"] = {"requests": {"storage": volume.size}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(volume.name, volume.namespace),
        "spec": spec,
    }
