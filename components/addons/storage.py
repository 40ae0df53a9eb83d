"""The CSI drivers behind the declared volumes."""

from __future__ import annotations

from typing import Any

from components.addons.install import HelmRelease
from components.stack import Stack
from components.versions import EFS_CSI_DRIVER, FSX_CSI_DRIVER, NFS_CSI_DRIVER

EFS_NAME = "aws-efs-csi-driver"
FSX_NAME = "aws-fsx-csi-driver"
NFS_NAME = "csi-driver-nfs"
EFS_CONTROLLER_SERVICE_ACCOUNT = "efs-csi-controller-sa"
S3_CSI_ADDON = "aws-mountpoint-s3-csi-driver"
"""The EKS add-on of the Mountpoint for Amazon S3 CSI driver (made by the cluster, not Helm)."""
S3_CSI_SERVICE_ACCOUNT = "s3-csi-driver-sa"
"""The driver's node service account in kube-system, whose credentials every Mountpoint pod uses (driver-level
identity; the chart's node.serviceAccount.name, docs/CONFIGURATION.md)."""


def _backends(stack: Stack) -> set[str]:
    return {v.backend for v in stack.config.storage.volumes}


def nfs(stack: Stack) -> HelmRelease | None:
    """csi-driver-nfs, for nfs volumes."""
    if "nfs" not in _backends(stack):
        return None
    return HelmRelease(NFS_NAME, NFS_CSI_DRIVER, "kube-system", {"controller": {"runOnControlPlane": False}})


def efs(stack: Stack, role_arn: Any = None) -> HelmRelease | None:
    """The EFS CSI driver, its controller creating access points through an IRSA role."""
    if "efs" not in _backends(stack):
        return None
    account: dict[str, Any] = {"create": True, "name": EFS_CONTROLLER_SERVICE_ACCOUNT}
    if role_arn is not None:
        account["annotations"] = {"eks.amazonaws.com/role-arn": role_arn}
    return HelmRelease(EFS_NAME, EFS_CSI_DRIVER, "kube-system", {"controller": {"serviceAccount": account}})


def fsx(stack: Stack) -> HelmRelease | None:
    """The FSx for Lustre CSI driver: nodes mount the stack's file systems (no AWS API calls needed)."""
    if "fsx-lustre" not in _backends(stack):
        return None
    return HelmRelease(FSX_NAME, FSX_CSI_DRIVER, "kube-system", {"node": {"tolerateAllTaints": True}})
