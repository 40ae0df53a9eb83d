"""GcpStorage: the Cloud Storage buckets of a GKE stack's gcs volumes, kept when the stack lets go, and the Workload
Identity grants that let the pods of each volume's namespace use its bucket."""

from __future__ import annotations

import re

import pulumi
from pulumi_gcp import organizations, storage

from components.kubernetes.objects import kube_object, logical_name
from components.manifests.storage import bucket_volume
from components.models import VolumeSpec

TOKEN = "gpu-training:index:GcpStorage"
# Data outlives the stack: a bucket is protected (deleting it takes an explicit unprotect) and kept in the project
# when removed from the program.
KEEP = pulumi.ResourceOptions(protect=True, retain_on_delete=True)
READER = "roles/storage.objectViewer"
WRITER = "roles/storage.objectUser"
"""The roles the Cloud Storage FUSE CSI driver needs of a pod's identity: objectViewer to read, objectUser to
write (gcs-fuse-csi-driver docs/authentication.md). objectUser covers a hierarchical-namespace bucket's folders."""
_MAX_NAME = 63


def bucket_name(cluster: str, volume: VolumeSpec, project_number: str) -> str:
    """The name of a bucket the stack makes: cluster, namespace and volume, then the project's number, which makes
    it unique among every project's buckets; at most 63 lower-case letters, digits and hyphens."""
    stem = re.sub(r"[^a-z0-9-]+", "-", f"{cluster}-{volume.namespace}-{volume.name}".lower())
    stem = stem[: _MAX_NAME - len(project_number) - 1].strip("-")
    return f"{stem}-{project_number}"


def workload_principals(project: str, project_number: str, namespace: str) -> str:
    """Every Kubernetes service account of a namespace, as Workload Identity Federation for GKE names them: who
    can mount the volume's claim is who may use its bucket."""
    pool = f"{project}.svc.id.goog"
    return (
        f"principalSet://iam.googleapis.com/projects/{project_number}/locations/global/workloadIdentityPools/"
        f"{pool}/namespace/{namespace}"
    )


def role(volume: VolumeSpec) -> str:
    """The role a volume's namespace gets on its bucket: read-only for a ReadOnlyMany volume (which the driver
    mounts read-only), else read-write."""
    return READER if volume.access_mode == "ReadOnlyMany" else WRITER


class GcpStorage(pulumi.ComponentResource):
    """The buckets of gcs volumes (made here with a hierarchical namespace, or named), their PersistentVolumes, and
    each volume's namespace granted its bucket through Workload Identity."""

    buckets: dict[str, pulumi.Output[str]]
    """The bucket of each gcs volume, by namespace/name."""
    objects: list[pulumi.Resource]
    """The PersistentVolumes of the buckets made here (named buckets' come with the platform objects)."""

    def __init__(
        self,
        name: str,
        volumes: list[VolumeSpec],
        *,
        project: str,
        region: str,
        cluster: str,
        kubernetes: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """Make or name each gcs volume's bucket in `project` (made ones in `region`) and grant it."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        keep = pulumi.ResourceOptions.merge(child, KEEP)
        on_cluster = pulumi.ResourceOptions(parent=self, provider=kubernetes, protect=True, retain_on_delete=True)
        self.buckets = {}
        self.objects = []
        buckets = [v for v in volumes if v.backend == "gcs"]
        if not buckets:
            self.register_outputs({})
            return
        number = organizations.get_project_output(
            project_id=project, opts=pulumi.InvokeOutputOptions(parent=self)
        ).number
        for volume in buckets:
            key = f"{volume.namespace}/{volume.name}"
            stem = f"{name}-{volume.namespace}-{volume.name}"
            if volume.bucket is not None:
                self.buckets[key] = pulumi.Output.from_input(volume.bucket)
            else:
                bucket = storage.Bucket(
                    stem,
                    name=number.apply(lambda n, v=volume: bucket_name(cluster, v, n)),
                    project=project,
                    location=region.upper(),
                    # A hierarchical namespace: real folders, renamed in one atomic call (a checkpoint written to a
                    # temporary folder and renamed into place), and higher initial request rates for AI/ML loads;
                    # it needs uniform bucket-level access (cluster-toolkit's gke-a4x buckets:
                    # enable_hierarchical_namespace).
                    hierarchical_namespace={"enabled": True},
                    uniform_bucket_level_access=True,
                    public_access_prevention="enforced",
                    # Rotated checkpoints would otherwise stay billed for the 7-day default of soft delete; a data
                    # bucket keeps it.
                    soft_delete_policy={"retention_duration_seconds": 0}
                    if volume.object_use == "checkpoints"
                    else None,
                    force_destroy=False,
                    labels={"gpu-training-use": f"{volume.object_use}", "gpu-training-cluster": cluster},
                    opts=keep,
                )
                self.buckets[key] = bucket.name
                pv = bucket_volume(volume, bucket.name)
                assert pv is not None
                self.objects.append(kube_object(logical_name(pv), pv, on_cluster))
            storage.BucketIAMMember(
                stem,
                bucket=self.buckets[key],
                role=role(volume),
                member=number.apply(lambda n, ns=volume.namespace: workload_principals(project, n, ns)),
                opts=child,
            )
        self.register_outputs({})
