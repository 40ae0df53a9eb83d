"""The examples: minimal stacks that run with nothing else set, and TrainingJobs placed on a platform
stack's pools through a StackReference."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

import stacks
from components.kubernetes.objects import StackConfigError
from components.render import render
from components.resolution import resolve_file
from tests.support.pulumi_mocks import RecordingMonitor, exported, run, use_stack
from tests.support.schemas import assert_valid
from tests.support.workers import worker_spec, workload

REPO = Path(__file__).resolve().parents[1]


def deploy_workloads(monitor: RecordingMonitor) -> None:
    """Run examples/workloads as `pulumi up` would, on the prod stack's pools through its StackReference."""
    platform = resolve_file(REPO / "Pulumi.prod.yaml")
    monitor.recording.stack_outputs["acme/gpu-training/prod"] = {
        "pools": {name: pool.to_config() for name, pool in platform.pools.items()},
        "scheduler": {"type": "volcano", "defaultQueue": "pretraining"},
        "kubeconfig": "apiVersion: v1\nkind: Config\n",
    }
    pulumi.runtime.set_mocks(
        monitor.recording, project="gpu-training-workloads", stack="dev", preview=False, monitor=monitor
    )
    pulumi.runtime.set_all_config({"gpu-training-workloads:platformStack": "acme/gpu-training/prod"})
    run(lambda: runpy.run_path(str(REPO / "examples" / "workloads" / "__main__.py")))


def test_workloads_take_their_pool_from_the_platform_stack(pulumi_mocks: RecordingMonitor) -> None:
    deploy_workloads(pulumi_mocks)

    (job,) = pulumi_mocks.of_type("kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob")
    spec = job.inputs["spec"]
    # On the platform's p5 runtime (its placement, fabric and gang policy), with the pool's EFA cards and GPUs.
    assert spec["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "ClusterTrainingRuntime",
        "name": "p5-torch",
    }
    limits = spec["trainer"]["resourcesPerNode"]["limits"]
    assert limits["vpc.amazonaws.com/efa"] == "32" and limits["nvidia.com/gpu"] == "8"
    (patch,) = spec["runtimePatches"]
    assert patch["trainingRuntimeSpec"]["template"]["metadata"]["annotations"] == {
        "scheduling.volcano.sh/queue-name": "pretraining"
    }
    (provider,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert job.provider.startswith(provider.urn)


MINIMAL = REPO / "examples" / "minimal"


def deploy_minimal(monitor: RecordingMonitor, name: str, monkeypatch) -> dict[str, Any]:
    """Run the program on a minimal stack file as `pulumi up` would, from the folder that holds it."""
    monkeypatch.chdir(MINIMAL)
    use_stack(monitor, MINIMAL / f"Pulumi.{name}.yaml")
    return run(lambda: stacks.run(stacks.load()))


def _objects(monitor: RecordingMonitor) -> list[dict[str, Any]]:
    """The Kubernetes objects the program registered, as their inputs."""
    return [r.inputs for r in monitor.registrations if isinstance(r.inputs.get("kind"), str)]


@pytest.mark.parametrize("name", ["aws", "gke", "existing", "existing-ib", "gke-dws", "aws-queued", "gke-lustre"])
def test_a_minimal_stack_renders_objects_that_validate(name: str) -> None:
    rendered = render(resolve_file(MINIMAL / f"Pulumi.{name}.yaml"))
    job = workload(rendered.objects)
    assert job["kind"] == "TrainJob", "a job that names no launcher is a TrainJob where Trainer runs"
    assert job["spec"]["trainer"]["numNodes"] == 2
    assert_valid(*rendered.objects)


def test_the_minimal_aws_stack_gets_a_vpc_in_the_regions_eks_zones_and_a_pool_sized_to_its_job(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    deploy_minimal(pulumi_mocks, "aws", monkeypatch)
    (vpc,) = pulumi_mocks.of_type("aws:ec2/vpc:Vpc")
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    zones = sorted(s.inputs["availabilityZone"] for s in pulumi_mocks.of_type("aws:ec2/subnet:Subnet"))
    # Every zone the account's us-east-1 offers, less us-east-1e: it is use1-az3, where EKS runs no cluster.
    assert zones == sorted(2 * ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"])
    (invoke,) = [c for c in pulumi_mocks.recording.calls if c.token.endswith("getAvailabilityZones")]
    assert invoke.args["state"] == "available"
    (pool,) = pulumi_mocks.of_type("kubernetes:karpenter.sh/v1:NodePool")
    assert pool.inputs["spec"]["limits"] == {"nvidia.com/gpu": "16"}, "the pool is sized to its job: 2 nodes"
    requirements = {r["key"]: r["values"] for r in pool.inputs["spec"]["template"]["spec"]["requirements"]}
    assert requirements["topology.kubernetes.io/zone"] == ["us-east-1a"]
    container = worker_spec(_objects(pulumi_mocks))["containers"][0]
    assert container["resources"]["requests"]["memory"] == "1843Gi" and container["resources"]["limits"]["cpu"] == "182"


def test_the_minimal_gke_stack_runs_under_mocks(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    deploy_minimal(pulumi_mocks, "gke", monkeypatch)
    pools = {p.inputs["name"]: p for p in pulumi_mocks.of_type("gcp:container/nodePool:NodePool")}
    gpu = next(p for name, p in pools.items() if name.endswith("a3"))
    assert gpu.inputs["autoscaling"]["maxNodeCount"] == 2
    assert gpu.inputs["nodeLocations"] == ["us-central1-a"]
    (job,) = pulumi_mocks.of_type("kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob")
    assert job.inputs["spec"]["trainer"]["numNodes"] == 2


def test_the_gke_lustre_stack_makes_its_instance_in_the_pools_zone_and_binds_the_claim_to_it(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    deploy_minimal(pulumi_mocks, "gke-lustre", monkeypatch)
    (instance,) = pulumi_mocks.of_type("gcp:lustre/instance:Instance")
    assert (instance.inputs["location"], instance.inputs["capacityGib"]) == ("us-central1-a", "18000")
    assert instance.inputs["network"] == "projects/my-project/global/networks/default"
    assert instance.protect and instance.retain_on_delete
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["addonsConfig"]["lustreCsiDriverConfig"] == {"enabled": True}
    (claim,) = pulumi_mocks.of_type("kubernetes:core/v1:PersistentVolumeClaim")
    (pv,) = [r for r in pulumi_mocks.registrations if r.inputs.get("kind") == "PersistentVolume"]
    assert claim.inputs["spec"]["volumeName"] == pv.inputs["metadata"]["name"] == "lustre-training-checkpoints"
    assert pv.inputs["spec"]["csi"]["volumeAttributes"] == {"ip": "10.90.1.4", "filesystem": "checkpoi"}
    assert_valid(pv.inputs, claim.inputs)
    worker = worker_spec(_objects(pulumi_mocks))
    assert {"name": "claim-checkpoints", "persistentVolumeClaim": {"claimName": "checkpoints"}} in worker["volumes"]


def test_the_gke_dws_stack_runs_under_mocks_with_a_queued_pool_and_its_admission_check(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    deploy_minimal(pulumi_mocks, "gke-dws", monkeypatch)
    pools = {p.inputs["name"]: p for p in pulumi_mocks.of_type("gcp:container/nodePool:NodePool")}
    gpu = pools["a3"].inputs
    assert gpu["queuedProvisioning"] == {"enabled": True} and gpu["nodeConfig"]["flexStart"] is True
    (check,) = pulumi_mocks.of_type("kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck")
    (config,) = pulumi_mocks.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig")
    assert config.inputs["spec"]["provisioningClassName"] == "queued-provisioning.gke.io"
    assert check.inputs["spec"]["parameters"]["name"] == config.inputs["metadata"]["name"]
    (queue,) = pulumi_mocks.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    assert queue.inputs["spec"]["admissionChecksStrategy"]["admissionChecks"] == [
        {"name": "a3-provisioning", "onFlavors": ["a3"]}
    ]
    tolerations = worker_spec(_objects(pulumi_mocks))["tolerations"]
    assert {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in (
        tolerations
    )


def test_the_aws_queued_stack_runs_under_mocks_with_a_node_group_the_autoscaler_provisions(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    deploy_minimal(pulumi_mocks, "aws-queued", monkeypatch)
    assert not pulumi_mocks.of_type("kubernetes:karpenter.sh/v1:NodePool"), "Karpenter serves no request"
    (group,) = [g for g in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup") if "p5" in g.inputs["nodeGroupName"]]
    assert group.inputs["scalingConfig"]["minSize"] == 0 and group.inputs["scalingConfig"]["maxSize"] == 4
    releases = {r.inputs["name"]: r for r in pulumi_mocks.of_type("kubernetes:helm.sh/v3:Release")}
    args = releases["cluster-autoscaler"].inputs["values"]["extraArgs"]
    assert args["enable-provisioning-requests"] == "true"
    (config,) = pulumi_mocks.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig")
    assert config.inputs["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io"


def test_the_minimal_existing_stack_runs_under_mocks(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    exports = deploy_minimal(pulumi_mocks, "existing", monkeypatch)
    assert exported(exports)["pools"]["h100"]["maxNodes"] == 2
    assert pulumi_mocks.of_type("kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob")


def test_a_pool_zone_where_eks_cannot_run_is_refused_at_deploy_time(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    config = yaml.safe_load((MINIMAL / "Pulumi.aws.yaml").read_text())["config"]
    config["gpu-training:nodePools"][0]["zone"] = "us-east-1e"
    monkeypatch.chdir(MINIMAL)
    use_stack(pulumi_mocks, MINIMAL / "Pulumi.aws.yaml", config)
    with pytest.raises(StackConfigError, match="pool zone us-east-1e is not a zone of us-east-1 where EKS can run"):
        run(lambda: stacks.run(stacks.load()))


def test_the_blackwell_aws_stack_renders_objects_that_validate_and_shows_each_pools_full_bandwidth() -> None:
    rendered = render(resolve_file(MINIMAL / "Pulumi.aws-blackwell.yaml"))
    assert_valid(*rendered.objects)
    summary = rendered.summary()
    assert "pool b300 (p6-b300.48xlarge, 8x NVIDIA B300 GPU, efa, 16 EFA, 6400 of 6400 Gbps" in summary
    assert "pool gb200 (p6e-gb200.36xlarge, 4x NVIDIA GB200 GPU, efa, 4 EFA, 1600 of 1600 Gbps" in summary


def test_the_blackwell_aws_stack_runs_under_mocks_with_b300s_card_0_free_of_efa_and_arm64_gb200s(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    deploy_minimal(pulumi_mocks, "aws-blackwell", monkeypatch)
    templates = {t.name: t.inputs for t in pulumi_mocks.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    b300 = next(t for name, t in templates.items() if name.endswith("b300"))
    interfaces = b300["networkInterfaces"]
    assert [(i["networkCardIndex"], i["interfaceType"]) for i in interfaces if i["networkCardIndex"] == 0] == [
        (0, "interface")
    ], "card 0 carries ENA only"
    efa = [i for i in interfaces if i["interfaceType"] == "efa-only"]
    assert sorted(i["networkCardIndex"] for i in efa) == list(range(1, 17))
    assert b300["instanceMarketOptions"] == {"marketType": "capacity-block"}
    groups = {g.inputs["nodeGroupName"]: g.inputs for g in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup")}
    gb200 = next(g for name, g in groups.items() if name.endswith("gb200"))
    assert (gb200["amiType"], gb200["capacityType"]) == ("AL2023_ARM_64_NVIDIA", "CAPACITY_BLOCK")
    assert gb200["scalingConfig"]["maxSize"] == 18
    b300_group = next(g for name, g in groups.items() if name.endswith("b300"))
    assert b300_group["amiType"] == "AL2023_x86_64_NVIDIA"
    assert not pulumi_mocks.of_type("kubernetes:karpenter.sh/v1:NodePool"), "both pools are node groups"


def test_the_nvl72_gke_stack_renders_valid_objects_at_each_pools_full_bandwidth() -> None:
    rendered = render(resolve_file(MINIMAL / "Pulumi.gke-a4x.yaml"))
    assert_valid(*rendered.objects)
    summary = rendered.summary()
    assert "pool a4x (a4x-highgpu-4g, 4x NVIDIA GB200 GPU, rdma, 4 GPU NICs" in summary
    assert "1600 of 1600 Gbps" in summary and "3200 of 3200 Gbps" in summary
    installers = [o["metadata"]["name"] for o in rendered.objects if o["kind"] == "DaemonSet"]
    assert "nccl-rdma-installer-arm64" in installers and "nccl-rdma-installer" not in installers
    worker = worker_spec(rendered.objects, "gb300-finetune")
    assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"} in worker[
        "tolerations"
    ]
    assert worker["resourceClaims"] == [
        {"name": "rdma-nics", "resourceClaimTemplateName": "a4x-max-rdma-nics"},
        {"name": "compute-domain-channel", "resourceClaimTemplateName": "gb300-finetune-channel"},
    ]


def test_the_nvl72_gke_stack_runs_under_mocks_with_a_workload_policy_per_pool(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    deploy_minimal(pulumi_mocks, "gke-a4x", monkeypatch)
    policies = pulumi_mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert sorted(p.inputs["name"] for p in policies) == ["train-nvl72-a4x-1x72", "train-nvl72-a4x-max-1x72"]
    pools = {p.inputs["name"]: p.inputs for p in pulumi_mocks.of_type("gcp:container/nodePool:NodePool")}
    assert pools["a4x"]["placementPolicy"] == {"type": "COMPACT", "policyName": "train-nvl72-a4x-1x72"}
    assert pools["a4x"]["networkConfig"] == {"acceleratorNetworkProfile": "auto"}, "GKE makes A4X's networks on 1.35"
    metal = pools["a4x-max"]["networkConfig"]["additionalNodeNetworkConfigs"]
    assert len(metal) == 9 and metal[-1]["subnetwork"] == "default-subnet-1-train-nvl72-rdma-metal"
    assert pools["a4x-max"]["autoscaling"]["maxNodeCount"] == 18
