"""AwsStorage under Pulumi mocks: EFS and FSx for Lustre file systems and S3 buckets that outlive the stack, and the
Mountpoint CSI driver with a role reaching only its buckets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import stacks
from components.addons.storage import S3_CSI_ADDON
from components.aws.filesystems import lustre_capacity_gib
from components.aws.storage import bucket_grant, bucket_prefix
from components.models import VolumeSpec
from components.versions import MOUNTPOINT_S3_CSI_ADDON
from tests.support.pulumi_mocks import RecordingMonitor, run, use_stack

REPO = Path(__file__).resolve().parents[2]
PROD = REPO / "Pulumi.prod.yaml"
VOLUMES = [
    {"name": "checkpoints", "backend": "fsx-lustre", "size": "24Ti", "s3ImportPath": "s3://bucket/checkpoints"},
    {"name": "home", "backend": "efs", "size": "1Ti"},
]


def prod(**changes: Any) -> dict[str, Any]:
    config = yaml.safe_load(PROD.read_text())["config"]
    config["gpu-training:storage"] = {"volumes": VOLUMES}
    # These volumes replace prod's: its jobs keep only their mounts of them (not the dataset's bucket).
    for job in config["gpu-training:jobs"]:
        job["volumes"] = [m for m in job.get("volumes", []) if m["claim"] in {v["name"] for v in VOLUMES}]
    config.update({f"gpu-training:{k}": v for k, v in changes.items()})
    return config


def deploy(monitor: RecordingMonitor, config: dict[str, Any]) -> None:
    use_stack(monitor, PROD, config)
    run(lambda: stacks.run(stacks.load()))


def test_lustre_capacities() -> None:
    assert [lustre_capacity_gib(s) for s in ("100Gi", "1200Gi", "1201Gi", "2Ti", "24Ti")] == [
        1200,
        1200,
        2400,
        2400,
        26400,
    ]


def test_fsx_for_lustre_with_an_s3_link_is_kept_and_bound_statically(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, prod())
    (lustre,) = pulumi_mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert lustre.protect and lustre.retain_on_delete
    assert lustre.inputs["deploymentType"] == "PERSISTENT_2" and lustre.inputs["storageCapacity"] == 26400
    assert lustre.inputs["subnetIds"] == "train-prod-vpc-private-us-east-1a-id", "in the GPU pool's zone"
    # Sized for checkpoints: 24 TiB x 500 MB/s/TiB = 12 GB/s; metadata left to FSx's default.
    assert lustre.inputs["perUnitStorageThroughput"] == 500
    assert "metadataConfiguration" not in lustre.inputs
    assert pv_mount_options(pulumi_mocks) == ["flock"]
    (link,) = pulumi_mocks.of_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
    assert (
        link.inputs["dataRepositoryPath"] == "s3://bucket/checkpoints"
        and link.inputs["deleteDataInFilesystem"] is False
    )
    (pv,) = [r for r in pulumi_mocks.registrations if r.inputs.get("kind") == "PersistentVolume"]
    assert pv.protect and pv.retain_on_delete
    assert pv.inputs["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv.inputs["spec"]["csi"]["volumeHandle"] == "train-prod-storage-training-checkpoints-id"
    (claim,) = [
        r
        for r in pulumi_mocks.registrations
        if r.inputs.get("kind") == "PersistentVolumeClaim" and r.inputs["metadata"]["name"] == "checkpoints"
    ]
    assert claim.inputs["spec"]["volumeName"] == pv.inputs["metadata"]["name"]
    assert claim.protect and claim.retain_on_delete


def test_efs_with_mount_targets_per_zone_an_irsa_driver_and_a_retaining_class(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, prod())
    (system,) = pulumi_mocks.of_type("aws:efs/fileSystem:FileSystem")
    assert system.protect and system.retain_on_delete and system.inputs["encrypted"] is True
    targets = pulumi_mocks.of_type("aws:efs/mountTarget:MountTarget")
    assert len(targets) == 3 and {t.inputs["subnetId"] for t in targets} == {
        f"train-prod-vpc-private-us-east-1{z}-id" for z in "abc"
    }
    (cls,) = [r for r in pulumi_mocks.registrations if r.inputs.get("kind") == "StorageClass"]
    assert cls.inputs["parameters"]["fileSystemId"] == system.urn.rsplit("::", 1)[-1] + "-id"
    assert cls.inputs["reclaimPolicy"] == "Retain" and cls.retain_on_delete
    role = next(r for r in pulumi_mocks.of_type("aws:iam/role:Role") if r.name.endswith("efs-csi"))
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert (
        trust["Condition"]["StringEquals"]["oidc.eks.us-east-1.amazonaws.com/id/ABC:sub"]
        == "system:serviceaccount:kube-system:efs-csi-controller-sa"
    )
    (driver,) = [r for r in pulumi_mocks.of_type("kubernetes:helm.sh/v3:Release") if r.name == "aws-efs-csi-driver"]
    assert driver.inputs["values"]["controller"]["serviceAccount"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/mock"
    }
    group = next(r for r in pulumi_mocks.of_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-storage"))
    assert {(i["fromPort"], i["toPort"]) for i in group.inputs["ingress"]} == {(2049, 2049), (988, 988), (1018, 1023)}


def pv_mount_options(monitor: RecordingMonitor) -> list[str]:
    (pv,) = [r for r in monitor.registrations if r.inputs.get("kind") == "PersistentVolume"]
    return pv.inputs["spec"]["mountOptions"]


def test_fsx_throughput_tier_and_metadata_iops_come_from_the_volume(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    fast = {
        **VOLUMES[0],
        "throughputPerTiB": 1000,
        "metadataConfiguration": {"mode": "USER_PROVISIONED", "iops": 24000},
        "mountOptions": ["flock", "noatime"],
    }
    config = prod()
    config["gpu-training:storage"] = {"volumes": [fast]}
    deploy(pulumi_mocks, config)
    (lustre,) = pulumi_mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert lustre.inputs["perUnitStorageThroughput"] == 1000
    assert lustre.inputs["metadataConfiguration"] == {"mode": "USER_PROVISIONED", "iops": 24000}
    assert pv_mount_options(pulumi_mocks) == ["flock", "noatime"]


def test_fsx_automatic_metadata_is_sent_when_asked(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    config = prod()
    config["gpu-training:storage"] = {"volumes": [{**VOLUMES[0], "metadataConfiguration": {"mode": "AUTOMATIC"}}]}
    deploy(pulumi_mocks, config)
    (lustre,) = pulumi_mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert lustre.inputs["metadataConfiguration"] == {"mode": "AUTOMATIC"}


def test_a_named_lustre_file_system_is_read_not_created(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    named = {"name": "checkpoints", "backend": "fsx-lustre", "size": "24Ti", "fileSystemId": "fs-0123456789abcdef0"}
    deploy(pulumi_mocks, prod(storage={"volumes": [named]}))
    assert not pulumi_mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem"), "no second file system"
    (pv,) = [r for r in pulumi_mocks.registrations if r.inputs.get("kind") == "PersistentVolume"]
    csi = pv.inputs["spec"]["csi"]
    assert csi["volumeHandle"] == "fs-0123456789abcdef0"
    assert csi["volumeAttributes"]["dnsname"] == "fs-mock.fsx.us-east-1.amazonaws.com"
    assert csi["volumeAttributes"]["mountname"] == "mockmnt"
    assert pv.protect and pv.retain_on_delete


def storage(monitor: RecordingMonitor) -> dict[tuple[str, str], Any]:
    kinds = ("aws:efs/", "aws:fsx/")
    found = {
        (r.type, r.name): (r.inputs, r.protect, r.retain_on_delete)
        for r in monitor.registrations
        if r.type.startswith(kinds)
        or r.inputs.get("kind") in ("PersistentVolumeClaim", "PersistentVolume", "StorageClass")
    }
    return found


def test_removing_jobs_and_pools_leaves_storage_as_it_was(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, prod())
    before = storage(pulumi_mocks)
    pulumi_mocks.registrations.clear()
    pools = yaml.safe_load(PROD.read_text())["config"]["gpu-training:nodePools"]
    deploy(
        pulumi_mocks,
        prod(
            jobs=[], nodePools=[*pools, {"name": "g6", "instanceType": "g6.12xlarge", "maxNodes": 2, "fabric": "tcp"}]
        ),
    )
    assert storage(pulumi_mocks) == before
    pulumi_mocks.registrations.clear()
    deploy(pulumi_mocks, prod(jobs=[]))
    assert storage(pulumi_mocks) == before
    assert all(
        protect and retain
        for key, (_, protect, retain) in before.items()
        if key[0].endswith(("LustreFileSystem", "FileSystem")) or "PersistentVolume" in key[0]
    )


# S3 buckets through the Mountpoint CSI driver.

MADE = "train-prod-training-checkpoints-20260801000000000000000001"
"""The name S3 gives the checkpoint bucket in the mocks: the prefix the stack asks for, and a unique suffix."""
BUCKETS = [
    {"name": "checkpoints", "backend": "s3", "prefix": "llama"},
    {"name": "dataset", "backend": "s3", "bucket": "example-dataset", "accessMode": "ReadOnlyMany"},
]


def with_buckets(**changes: Any) -> dict[str, Any]:
    config = yaml.safe_load(PROD.read_text())["config"]
    config["gpu-training:storage"] = {"volumes": BUCKETS}
    config.update({f"gpu-training:{k}": v for k, v in changes.items()})
    return config


def test_a_bucket_the_stack_makes_is_kept_private_and_its_volume_made_once_it_exists(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, with_buckets())
    (bucket,) = pulumi_mocks.of_type("aws:s3/bucket:Bucket")
    assert bucket.protect and bucket.retain_on_delete, "checkpoints outlive the stack"
    assert (
        bucket.inputs["bucketPrefix"] == "train-prod-training-checkpoints-" and bucket.inputs["forceDestroy"] is False
    )
    (block,) = pulumi_mocks.of_type("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert all(block.inputs[k] for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls"))
    volumes = {
        r.inputs["metadata"]["name"]: r
        for r in pulumi_mocks.registrations
        if r.inputs.get("kind") == "PersistentVolume"
    }
    made, named = volumes["s3-training-checkpoints"], volumes["s3-training-dataset"]
    assert "AwsStorage" in made.urn and "PlatformObjects" in named.urn, "a named bucket's volume renders offline"
    for pv in (made, named):
        assert pv.protect and pv.retain_on_delete
    assert made.inputs["spec"]["csi"]["volumeAttributes"] == {"bucketName": MADE}
    assert made.inputs["spec"]["mountOptions"] == ["allow-delete", "allow-overwrite", "prefix=llama/"]
    assert named.inputs["spec"]["csi"]["volumeAttributes"]["bucketName"] == "example-dataset"


def test_the_driver_is_the_pinned_eks_add_on_whose_role_reaches_only_its_buckets(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, with_buckets())
    (addon,) = [a for a in pulumi_mocks.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == S3_CSI_ADDON]
    assert addon.inputs["addonVersion"] == MOUNTPOINT_S3_CSI_ADDON
    (association,) = addon.inputs["podIdentityAssociations"]
    assert association["serviceAccount"] == "s3-csi-driver-sa"
    system = pulumi_mocks.named("train-prod-system")
    assert system.urn in addon.dependencies, "its pods start on the system nodes"
    (role,) = [r for r in pulumi_mocks.of_type("aws:iam/role:Role") if r.name == "train-prod-storage-s3-csi"]
    trust = json.loads(role.inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    (inline,) = [
        p for p in pulumi_mocks.of_type("aws:iam/rolePolicy:RolePolicy") if p.name == "train-prod-storage-s3-csi"
    ]
    statements = json.loads(inline.inputs["policy"])["Statement"]
    assert statements == [
        {
            "Sid": "List0",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": f"arn:aws:s3:::{MADE}",
            "Condition": {"StringLike": {"s3:prefix": ["llama/*"]}},
        },
        {
            "Sid": "Objects0",
            "Effect": "Allow",
            "Action": ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:DeleteObject"],
            "Resource": f"arn:aws:s3:::{MADE}/llama/*",
        },
        {"Sid": "List1", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::example-dataset"},
        {
            "Sid": "Objects1",
            "Effect": "Allow",
            "Action": ["s3:GetObject"],
            "Resource": "arn:aws:s3:::example-dataset/*",
        },
    ], "the dataset is read-only: no writes, no deletes"


def test_a_stack_without_buckets_makes_no_driver(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, prod())
    assert not pulumi_mocks.of_type("aws:s3/bucket:Bucket")
    assert not [a for a in pulumi_mocks.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == S3_CSI_ADDON]


def test_bucket_grants_follow_the_mount() -> None:
    def grant(**fields: Any) -> tuple[bool, bool]:
        found = bucket_grant(VolumeSpec.model_validate({"name": "v", "backend": "s3", **fields}), "b")
        return found.write, found.delete

    assert grant() == (True, True), "checkpoints: write and rotate"
    assert grant(use="data") == (True, False), "a read-write dataset: new files, no deletes"
    assert grant(accessMode="ReadOnlyMany") == (False, False)
    assert grant(mountOptions=["read-only", "allow-delete"]) == (False, False)


def test_a_bucket_prefix_fits_s3s_37_characters() -> None:
    volume = VolumeSpec.model_validate({"name": "a.very.long.volume.name.for.checkpoints", "backend": "s3"})
    prefix = bucket_prefix("a-cluster-with-a-long-name", volume)
    assert len(prefix) <= 37 and prefix.endswith("-") and "." not in prefix
