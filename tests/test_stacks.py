"""The Pulumi program under mocks: each stack file's config becomes the resources it declares."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pytest
import yaml

import stacks
from components.kubernetes.objects import StackConfigError
from components.models.cluster import DEFAULT_KUBERNETES_VERSION, STANDARD_SUPPORT_AS_OF, STANDARD_SUPPORT_ENDS
from components.render import render
from components.resolution import resolve_file
from components.rules.podtemplate import PodTemplate
from tests.support.pulumi_mocks import RecordingMonitor, exported, run, use_stack
from tests.support.stacks import EXAMPLE_STACKS
from tests.support.workers import worker_pod

REPO = Path(__file__).resolve().parents[1]


def test_dev_stack_registers_platform_objects_and_jobs(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.dev.yaml")
    exports = exported(run(lambda: stacks.run(stacks.load())))

    rendered = render(resolve_file(REPO / "Pulumi.dev.yaml"))
    kinds = {(r.inputs.get("kind"), r.inputs.get("metadata", {}).get("name")) for r in pulumi_mocks.registrations}
    for obj in rendered.objects:
        assert (obj["kind"], obj["metadata"]["name"]) in kinds
    jobs = pulumi_mocks.of_type("gpu-training:index:TrainingJob")
    platform = pulumi_mocks.named("platform")
    assert {j.name for j in jobs} == {
        "training-llama-finetune",
        "training-nccl-allreduce",
        "training-llama-pretrain",
        "training-ds-finetune",
    }
    namespace = pulumi_mocks.named("namespace-training")
    claim = pulumi_mocks.named("persistentvolumeclaim-training-training-checkpoints")
    nad = pulumi_mocks.named("networkattachmentdefinition-training-h100-rail-0")
    queue = pulumi_mocks.named("queue-research")
    dataset = pulumi_mocks.named("persistentvolumeclaim-training-training-dataset")
    finetune = pulumi_mocks.named("training-llama-finetune-pytorchjob")
    for used in (namespace, claim, dataset, nad, queue):
        assert pulumi_mocks.waits_for(finetune, used.urn), f"the job waits for {used.name}, which it uses"
    allreduce = pulumi_mocks.named("training-nccl-allreduce-mpijob")
    assert all(pulumi_mocks.waits_for(allreduce, used.urn) for used in (namespace, nad, queue))
    assert not pulumi_mocks.waits_for(allreduce, claim.urn), "a job waits for what it uses, not for every object"
    assert platform.type == "gpu-training:index:PlatformObjects"
    provider = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert len(provider) == 1 and provider[0].inputs["context"] == "train-dev"
    kubernetes = [r for r in pulumi_mocks.registrations if r.type.startswith("kubernetes:") and r.custom]
    assert kubernetes and all(r.provider.startswith(provider[0].urn) for r in kubernetes), "every object on the cluster"
    assert exports["pools"]["h100"]["gpusPerNode"] == 8
    assert exports["cluster"] == "train-dev"


def test_trainer_installs_then_the_runtimes_then_the_trainjobs(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.dev.yaml")
    exports = exported(run(lambda: stacks.run(stacks.load())))

    trainer = pulumi_mocks.named("kubeflow-trainer")
    volcano = pulumi_mocks.named("volcano")
    assert volcano.urn in trainer.dependencies, "Trainer watches PodGroups only if their CRD is there at start"
    runtime = pulumi_mocks.named("clustertrainingruntime-h100-torch")
    assert trainer.urn in runtime.dependencies
    pretrain = pulumi_mocks.named("training-llama-pretrain-trainjob")
    assert all(pulumi_mocks.waits_for(pretrain, r.urn) for r in (trainer, runtime, volcano))
    finetune = pulumi_mocks.named("training-ds-finetune-trainjob")
    assert pulumi_mocks.waits_for(finetune, pulumi_mocks.named("clustertrainingruntime-h100-deepspeed").urn)
    assert pulumi_mocks.named("training-ds-finetune-configmap").urn in finetune.dependencies
    assert not pulumi_mocks.waits_for(finetune, runtime.urn), "a job waits for its own runtime only"
    assert exports["pools"]["h100"]["runtimes"] == {
        "torch": "h100-torch",
        "deepspeed": "h100-deepspeed",
        "mpi": "h100-mpi",
        "tensorflow": "h100-tensorflow",
    }


def test_a_config_mistake_is_a_clean_error_naming_file_and_line(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    document = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())
    document["config"]["gpu-training:jobs"][0]["nodes"] = 9
    use_stack(pulumi_mocks, REPO / "Pulumi.dev.yaml", document["config"])
    with pytest.raises(StackConfigError) as caught:
        stacks.load()
    assert isinstance(caught.value, pulumi.RunError), "Pulumi prints a RunError without a traceback"
    assert str(caught.value).startswith("Pulumi.dev.yaml:")
    assert "jobs[0].nodes: 9 nodes, but pool 'h100' has at most 4" in str(caught.value)


@pytest.mark.parametrize("stack_file", sorted(REPO.glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_every_stack_registers_what_it_renders_through_its_clusters_provider(
    pulumi_mocks: RecordingMonitor, monkeypatch, stack_file: Path
) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, stack_file)
    exports = exported(run(lambda: stacks.run(stacks.load())))
    rendered = render(resolve_file(stack_file))
    registered = {
        (r.inputs.get("kind"), r.inputs.get("metadata", {}).get("namespace"), r.inputs.get("metadata", {}).get("name"))
        for r in pulumi_mocks.registrations
        # The cloud side makes the volumes of its file systems and buckets (render names them in its summary).
        if "kind" in r.inputs and "AwsStorage" not in r.urn and "GcpStorage" not in r.urn
    }
    expected = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in rendered.objects}
    # Made at deploy time (render names them in its summary): each fabric check's ssh key pair.
    expected |= {("Secret", c.namespace, f"{c.name}-ssh") for c in rendered.stack.checks.values()}
    assert registered == expected
    (provider,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert all(
        r.provider.startswith(provider.urn)
        for r in pulumi_mocks.registrations
        if r.type.startswith("kubernetes:") and r.custom
    )
    assert set(exports["pools"]) == set(rendered.stack.pools)
    node_pools = [
        r
        for r in pulumi_mocks.registrations
        if r.type in ("aws:eks/nodeGroup:NodeGroup", "gcp:container/nodePool:NodePool")
    ]
    cloud = rendered.stack.config.cluster.provider
    grouped = [p for p in rendered.stack.pools.values() if p.provisioner != "karpenter"]
    assert len(node_pools) == (0 if cloud == "existing" else len(grouped) + 1), (
        "GPU pools (those Karpenter does not provision) and the system pool"
    )
    karpenter = [p.name for p in rendered.stack.pools.values() if p.provisioner == "karpenter"]
    node_classes = [r.inputs["metadata"]["name"] for r in pulumi_mocks.of_type("kubernetes:karpenter.sh/v1:NodePool")]
    assert sorted(node_classes) == sorted(karpenter), "a Karpenter NodePool for each of its pools"


GKE_STACKS = sorted(p for p in [*REPO.glob("Pulumi.*.yaml"), *EXAMPLE_STACKS] if "provider: gcp" in p.read_text())


@pytest.mark.parametrize("stack_file", GKE_STACKS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_gke_stack_holds_minor_and_node_upgrades_back_under_its_gpu_jobs(
    pulumi_mocks: RecordingMonitor, monkeypatch, stack_file: Path
) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, stack_file)
    run(lambda: stacks.run(stacks.load()))
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    policy = cluster.inputs["maintenancePolicy"]
    assert policy["dailyMaintenanceWindow"]["startTime"]
    configured = yaml.safe_load(stack_file.read_text())
    maintenance = next(v for k, v in configured["config"].items() if k.endswith(":cluster")).get("maintenance", {})
    if "exclusions" not in maintenance:
        (exclusion,) = policy["maintenanceExclusions"]
        assert exclusion["exclusionOptions"] == {
            "scope": "NO_MINOR_OR_NODE_UPGRADES",
            "endTimeBehavior": "UNTIL_END_OF_SUPPORT",
        }


STACK_FILES = sorted([*REPO.glob("Pulumi.*.yaml"), *EXAMPLE_STACKS])


def test_the_default_minor_is_in_standard_support_on_every_provider() -> None:
    for provider, minors in STANDARD_SUPPORT_ENDS.items():
        assert minors.get(DEFAULT_KUBERNETES_VERSION, "") > STANDARD_SUPPORT_AS_OF, provider


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_stack_runs_a_minor_its_provider_offers_in_standard_support(stack_file: Path) -> None:
    # A pinned minor past its provider's standard support is paid extended support on EKS, cannot be
    # created on GKE, or gets no fixes on an existing cluster.
    cluster = resolve_file(stack_file).config.cluster
    minor = ".".join(cluster.kubernetes_version.split(".")[:2])
    supported = STANDARD_SUPPORT_ENDS[cluster.provider]
    assert minor in supported, f"{cluster.provider} {minor}: use one of {sorted(supported)}"


def test_the_yaml_program_runs_the_dev_stacks_minor() -> None:
    program = yaml.safe_load((REPO / "examples/yaml-platform/Pulumi.yaml").read_text())
    dev = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]["gpu-training:cluster"]
    cluster = program["resources"]["platform"]["properties"]["cluster"]
    assert cluster["kubernetesVersion"] == dev["kubernetesVersion"], "the same cluster as the dev stack"


def _worker(monitor: RecordingMonitor, name: str) -> PodTemplate:
    """The worker pods of job `name` as the stack made them (a TrainJob's merged with its runtime)."""
    return worker_pod([r.inputs for r in monitor.registrations if isinstance(r.inputs.get("kind"), str)], name)


def test_prods_pretraining_reads_its_s3_dataset_and_writes_checkpoints_to_lustre(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.prod.yaml")
    run(lambda: stacks.run(stacks.load()))
    (container,) = _worker(pulumi_mocks, "llama-pretrain").spec["containers"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/data"]["readOnly"] is True and "readOnly" not in mounts["/checkpoints"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["CHECKPOINT_DIR"] == "/checkpoints/llama-pretrain", "what --output_dir names"
    (bucket,) = pulumi_mocks.of_type("aws:s3/bucket:Bucket")
    assert bucket.protect and bucket.retain_on_delete
    assert [
        a
        for a in pulumi_mocks.of_type("aws:eks/addon:Addon")
        if a.inputs["addonName"] == "aws-mountpoint-s3-csi-driver"
    ]
    (dataset,) = [
        r
        for r in pulumi_mocks.registrations
        if r.inputs.get("kind") == "PersistentVolume" and "dataset" in r.inputs["metadata"]["name"]
    ]
    assert dataset.inputs["spec"]["mountOptions"] == ["metadata-ttl=indefinite"]
    assert dataset.inputs["spec"]["csi"]["volumeAttributes"]["cache"] == "emptyDir"


def test_gkes_finetune_mounts_its_buckets_through_the_gcsfuse_sidecar(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.gke.yaml")
    run(lambda: stacks.run(stacks.load()))
    worker = _worker(pulumi_mocks, "gemma-finetune")
    assert worker.metadata["annotations"]["gke-gcsfuse/volumes"] == "true"
    (container,) = worker.spec["containers"]
    assert {m["mountPath"] for m in container["volumeMounts"]} >= {"/workspace", "/data", "/checkpoints"}
    assert {"name": "CHECKPOINT_DIR", "value": "/checkpoints/gemma-finetune"} in container["env"]
    buckets = pulumi_mocks.of_type("gcp:storage/bucket:Bucket")
    assert len(buckets) == 2 and all(b.protect and b.retain_on_delete for b in buckets)
    assert len(pulumi_mocks.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")) == 2
    (cluster,) = pulumi_mocks.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
