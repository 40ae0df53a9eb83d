"""GcpStorage: the Cloud Storage buckets of a GKE stack's gcs volumes and the Managed Lustre instances of its
managed-lustre volumes, kept when the stack lets go; the Workload Identity grants that let the pods of each bucket
volume's namespace use its bucket, and the static PersistentVolumes of both."""

from __future__ import annotations

import re

import pulumi
from pulumi_gcp import lustre, organizations, storage

from components.gcp import filesystems
from components.kubernetes.objects import kube_object, logical_name
from components.manifests.storage import bucket_volume, managed_lustre_volume
from components.models import VolumeSpec

TOKEN = "gpu-training:index:GcpStorage"
# Data outlives the stack: a bucket is protected (deleting it takes an explicit unprotect) and kept in the project
# when removed from the program.
KEEP = pulumi.ResourceOptions(protect=True, retain_on_delete=True)
LUSTRE_TIMEOUTS = pulumi.CustomTimeouts(create="1h", update="1h")
"""How long `pulumi up` waits for an instance to be made or grown: an hour, as cluster-toolkit's managed-lustre
module allows (modules/file-system/managed-lustre/main.tf, timeouts)."""
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
    each volume's namespace granted its bucket through Workload Identity; the Managed Lustre instances of
    managed-lustre volumes (made here, or named) and their PersistentVolumes."""

    buckets: dict[str, pulumi.Output[str]]
    """The bucket of each gcs volume, by namespace/name."""
    objects: list[pulumi.Resource]
    """The PersistentVolumes of the buckets made here (named buckets' come with the platform objects) and of every
    Managed Lustre instance."""

    def __init__(
        self,
        name: str,
        volumes: list[VolumeSpec],
        *,
        project: str,
        region: str,
        cluster: str,
        kubernetes: pulumi.ProviderResource,
        network: str = "default",
        default_zone: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """Make or name each gcs volume's bucket in `project` (made ones in `region`) and grant it; make or name each
        managed-lustre volume's instance (made ones on the cluster's VPC `network`, in the volume's zone or
        `default_zone`, the first GPU pool's)."""
        super().__init__(TOKEN, name, {}, opts)
        self._on_cluster = pulumi.ResourceOptions(parent=self, provider=kubernetes, protect=True, retain_on_delete=True)
        self.buckets = {}
        self.objects = []
        self._buckets(name, [v for v in volumes if v.backend == "gcs"], project=project, region=region, cluster=cluster)
        for volume in volumes:
            if volume.backend == "managed-lustre":
                self._instance(
                    name, volume, project=project, cluster=cluster, network=network, default_zone=default_zone
                )
        self.register_outputs({})

    def _buckets(self, name: str, buckets: list[VolumeSpec], *, project: str, region: str, cluster: str) -> None:
        """Each gcs volume's bucket (made here, or named), its PersistentVolume when made here, and its grant."""
        if not buckets:
            return
        child = pulumi.ResourceOptions(parent=self)
        keep = pulumi.ResourceOptions.merge(child, KEEP)
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
                self.objects.append(kube_object(logical_name(pv), pv, self._on_cluster))
            storage.BucketIAMMember(
                stem,
                bucket=self.buckets[key],
                role=role(volume),
                member=number.apply(lambda n, ns=volume.namespace: workload_principals(project, n, ns)),
                opts=child,
            )

    def _instance(
        self,
        name: str,
        volume: VolumeSpec,
        *,
        project: str,
        cluster: str,
        network: str,
        default_zone: str | None,
    ) -> None:
        """A managed-lustre volume's instance (made here, or named by `fileSystemId` and read) and, once its address
        is known, its PersistentVolume."""
        stem = f"{name}-{volume.namespace}-{volume.name}"
        child = pulumi.ResourceOptions(parent=self)
        if volume.file_system_id is not None:
            # An instance made elsewhere: read its mount point, create nothing. It must be on the cluster's VPC,
            # made without gke_support_enabled (or the nodes would need GKE's legacy Lustre port).
            named_project, named_zone, instance_id = filesystems.named_instance(volume.file_system_id)
            project = named_project or project
            zone = named_zone or volume.zone or default_zone
            assert zone is not None  # validation names a zone
            instance = lustre.Instance.get(
                stem, f"projects/{project}/locations/{zone}/instances/{instance_id}", opts=child
            )
        else:
            zone = volume.zone or default_zone
            assert zone is not None and volume.size is not None  # validation names a zone; size is required
            instance_id = filesystems.instance_id(cluster, volume.namespace, volume.name)
            capacity = filesystems.capacity_gib(volume.size, volume.lustre_throughput)
            assert capacity is not None  # VolumeSpec refuses a size over the tier's largest
            instance = lustre.Instance(
                stem,
                instance_id=instance_id,
                project=project,
                location=zone,
                capacity_gib=str(capacity),
                # Throughput = capacity x tier, fixed when the instance is made: a new tier replaces the instance,
                # which protection stops.
                per_unit_storage_throughput=str(volume.lustre_throughput),
                filesystem=volume.lustre_filesystem,
                # The cluster's VPC in full, the form Managed Lustre takes; it must have private services access
                # (the instance's addresses come from its allocated range), which the stack does not manage.
                network=filesystems.network_name(project, network),
                # Off: GKE nodes from 1.33.2-gke.4655000 mount on Lustre's own port 988. On, the instance moves to
                # port 6988, which nodes reach only with the add-on's deprecated legacy-port setting
                # (LustreCsiDriverConfig.enable_legacy_lustre_port); validation holds the cluster to that version.
                gke_support_enabled=False,
                description=f"{cluster}: volume {volume.namespace}/{volume.name}",
                labels={"gpu-training-cluster": cluster},
                opts=pulumi.ResourceOptions.merge(
                    pulumi.ResourceOptions.merge(child, KEEP), pulumi.ResourceOptions(custom_timeouts=LUSTRE_TIMEOUTS)
                ),
            )
        handle = filesystems.volume_handle(project, zone, instance_id)
        address = instance.mount_point.apply(filesystems.mount_address)
        pv = managed_lustre_volume(volume, handle, address.apply(lambda a: a[0]), address.apply(lambda a: a[1]))
        assert pv is not None
        self.objects.append(kube_object(logical_name(pv), pv, self._on_cluster))
