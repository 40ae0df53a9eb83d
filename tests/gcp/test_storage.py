"""GcpStorage and the GKE cluster under Pulumi mocks: the buckets of gcs volumes, kept when the stack lets go, granted
to the namespaces that mount them through Workload Identity, and GKE's Cloud Storage FUSE add-on turned on."""

from __future__ import annotations

from typing import Any

from components.gcp import GkeCluster
from components.gcp.cluster import addons_config
from components.gcp.storage import bucket_name, role, workload_principals
from components.models import GcpClusterSpec, VolumeSpec
from tests.support.pulumi_mocks import RecordingMonitor, run

VOLUMES = [
    {"name": "dataset", "backend": "gcs", "accessMode": "ReadOnlyMany"},
    {"name": "checkpoints", "namespace": "research", "backend": "gcs"},
    {"name": "shared", "backend": "gcs", "bucket": "team-shared"},
    {"name": "home", "backend": "filestore", "size": "1Ti"},
]
NUMBER = "123456789012"
"""The project number the mocks answer getProject with."""


def volume(**fields: Any) -> VolumeSpec:
    return VolumeSpec.model_validate(fields)


def deploy(volumes: list[dict[str, Any]]) -> None:
    spec = GcpClusterSpec.model_validate(
        {"provider": "gcp", "name": "train", "project": "ml-prod", "region": "us-central1"}
    )
    run(lambda: GkeCluster("train", spec, [], volumes=[VolumeSpec.model_validate(v) for v in volumes]))


def test_buckets_the_stack_makes_are_hierarchical_private_and_kept(pulumi_mocks: RecordingMonitor) -> None:
    deploy(VOLUMES)
    buckets = {b.name: b for b in pulumi_mocks.of_type("gcp:storage/bucket:Bucket")}
    assert set(buckets) == {"train-storage-training-dataset", "train-storage-research-checkpoints"}, (
        "a named bucket is used, not made"
    )
    for bucket in buckets.values():
        assert bucket.protect and bucket.retain_on_delete
        assert bucket.inputs["hierarchicalNamespace"] == {"enabled": True}
        assert bucket.inputs["uniformBucketLevelAccess"] is True and bucket.inputs["forceDestroy"] is False
        assert (bucket.inputs["publicAccessPrevention"], bucket.inputs["location"]) == ("enforced", "US-CENTRAL1")
    checkpoints = buckets["train-storage-research-checkpoints"]
    assert checkpoints.inputs["name"] == f"train-research-checkpoints-{NUMBER}"
    assert checkpoints.inputs["softDeletePolicy"] == {"retentionDurationSeconds": 0}, "rotated checkpoints go"
    assert "softDeletePolicy" not in buckets["train-storage-training-dataset"].inputs


def test_each_volumes_namespace_gets_its_bucket_through_workload_identity(pulumi_mocks: RecordingMonitor) -> None:
    deploy(VOLUMES)
    grants = {g.name: g.inputs for g in pulumi_mocks.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}
    pool = "locations/global/workloadIdentityPools/ml-prod.svc.id.goog"
    assert grants["train-storage-training-dataset"]["role"] == "roles/storage.objectViewer", "ReadOnlyMany"
    assert grants["train-storage-research-checkpoints"] == {
        "bucket": f"train-research-checkpoints-{NUMBER}",
        "role": "roles/storage.objectUser",
        "member": f"principalSet://iam.googleapis.com/projects/{NUMBER}/{pool}/namespace/research",
    }
    assert grants["train-storage-training-shared"]["bucket"] == "team-shared"


def test_the_volumes_of_buckets_made_here_follow_them_and_are_kept(pulumi_mocks: RecordingMonitor) -> None:
    deploy(VOLUMES)
    volumes = {
        r.inputs["metadata"]["name"]: r
        for r in pulumi_mocks.registrations
        if r.inputs.get("kind") == "PersistentVolume"
    }
    assert set(volumes) == {"gcs-training-dataset", "gcs-research-checkpoints"}, "a named bucket's renders offline"
    made = volumes["gcs-research-checkpoints"]
    assert made.protect and made.retain_on_delete
    assert made.inputs["spec"]["csi"]["volumeHandle"] == f"train-research-checkpoints-{NUMBER}"
    (provider,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert made.provider.startswith(provider.urn)


def test_the_cloud_storage_fuse_add_on_is_on_only_with_gcs_volumes(pulumi_mocks: RecordingMonitor) -> None:
    deploy(VOLUMES)
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert addons_config([volume(name="home", backend="filestore", size="1Ti")]) == {
        "gcp_filestore_csi_driver_config": {"enabled": True}
    }


def test_a_stack_without_gcs_volumes_makes_no_storage_component(pulumi_mocks: RecordingMonitor) -> None:
    deploy(VOLUMES[3:])
    assert not pulumi_mocks.of_type("gpu-training:index:GcpStorage")
    assert not pulumi_mocks.of_type("gcp:storage/bucket:Bucket")


def test_bucket_names_are_unique_valid_and_at_most_63_characters() -> None:
    long = volume(
        name="a.very-long.volume-name-for-the-checkpoints-of-a-run", namespace="research-team-a", backend="gcs"
    )
    name = bucket_name("Train-Cluster", long, NUMBER)
    assert len(name) <= 63 and name.endswith(f"-{NUMBER}") and name == name.lower() and "." not in name
    assert role(volume(name="d", backend="gcs", accessMode="ReadOnlyMany")) == "roles/storage.objectViewer"
    assert workload_principals("p", "1", "ns").endswith("/workloadIdentityPools/p.svc.id.goog/namespace/ns")


# Managed Lustre: an instance per managed-lustre volume (made here, or named), kept, on the cluster's VPC, and its
# PersistentVolume once the instance has an address.

LUSTRE = "gcp:lustre/instance:Instance"


def deploy_zonal(volumes: list[dict[str, Any]], **cluster: Any) -> None:
    spec = GcpClusterSpec.model_validate(
        {"provider": "gcp", "name": "train", "project": "ml-prod", "region": "us-central1", "zone": "us-central1-a"}
        | cluster
    )
    run(lambda: GkeCluster("train", spec, [], volumes=[VolumeSpec.model_validate(v) for v in volumes]))


def lustre_volumes(monitor: RecordingMonitor) -> dict[str, Any]:
    return {
        r.inputs["metadata"]["name"]: r
        for r in monitor.registrations
        if r.inputs.get("kind") == "PersistentVolume"
        and r.inputs["spec"]["csi"]["driver"] == "lustre.csi.storage.gke.io"
    }


def test_a_managed_lustre_instance_is_made_on_the_clusters_vpc_in_the_pools_zone_and_kept(
    pulumi_mocks: RecordingMonitor,
) -> None:
    deploy_zonal([{"name": "checkpoints", "backend": "managed-lustre", "size": "18Ti"}], network="train-vpc")
    (instance,) = pulumi_mocks.of_type(LUSTRE)
    assert instance.protect and instance.retain_on_delete, "data outlives the stack"
    assert instance.create_timeout == "1h"
    assert {k: v for k, v in instance.inputs.items() if k not in ("description", "labels")} == {
        "instanceId": "train-training-checkpoints",
        "project": "ml-prod",
        "location": "us-central1-a",
        "capacityGib": "27000",
        "perUnitStorageThroughput": "1000",
        "filesystem": "checkpoi",
        "network": "projects/ml-prod/global/networks/train-vpc",
        "gkeSupportEnabled": False,
    }
    assert instance.inputs["labels"] == {"gpu-training-cluster": "train"}


def test_its_volume_is_made_once_the_instance_has_an_address_and_is_kept(pulumi_mocks: RecordingMonitor) -> None:
    deploy_zonal([{"name": "checkpoints", "backend": "managed-lustre", "size": "18000Gi", "zone": "us-central1-c"}])
    (pv,) = lustre_volumes(pulumi_mocks).values()
    assert pv.protect and pv.retain_on_delete
    assert pv.inputs["spec"]["csi"] == {
        "driver": "lustre.csi.storage.gke.io",
        "volumeHandle": "ml-prod/us-central1-c/train-training-checkpoints",
        "volumeAttributes": {"ip": "10.90.1.4", "filesystem": "checkpoi"},
    }
    (provider,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert pv.provider.startswith(provider.urn)
    (instance,) = pulumi_mocks.of_type(LUSTRE)
    assert instance.inputs["location"] == "us-central1-c", "the volume's zone over the pools'"


def test_a_named_instance_is_read_not_made(pulumi_mocks: RecordingMonitor) -> None:
    deploy_zonal(
        [
            {"name": "dataset", "backend": "managed-lustre", "size": "9000Gi", "fileSystemId": "shared-lustre"},
            {
                "name": "archive",
                "backend": "managed-lustre",
                "size": "9000Gi",
                "fileSystemId": "projects/data-project/locations/us-central1-b/instances/archive",
            },
        ]
    )
    assert not pulumi_mocks.of_type(LUSTRE), "nothing made"
    handles = {name: r.inputs["spec"]["csi"]["volumeHandle"] for name, r in lustre_volumes(pulumi_mocks).items()}
    assert handles == {
        "lustre-training-dataset": "ml-prod/us-central1-a/shared-lustre",
        "lustre-training-archive": "data-project/us-central1-b/archive",
    }
    read = {name: inputs for (type_, name), inputs in pulumi_mocks.recording.inputs.items() if type_ == LUSTRE}
    assert set(read) == {"train-storage-training-dataset", "train-storage-training-archive"}


def test_the_managed_lustre_add_on_is_on_only_with_managed_lustre_volumes(pulumi_mocks: RecordingMonitor) -> None:
    deploy_zonal([{"name": "checkpoints", "backend": "managed-lustre", "size": "18000Gi"}])
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["addonsConfig"]["lustreCsiDriverConfig"] == {"enabled": True}
    assert "gcsFuseCsiDriverConfig" not in cluster.inputs["addonsConfig"]
    assert "lustre_csi_driver_config" not in addons_config([volume(**v) for v in VOLUMES])
