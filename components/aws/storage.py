"""AwsStorage: EFS and FSx for Lustre file systems and S3 buckets for the stack's volumes, kept when the stack
lets go, and the Mountpoint for Amazon S3 CSI driver that mounts the buckets."""

from __future__ import annotations

import re
from typing import Any

import pulumi
from pulumi_aws import ec2, efs, eks, fsx, iam, s3

from components.addons.storage import EFS_CONTROLLER_SERVICE_ACCOUNT, S3_CSI_ADDON, S3_CSI_SERVICE_ACCOUNT
from components.aws import iam as policies
from components.aws.filesystems import LUSTRE_PORTS, NFS_PORT, lustre_capacity_gib
from components.aws.subnets import Subnets
from components.kubernetes.objects import kube_object, logical_name
from components.manifests.storage import bucket_volume, mount_options, persistent_volume, storage_class
from components.models import VolumeSpec
from components.versions import MOUNTPOINT_S3_CSI_ADDON

TOKEN = "gpu-training:index:AwsStorage"
# Data outlives the stack: a file system is protected (deleting it takes an explicit unprotect) and
# kept in AWS when removed from the program.
KEEP = pulumi.ResourceOptions(protect=True, retain_on_delete=True)


def _metadata(volume: VolumeSpec) -> fsx.LustreFileSystemMetadataConfigurationArgs | None:
    """The file system's metadata configuration, when the volume sets one (else FSx's default)."""
    spec = volume.metadata_configuration
    if spec is None:
        return None
    return fsx.LustreFileSystemMetadataConfigurationArgs(mode=spec.mode, iops=spec.iops)


def bucket_grant(volume: VolumeSpec, bucket: str) -> policies.BucketGrant:
    """What the driver may do in an s3 volume's bucket: what its mount does (writes unless read-only, deletes
    with allow-delete), no more."""
    options = mount_options(volume)
    write = volume.access_mode != "ReadOnlyMany" and "read-only" not in options
    return policies.BucketGrant(bucket, volume.prefix, write=write, delete=write and "allow-delete" in options)


def bucket_prefix(cluster: str, volume: VolumeSpec) -> str:
    """The start of the name of a bucket the stack makes: cluster, namespace and volume, within the 37 characters
    S3 allows a prefix (AWS appends a unique suffix), ending in a hyphen."""
    stem = re.sub(r"[^a-z0-9-]", "-", f"{cluster}-{volume.namespace}-{volume.name}".lower())
    return stem[:36].rstrip("-") + "-"


class AwsStorage(pulumi.ComponentResource):
    """The file systems of efs and fsx-lustre volumes, their network access, and how pods reach them."""

    def __init__(
        self,
        name: str,
        volumes: list[VolumeSpec],
        *,
        vpc_id: pulumi.Input[str],
        subnets: Subnets,
        node_security_group_id: pulumi.Input[str],
        oidc_provider_arn: pulumi.Input[str],
        oidc_issuer: pulumi.Input[str],
        default_zone: str | None,
        kubernetes: pulumi.ProviderResource,
        cluster_name: pulumi.Input[str] = "",
        cluster: str = "",
        region: str = "",
        after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """Create what the volumes need, reachable from the node subnets.

        s3 volumes: their buckets and the Mountpoint CSI driver add-on on `cluster_name` (named `cluster`, in
        `region`), made `after` the nodes it first runs on.
        """
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        keep = pulumi.ResourceOptions.merge(child, KEEP)
        # The Kubernetes objects that lead to data (classes, volumes) are kept like the data itself.
        self._kept_on_cluster = pulumi.ResourceOptions.merge(
            pulumi.ResourceOptions(parent=self, provider=kubernetes), KEEP
        )
        efs_volumes = [v for v in volumes if v.backend == "efs"]
        lustre_volumes = [v for v in volumes if v.backend == "fsx-lustre"]
        self.efs_csi_role_arn: pulumi.Output[str] | None = None
        self.objects: list[pulumi.Resource] = []
        self.buckets: dict[str, pulumi.Output[str]] = {}
        """The bucket of each s3 volume, by namespace/name."""
        self.s3_csi_driver: eks.Addon | None = None
        """The Mountpoint for Amazon S3 CSI driver add-on, when a volume is s3."""
        buckets = [v for v in volumes if v.backend == "s3"]
        if buckets:
            self._buckets(name, buckets, cluster_name=cluster_name, cluster=cluster, region=region, after=after or [])
        if not (efs_volumes or lustre_volumes):
            self.register_outputs({})
            return

        ingress = [
            {
                "protocol": "tcp",
                "from_port": NFS_PORT,
                "to_port": NFS_PORT,
                "security_groups": [node_security_group_id],
                "description": "NFS (EFS) from nodes",
            }
        ]
        ingress += [
            {
                "protocol": "tcp",
                "from_port": low,
                "to_port": high,
                "security_groups": [node_security_group_id],
                "description": "Lustre from nodes",
            }
            for low, high in LUSTRE_PORTS
        ]
        group = ec2.SecurityGroup(
            f"{name}-storage",
            vpc_id=vpc_id,
            description="File system access from cluster nodes",
            ingress=ingress,
            egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}],
            tags={"Name": f"{name}-storage"},
            opts=child,
        )
        # Lustre clients talk to the servers on the same ports: the group admits its own members too.
        for low, high in LUSTRE_PORTS:
            ec2.SecurityGroupRule(
                f"{name}-lustre-{low}",
                type="ingress",
                protocol="tcp",
                from_port=low,
                to_port=high,
                security_group_id=group.id,
                self=True,
                opts=child,
            )

        if efs_volumes:
            role = iam.Role(
                f"{name}-efs-csi",
                assume_role_policy=pulumi.Output.all(oidc_provider_arn, oidc_issuer).apply(
                    lambda a: policies.irsa_trust_policy(a[0], a[1], "kube-system", EFS_CONTROLLER_SERVICE_ACCOUNT)
                ),
                opts=child,
            )
            iam.RolePolicyAttachment(f"{name}-efs-csi", role=role.name, policy_arn=policies.EFS_CSI_POLICY, opts=child)
            self.efs_csi_role_arn = role.arn
        for volume in efs_volumes:
            file_system_id: Any = volume.file_system_id
            if file_system_id is None:
                system = efs.FileSystem(
                    f"{name}-{volume.namespace}-{volume.name}",
                    encrypted=True,
                    performance_mode="generalPurpose",
                    throughput_mode="elastic",
                    tags={"Name": f"{name}-{volume.namespace}-{volume.name}"},
                    opts=keep,
                )
                # One mount target per zone, so every node mounts in its own zone.
                targets = subnets.by_zone or {str(i): s for i, s in enumerate(subnets.listed)}
                for zone, subnet in targets.items():
                    efs.MountTarget(
                        f"{name}-{volume.namespace}-{volume.name}-{zone}",
                        file_system_id=system.id,
                        subnet_id=subnet,
                        security_groups=[group.id],
                        opts=child,
                    )
                file_system_id = system.id
            cls = storage_class(volume, file_system_id)
            assert cls is not None
            self.objects.append(kube_object(logical_name(cls), cls, self._kept_on_cluster))

        for volume in lustre_volumes:
            if volume.file_system_id is not None:
                # A file system made elsewhere: read its DNS and mount names, create nothing. Its own
                # security groups must let the nodes in (TCP 988 and 1018-1023).
                system = fsx.LustreFileSystem.get(
                    f"{name}-{volume.namespace}-{volume.name}", volume.file_system_id, opts=child
                )
                pv = persistent_volume(volume, system.id, system.dns_name, system.mount_name)
                assert pv is not None
                self.objects.append(kube_object(logical_name(pv), pv, self._kept_on_cluster))
                continue
            # A Lustre file system lives in one subnet: the zone of the GPU nodes that read it.
            zone = volume.zone or default_zone
            found = subnets.for_zone(zone)
            subnet = found[0] if isinstance(found, list) else pulumi.Output.from_input(found).apply(lambda f: f[0])
            system = fsx.LustreFileSystem(
                f"{name}-{volume.namespace}-{volume.name}",
                storage_capacity=lustre_capacity_gib(volume.size),
                subnet_ids=subnet,
                security_group_ids=[group.id],
                deployment_type="PERSISTENT_2",
                # Throughput = capacity x tier: 24 TiB at the default 500 MB/s/TiB is 12 GB/s (see
                # LUSTRE_THROUGHPUT_PER_TIB). FSx changes the tier in place; the file system stays.
                per_unit_storage_throughput=volume.lustre_throughput,
                metadata_configuration=_metadata(volume),
                data_compression_type="LZ4",
                tags={"Name": f"{name}-{volume.namespace}-{volume.name}"},
                opts=keep,
            )
            if volume.s3_import_path:
                events = ["NEW", "CHANGED", "DELETED"]
                fsx.DataRepositoryAssociation(
                    f"{name}-{volume.namespace}-{volume.name}",
                    file_system_id=system.id,
                    data_repository_path=volume.s3_import_path,
                    file_system_path="/",
                    batch_import_meta_data_on_create=True,
                    delete_data_in_filesystem=False,
                    s3={"auto_import_policy": {"events": events}, "auto_export_policy": {"events": events}},
                    opts=child,
                )
            pv = persistent_volume(volume, system.id, system.dns_name, system.mount_name)
            assert pv is not None
            self.objects.append(kube_object(logical_name(pv), pv, self._kept_on_cluster))
        self.register_outputs({})

    def _buckets(
        self,
        name: str,
        volumes: list[VolumeSpec],
        *,
        cluster_name: pulumi.Input[str],
        cluster: str,
        region: str,
        after: list[pulumi.Resource],
    ) -> None:
        """Each s3 volume's bucket (made here, or named) and PersistentVolume, and the driver with a role that
        reaches exactly those buckets."""
        child = pulumi.ResourceOptions(parent=self)
        keep = pulumi.ResourceOptions.merge(child, KEEP)
        grants: list[pulumi.Output[policies.BucketGrant]] = []
        for volume in volumes:
            key = f"{volume.namespace}/{volume.name}"
            if volume.bucket is not None:
                self.buckets[key] = pulumi.Output.from_input(volume.bucket)
            else:
                bucket = s3.Bucket(
                    f"{name}-{volume.namespace}-{volume.name}",
                    bucket_prefix=bucket_prefix(cluster, volume),
                    force_destroy=False,
                    tags={
                        "Name": f"{cluster}-{volume.namespace}-{volume.name}",
                        "gpu-training/use": f"{volume.object_use}",
                    },
                    opts=keep,
                )
                # New buckets block public access by default since April 2023; stated, so it stays that way.
                s3.BucketPublicAccessBlock(
                    f"{name}-{volume.namespace}-{volume.name}",
                    bucket=bucket.id,
                    block_public_acls=True,
                    block_public_policy=True,
                    ignore_public_acls=True,
                    restrict_public_buckets=True,
                    opts=child,
                )
                self.buckets[key] = bucket.bucket
                pv = bucket_volume(volume, bucket.bucket)
                assert pv is not None
                self.objects.append(kube_object(logical_name(pv), pv, self._kept_on_cluster))
            grants.append(self.buckets[key].apply(lambda b, v=volume: bucket_grant(v, b)))
        role = iam.Role(f"{name}-s3-csi", assume_role_policy=policies.pod_identity_trust_policy(), opts=child)
        iam.RolePolicy(
            f"{name}-s3-csi",
            role=role.id,
            policy=pulumi.Output.all(*grants).apply(lambda found: policies.mountpoint_policy(list(found), region)),
            opts=child,
        )
        # Driver-level credentials through EKS Pod Identity, the driver's recommended way on EKS (docs/
        # CONFIGURATION.md): the add-on makes the association for its node service account, so the node pods
        # start with the role (an association made after them would reach them only once restarted). Its node
        # DaemonSet and the Mountpoint pods tolerate every taint (chart node.tolerateAllTaints; pkg/podmounter/
        # mppod/creator.go), so they follow the jobs onto tainted GPU nodes.
        self.s3_csi_driver = eks.Addon(
            f"{name}-{S3_CSI_ADDON}",
            cluster_name=cluster_name,
            addon_name=S3_CSI_ADDON,
            addon_version=MOUNTPOINT_S3_CSI_ADDON,
            pod_identity_associations=[{"role_arn": role.arn, "service_account": S3_CSI_SERVICE_ACCOUNT}],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)),
        )
