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


def storage_class(volume: VolumeSpec) -> dict[str, Any] | None:
    """The StorageClass made for a volume (nfs, filestore), or None where there is none to make here.

    Every class keeps its volumes (`reclaimPolicy: Retain`): deleting a claim never deletes data.
    EFS and FSx classes need the file system the cloud stack creates, so they are made there.
    """
    if volume.backend == "nfs":
        provisioner = NFS_PROVISIONER
        parameters = {"server": volume.server, "share": volume.share}
        options = ["nfsvers=4.1"]
    elif volume.backend == "filestore":
        provisioner = FILESTORE_PROVISIONER
        parameters = {"tier": volume.tier or "BASIC_SSD"}
        options = []
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
        "allowVolumeExpansion": True,
    }
    if options:
        obj["mountOptions"] = options
    return obj


def persistent_volume_claim(volume: VolumeSpec) -> dict[str, Any]:
    """The claim jobs mount."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(volume.name, volume.namespace),
        "spec": {
            "accessModes": [volume.access_mode],
            "storageClassName": storage_class_name(volume),
            "resources": {"requests": {"storage": volume.size}},
        },
    }
