"""components/validation.py: every pod a stack emits for a pool is held against what the pool's nodes advertise,
at render and at `pulumi preview`, with errors naming the config path and the pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pytest

import stacks
from components.errors import ConfigError
from components.kubernetes.objects import StackConfigError
from components.kubernetes.trainingjob import TrainingJob
from components.manifests import pod
from components.resolution import resolve_file
from tests.support.factories import job, pool
from tests.support.pulumi_mocks import RecordingMonitor, run, use_stack
from tests.support.stacks import STACK_FILES

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def huge_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every GPU worker asks 5Gi of huge pages again, as EFA workers once did: through the pod builder, past the
    fabric profile that the job-level check reads."""
    built = pod.worker_resources

    def with_huge_pages(plan: Any) -> dict[str, str]:
        return {**built(plan), "hugepages-2Mi": "5120Mi"}

    monkeypatch.setattr(pod, "worker_resources", with_huge_pages)


def _issues(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    return [(i.path, i.message) for i in caught.value.issues]


def test_prods_karpenter_jobs_asking_huge_pages_are_refused_naming_job_and_pool(huge_pages: None) -> None:
    issues = _issues(REPO / "Pulumi.prod.yaml")
    assert {path for path, _ in issues} == {"jobs[0].nodePool", "jobs[1].nodePool", "nodePools[0]"}, "runtimes too"
    assert (
        "jobs[0].nodePool",
        "TrainJob llama-pretrain (node pods) requests hugepages-2Mi: 5Gi, which no node of pool 'p5' advertises "
        "(karpenter nodes): never scheduled, and nothing would add a node for them",
    ) in issues


def test_the_minimal_aws_example_is_refused_the_same_way(huge_pages: None) -> None:
    assert {path for path, _ in _issues(REPO / "examples/minimal/Pulumi.aws.yaml")} == {
        "jobs[0].nodePool",
        "nodePools[0]",
    }


def test_the_gate_the_runtimes_and_trainjobs_are_checked_too(huge_pages: None) -> None:
    issues = _issues(REPO / "Pulumi.dev.yaml")
    paths = {path for path, _ in issues}
    assert {"nodePools[0].fabricCheck", "nodePools[0]", "jobs[2].nodePool", "jobs[3].nodePool"} <= paths
    messages = " ".join(message for _, message in issues)
    assert "Job fabric-check-h100 (pod pods)" in messages
    assert "ClusterTrainingRuntime h100-torch (node pods)" in messages
    assert "TrainJob llama-pretrain (node pods)" in messages
    assert "(existing nodes): never scheduled" in messages, "no autoscaler on an existing cluster"


def test_every_stack_and_example_passes_as_it_is() -> None:
    for path in STACK_FILES:
        resolve_file(path)


def test_pulumi_preview_refuses_it_before_anything_is_created(
    huge_pages: None, pulumi_mocks: RecordingMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.prod.yaml")
    with pytest.raises(StackConfigError) as caught:
        stacks.load()
    assert isinstance(caught.value, pulumi.RunError), "Pulumi prints a RunError without a traceback"
    assert "jobs[0].nodePool: TrainJob llama-pretrain (node pods) requests hugepages-2Mi" in str(caught.value)


def test_a_training_job_of_its_own_program_is_checked_against_the_pool_it_is_given(
    huge_pages: None, pulumi_mocks: RecordingMonitor
) -> None:
    with pytest.raises(StackConfigError) as caught:
        run(lambda: TrainingJob("train", job(), pool=pool("efa"), scheduler="volcano"))
    assert "pool: PyTorchJob train (Worker pods) requests hugepages-2Mi: 5Gi" in str(caught.value)


# Storage: a bucket volume on its own cloud, and a checkpoint claim checkpoints can be written to.

AWS = {"provider": "aws", "name": "train", "region": "us-east-1"}
P5 = [{"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a"}]


def _stack_issues(config: dict[str, Any]) -> list[tuple[str, str]]:
    from components.resolution import resolve_raw

    with pytest.raises(ConfigError) as caught:
        resolve_raw(config)
    return [(i.path, i.message) for i in caught.value.issues]


def _training(declared: list[dict[str, Any]], checkpoint: dict[str, Any], **job_fields: Any) -> dict[str, Any]:
    """A one-node job on a p5 pool (no fabric check: it needs two nodes) with a checkpoint and these volumes."""
    train = {"name": "llama", "image": "train:v1", "command": ["train.py"], "checkpoint": checkpoint, **job_fields}
    pools = [{**P5[0], "fabricCheck": {"enabled": False}}]
    return {"cluster": AWS, "nodePools": pools, "storage": {"volumes": declared}, "jobs": [train]}


@pytest.mark.parametrize(
    ("provider", "backend", "cloud"),
    [("gcp", "s3", "an EKS cluster (cluster.provider: aws), not gcp"), ("aws", "gcs", "a GKE cluster")],
)
def test_a_bucket_volume_needs_its_clouds_cluster(provider: str, backend: str, cloud: str) -> None:
    cluster = (
        AWS if provider == "aws" else {"provider": "gcp", "name": "t", "project": "my-project", "region": "us-central1"}
    )
    ((path, message),) = _stack_issues(
        {"cluster": cluster, "storage": {"volumes": [{"name": "v", "backend": backend}]}}
    )
    assert path == "storage.volumes[0].backend"
    assert message.startswith(f"the {backend} backend needs {cloud}")
    assert "declare the volume as backend: storageClass, className: <name>" in message


def test_managed_lustre_is_refused_off_gke_naming_the_key() -> None:
    volumes = [{"name": "c", "backend": "managed-lustre", "size": "18000Gi"}]
    ((path, message),) = _stack_issues({"cluster": AWS, "storage": {"volumes": volumes}})
    assert path == "storage.volumes[0].backend"
    assert message.startswith(
        "the managed-lustre backend needs a GKE cluster (cluster.provider: gcp), not aws: the stack makes the Managed "
        "Lustre instance on the cluster's VPC and GKE's Managed Lustre CSI add-on there"
    )


GKE = {"provider": "gcp", "name": "train", "project": "ml-prod", "region": "us-central1"}
A3 = {"name": "a3", "machineType": "a3-highgpu-8g", "maxNodes": 2}


def _lustre_issues(volumes: list[dict[str, Any]], pools: list[dict[str, Any]], **cluster: Any) -> list[Any]:
    return _stack_issues({"cluster": GKE | cluster, "nodePools": pools, "storage": {"volumes": volumes}})


def test_a_managed_lustre_instance_needs_a_zone_in_the_clusters_region() -> None:
    made = {"name": "ckpt", "backend": "managed-lustre", "size": "18000Gi"}
    assert _lustre_issues([made], [A3]) == [
        (
            "storage.volumes[0].zone",
            "a Managed Lustre instance lives in one zone, and no GPU pool names one (the cluster is regional): set "
            "`zone` to the zone of the GPU nodes that mount it",
        )
    ]
    assert _lustre_issues([{**made, "zone": "us-east1-b"}], [A3]) == [
        ("storage.volumes[0].zone", "zone 'us-east1-b' is not in the cluster's region 'us-central1'")
    ]
    named = {**made, "fileSystemId": "projects/ml-prod/locations/europe-west4-a/instances/shared"}
    assert _lustre_issues([named], [A3]) == [
        ("storage.volumes[0].fileSystemId", "zone 'europe-west4-a' is not in the cluster's region 'us-central1'")
    ]


def test_managed_lustre_needs_gke_nodes_that_mount_it_on_its_own_port() -> None:
    volumes = [{"name": "ckpt", "backend": "managed-lustre", "size": "18000Gi", "zone": "us-central1-a"}]
    assert _lustre_issues(volumes, [], kubernetesVersion="1.33.2-gke.1200000") == [
        (
            "cluster.kubernetesVersion",
            "managed-lustre volumes (storage.volumes[0]) need GKE nodes of 1.33.2-gke.4655000 or later, which mount "
            "Managed Lustre on its own port: use 1.33 or later",
        )
    ]


def test_two_managed_lustre_file_systems_mounted_on_one_node_need_two_names() -> None:
    volumes = [
        {"name": "checkpoints-a", "backend": "managed-lustre", "size": "18000Gi"},
        {"name": "checkpoints-b", "backend": "managed-lustre", "size": "18000Gi"},
    ]
    assert _lustre_issues(volumes, [{**A3, "zone": "us-central1-a"}]) == [
        (
            "storage.volumes[1].filesystem",
            "file system name 'checkpoi' is storage.volumes[0]'s too: a node cannot mount two Managed Lustre file "
            "systems of one name (the CSI driver refuses the second); set `filesystem` to another name of 1-8 letters "
            "and digits",
        )
    ]


def test_an_existing_cluster_gets_no_silent_volume_of_a_clouds_file_system() -> None:
    existing = {"provider": "existing", "name": "lab"}
    volumes = [{"name": "c", "backend": "fsx-lustre", "size": "1Ti"}, {"name": "b", "backend": "s3"}]
    assert [p for p, _ in _stack_issues({"cluster": existing, "storage": {"volumes": volumes}})] == [
        "storage.volumes[0].backend",
        "storage.volumes[1].backend",
    ]


def test_a_checkpoint_claim_must_be_declared_and_writable() -> None:
    assert _stack_issues(_training([], {"claim": "ckpt"})) == [
        ("jobs[0].checkpoint.claim", "claim 'ckpt' is not declared in storage.volumes of namespace 'training'")
    ]
    read_only = [{"name": "ckpt", "backend": "efs", "size": "1Ti", "accessMode": "ReadOnlyMany"}]
    assert _stack_issues(_training(read_only, {"claim": "ckpt"})) == [
        ("jobs[0].checkpoint.claim", "claim 'ckpt' is ReadOnlyMany (storage.volumes[0]); checkpoints are written")
    ]


def test_checkpoints_on_a_data_bucket_are_refused_naming_the_volumes_use() -> None:
    data = [{"name": "ckpt", "backend": "s3", "use": "data"}]
    assert _stack_issues(_training(data, {"claim": "ckpt"})) == [
        (
            "jobs[0].checkpoint.claim",
            "claim 'ckpt' is a data volume (storage.volumes[0] use: data): its mount keeps metadata for its life and "
            "cannot delete or overwrite files, as checkpoint rotation needs; set use: checkpoints there, or name "
            "another claim",
        )
    ]
    own_options = [{"name": "ckpt", "backend": "s3", "use": "data", "mountOptions": ["allow-delete"]}]
    from components.resolution import resolve_raw

    assert resolve_raw(_training(own_options, {"claim": "ckpt"})).jobs, "own options are the checkpoint-path rule's"


def test_a_checkpoint_claim_mounted_twice_is_reported_once() -> None:
    listed = _training([], {"claim": "ckpt"}, volumes=[{"claim": "ckpt", "mountPath": "/ck"}])
    assert _stack_issues(listed) == [
        ("jobs[0].volumes[0].claim", "claim 'ckpt' is not declared in storage.volumes of namespace 'training'")
    ]
