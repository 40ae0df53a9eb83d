"""The CrossGuard pack through its API: each policy's validate with constructed arguments, no engine."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import PolicyResource, PolicyResourceOptions, StackValidationArgs
from pulumi_policy.proxy import unknown_checking_proxy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import gpu_policies

from components.manifests import trainingjob
from components.manifests.plan import plan
from components.manifests.trainingruntime import cluster_runtime, runtime_names
from components.models import NetworkConfig, NodePoolSpec, TrainingJobSpec
from components.pools import resolve_pools
from components.rules import RULES

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's sentinel for a value known only after the update


def resource(
    resource_type: str,
    props: dict[str, Any],
    name: str,
    *,
    protect: bool = False,
    dependencies: list[PolicyResource] | None = None,
) -> PolicyResource:
    opts = PolicyResourceOptions(protect, [], False, [], None, [])
    return PolicyResource(
        resource_type,
        unknown_checking_proxy(copy.deepcopy(props)),
        f"urn:pulumi:dev::p::{resource_type}::{name}",
        name,
        opts,
        None,
        None,
        dependencies or [],
        {},
    )


def kube(obj: dict[str, Any], **kwargs: Any) -> PolicyResource:
    group = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
    return resource(f"kubernetes:{group}:{obj['kind']}", obj, obj["metadata"]["name"], **kwargs)


def violations(
    policy_name: str, resources: list[PolicyResource], config: dict[str, Any] | None = None
) -> list[tuple[str, str | None]]:
    (policy,) = [p for p in gpu_policies.POLICIES if p.name == policy_name]
    found: list[tuple[str, str | None]] = []
    args = StackValidationArgs(resources, config or {})
    policy.validate(args, lambda message, urn=None: found.append((message, urn)))
    return found


def training_job(**fields: Any) -> list[dict[str, Any]]:
    network = NetworkConfig()
    spec = NodePoolSpec.model_validate(
        {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 4, "zone": "us-east-1a"}
    )
    pools, _ = resolve_pools([spec], "aws", "us-east-1", network)
    job = TrainingJobSpec.model_validate(
        {
            "name": "pretrain",
            "image": "registry.example.com/train:v1",
            "command": ["train.py"],
            "nodes": 2,
            "resources": {"memory": "1800Gi"},
            **fields,
        }
    )
    return trainingjob.objects(plan(job, pools["p5"], "volcano", "research"))


def trainjob_on_its_runtime(**fields: Any) -> list[dict[str, Any]]:
    """The p5 pool's torch ClusterTrainingRuntime and a 2-node TrainJob on it."""
    network = NetworkConfig()
    spec = NodePoolSpec.model_validate(
        {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 4, "zone": "us-east-1a"}
    )
    pools, _ = resolve_pools([spec], "aws", "us-east-1", network)
    pool = pools["p5"].model_copy(update={"runtimes": runtime_names(pools["p5"])})
    job = TrainingJobSpec.model_validate(
        {
            "name": "pretrain",
            "launcher": "trainjob",
            "image": "registry.example.com/train:v1",
            "command": ["train.py"],
            "nodes": 2,
            "resources": {"memory": "1800Gi"},
            **fields,
        }
    )
    objects = trainingjob.objects(plan(job, pool, "volcano", "research"))
    assert [o["kind"] for o in objects] == ["TrainJob"]
    return [cluster_runtime(pool, "torch", "volcano"), *objects]


BAD_JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "bad", "namespace": "training"},
    "spec": {
        "completions": 2,
        "parallelism": 2,
        "completionMode": "Indexed",
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "t",
                        "image": "pytorch/pytorch:latest",
                        "env": [{"name": "NCCL_SOCKET_IFNAME", "value": "ib0"}],
                        "resources": {"limits": {"nvidia.com/gpu": 8}},
                    }
                ],
            }
        },
    },
}


def test_one_policy_per_rule_with_its_enforcement() -> None:
    assert [p.name for p in gpu_policies.POLICIES] == [*(r.id for r in RULES), gpu_policies.ADVICE]
    levels = {p.name: p.enforcement_level.value for p in gpu_policies.POLICIES}
    assert levels["nccl-debug-production"] == "advisory" and levels["gpu-placement"] == "mandatory"


def test_our_training_jobs_pass_every_policy() -> None:
    volcano = resource("kubernetes:helm.sh/v3:Release", {"chart": "volcano", "version": "1.15.1"}, "volcano")
    resources = [volcano, *(kube(o) for o in training_job())]
    for policy in gpu_policies.POLICIES:
        found = violations(policy.name, resources)
        if policy.name == "legacy-launcher":  # a PyTorchJob: advice that it is on the v1 operators' legacy path
            assert [urn for _, urn in found] == ["urn:pulumi:dev::p::kubernetes:kubeflow.org/v1:PyTorchJob::pretrain"]
        else:
            assert found == [], policy.name


@pytest.mark.parametrize("name", ["shared-memory", "nccl-socket-interface"])
def test_a_hand_written_job_is_caught(name: str) -> None:
    found = violations(name, [kube(BAD_JOB)])
    assert found and all(urn and urn.endswith("::bad") for _, urn in found)
    assert all("Fix:" in message for message, _ in found)


def test_gang_scheduling_applies_when_volcano_is_installed() -> None:
    bad = copy.deepcopy(BAD_JOB)
    assert violations("gang-scheduling", [kube(bad)]) == []
    volcano = resource("kubernetes:helm.sh/v3:Release", {"chart": "volcano"}, "volcano")
    assert violations("gang-scheduling", [volcano, kube(bad)])


def test_allowed_registries_and_minimum_shm_come_from_policy_config() -> None:
    objects = [kube(o) for o in training_job()]
    assert violations("pinned-images", objects, {"allowedRegistries": ["registry.example.com"]}) == []
    assert violations("pinned-images", objects, {"allowedRegistries": ["nvcr.io"]})
    assert violations("shared-memory", objects, {"minShmSize": "1Ti"})


def test_gpu_pools_and_efa_placement_on_eks() -> None:
    template = resource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        {"id": UNKNOWN, "networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]},
        "p5",
    )
    group = resource(
        "aws:eks/nodeGroup:NodeGroup",
        {"amiType": "AL2023_x86_64_NVIDIA", "subnetIds": ["s-1"], "launchTemplate": {"id": UNKNOWN}, "taints": []},
        "p5",
        dependencies=[template],
    )
    assert violations("gpu-pool-taints", [template, group])
    messages = [m for m, _ in violations("efa-placement", [template, group])]
    assert messages and "placement group" in messages[0]
    tainted = resource(
        "aws:eks/nodeGroup:NodeGroup",
        {
            "amiType": "AL2023_x86_64_NVIDIA",
            "subnetIds": ["s-1"],
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
        },
        "g6",
    )
    assert violations("gpu-pool-taints", [tainted]) == []


def test_gke_pools() -> None:
    pool = resource(
        "gcp:container/nodePool:NodePool",
        {"nodeConfig": {"guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}], "taints": []}},
        "a3",
    )
    assert violations("gpu-pool-taints", [pool])


@pytest.mark.parametrize(
    ("resource_type", "props"),
    [
        ("aws:fsx/lustreFileSystem:LustreFileSystem", {"storageCapacity": 2400}),
        ("gcp:lustre/instance:Instance", {"capacityGib": "18000"}),
    ],
)
def test_lustre_file_systems_must_be_protected(resource_type: str, props: dict[str, Any]) -> None:
    assert violations("storage-retained", [resource(resource_type, props, "ckpt")])
    assert violations("storage-retained", [resource(resource_type, props, "ckpt", protect=True)]) == []


def test_storage_must_be_protected_and_retained() -> None:
    deleting = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "nfs"},
        "provisioner": "nfs.csi.k8s.io",
    }
    assert violations("storage-retained", [kube(deleting)]) == []
    assert any("reclaimPolicy defaults to Delete" in m for m, _ in violations(gpu_policies.ADVICE, [kube(deleting)]))


def test_the_cluster_the_stack_makes_adds_the_gpu_toleration() -> None:
    job = copy.deepcopy(BAD_JOB)
    assert violations("gpu-placement", [kube(job)]) == [], "without pools the missing toleration is advice"
    advice = [m for m, _ in violations(gpu_policies.ADVICE, [kube(job)])]
    assert any(m.startswith("gpu-placement: Job/training/bad: pod pods tolerate no nvidia.com/gpu") for m in advice)
    eks = resource("aws:eks/cluster:Cluster", {"name": "c"}, "c")
    assert not [m for m in (m for m, _ in violations(gpu_policies.ADVICE, [eks, kube(job)])) if "gpu-placement" in m]


def test_unknown_values_in_a_preview_do_not_break_a_policy() -> None:
    job = training_job()[-1]
    job["metadata"]["labels"] = UNKNOWN
    assert violations("gpu-placement", [kube(job)]) == []


def p5_node_group() -> list[PolicyResource]:
    """An EKS node group of p5.48xlarge with every EFA interface, as a preview shows it."""
    interfaces = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
    interfaces += [
        {"networkCardIndex": c, "deviceIndex": 0 if c else 1, "interfaceType": "efa-only"} for c in range(32)
    ]
    template = resource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        {"id": UNKNOWN, "instanceType": "p5.48xlarge", "networkInterfaces": interfaces},
        "p5",
    )
    group = resource(
        "aws:eks/nodeGroup:NodeGroup",
        {
            "amiType": "AL2023_x86_64_NVIDIA",
            "subnetIds": ["s-1"],
            "launchTemplate": {"id": UNKNOWN},
            "labels": {"gpu-training/pool": "p5"},
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
        },
        "p5",
        dependencies=[template],
    )
    return [template, group]


def with_efa(objects: list[dict[str, Any]], count: int | str | None) -> list[dict[str, Any]]:
    """The job's GPU workers with `count` EFA devices (None: no EFA request at all)."""
    for obj in objects:
        for replica in (obj["spec"].get("mpiReplicaSpecs") or obj["spec"].get("pytorchReplicaSpecs") or {}).values():
            for container in replica["template"]["spec"]["containers"]:
                for section in container.get("resources", {}).values():
                    if "nvidia.com/gpu" in section:
                        section.pop("vpc.amazonaws.com/efa", None)
                        if count is not None:
                            section["vpc.amazonaws.com/efa"] = count
    return objects


def test_an_efa_mpijob_without_efa_on_an_eks_node_group_is_caught() -> None:
    objects = training_job(launcher="mpi")
    assert violations("fabric-attached", [*p5_node_group(), *(kube(o) for o in objects)]) == []
    found = violations("fabric-attached", [*p5_node_group(), *(kube(o) for o in with_efa(objects, None))])
    assert len(found) == 1 and found[0][1].endswith("::pretrain")
    assert "none of the 32 EFA devices of pool p5 (p5.48xlarge)" in found[0][0] and "Fix:" in found[0][0]
    (partial,) = violations("fabric-attached", [*p5_node_group(), *(kube(o) for o in with_efa(objects, 4))])
    assert "attaches 4 of 32 EFA devices" in partial[0]


def test_a_privileged_training_container_is_blocked_and_node_agents_pass_in_their_namespaces() -> None:
    (policy,) = [p for p in gpu_policies.POLICIES if p.name == "privileged-containers"]
    assert policy.enforcement_level.value == "mandatory"
    job = training_job()[-1]
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["securityContext"] = {
        "privileged": True
    }
    (found,) = violations("privileged-containers", [kube(job)])
    assert found[1].endswith("::pretrain") and "Worker/pytorch: runs privileged" in found[0]
    agent = copy.deepcopy(job)
    agent["metadata"]["namespace"] = "kube-system"
    assert violations("privileged-containers", [kube(agent)]) == []
    agent["metadata"]["namespace"] = "node-agents"
    assert violations("privileged-containers", [kube(agent)])
    assert violations("privileged-containers", [kube(agent)], {"exemptNamespaces": ["node-agents"]}) == []


def as_numbers(value: Any) -> Any:
    """An object with every whole-number quantity of its requests and limits as a float: how the engine hands a
    policy a number a manifest writes unquoted (its property values are protobuf doubles)."""
    if isinstance(value, dict):
        return {
            k: (
                {r: float(q) if isinstance(q, str) and q.isdigit() else q for r, q in v.items()}
                if k in ("limits", "requests") and isinstance(v, dict)
                else as_numbers(v)
            )
            for k, v in value.items()
        }
    return [as_numbers(v) for v in value] if isinstance(value, list) else value


def test_a_quantity_reads_the_same_as_the_string_we_write_or_as_a_number() -> None:
    """We write quantities as strings; a policy reaches the same verdicts on them as on numbers."""
    volcano = resource("kubernetes:helm.sh/v3:Release", {"chart": "volcano"}, "volcano")
    cases = {
        "ours": training_job(launcher="mpi"),
        "partial EFA": with_efa(training_job(launcher="mpi"), "4"),
        "trainjob": trainjob_on_its_runtime(),
    }
    assert (
        cases["ours"][-1]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"][
            "limits"
        ]["nvidia.com/gpu"]
        == "8"
    ), "the builders write strings"
    for name, objects in cases.items():
        written = [volcano, *p5_node_group(), *(kube(o) for o in objects)]
        numbers = [volcano, *p5_node_group(), *(kube(as_numbers(o)) for o in objects)]
        for policy in gpu_policies.POLICIES:
            found = [urn for _, urn in violations(policy.name, written) if "kubernetes:" in str(urn)]
            assert found == [urn for _, urn in violations(policy.name, numbers) if "kubernetes:" in str(urn)], (
                policy.name
            )
            expected = (name == "partial EFA" and policy.name == "fabric-attached") or (
                policy.name == "legacy-launcher" and name != "trainjob"  # the MPIJobs are on the legacy path
            )
            assert bool(found) == expected, (name, policy.name)


def test_karpenter_pools_in_a_preview_tell_the_fabric() -> None:
    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "p5"},
        "spec": {"networkInterfaces": [{"networkCardIndex": c, "interfaceType": "efa-only"} for c in range(32)]},
    }
    node_pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "p5"},
        "spec": {
            "template": {
                "metadata": {"labels": {"gpu-training/pool": "p5"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "p5"},
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}
                    ],
                },
            }
        },
    }
    objects = with_efa(training_job(), None)
    found = violations("fabric-attached", [kube(node_class), kube(node_pool), *(kube(o) for o in objects)])
    assert len(found) == 2, "the PyTorchJob's Master and Worker"


def tcpxo_job(interfaces: int | None) -> dict[str, Any]:
    """A hand-written 2-node PyTorchJob on an A3 Mega pool attaching `interfaces` GPU NICs (None: no annotation)."""
    annotations = {}
    if interfaces is not None:
        listed = [{"interfaceName": "eth0", "network": "default"}]
        listed += [{"interfaceName": f"eth{i}", "network": f"vpc{i}"} for i in range(1, interfaces + 1)]
        annotations["networking.gke.io/interfaces"] = json.dumps(listed)
    template = {
        "metadata": {"annotations": annotations},
        "spec": {
            "nodeSelector": {"gpu-training/pool": "a3mega"},
            "containers": [
                {
                    "name": "pytorch",
                    "image": "us-docker.pkg.dev/p/train:v1",
                    "env": [{"name": "NCCL_SOCKET_IFNAME", "value": "eth0"}],
                    "resources": {"limits": {"nvidia.com/gpu": 8}},
                }
            ],
        },
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "mega", "namespace": "training"},
        "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": template}}},
    }


def test_a_tcpxo_job_on_a_gke_gpudirect_pool() -> None:
    networks = [{"network": f"vpc{i}", "subnetwork": f"vpc{i}"} for i in range(1, 9)]
    pool = resource(
        "gcp:container/nodePool:NodePool",
        {
            "name": "a3mega",
            "nodeConfig": {
                "machineType": "a3-megagpu-8g",
                "guestAccelerators": [{"type": "nvidia-h100-mega-80gb", "count": 8}],
                "labels": {"gpu-training/pool": "a3mega"},
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            },
            "networkConfig": {"additionalNodeNetworkConfigs": networks},
        },
        "a3mega",
    )
    (missing,) = violations("fabric-attached", [pool, kube(tcpxo_job(None))])
    assert "attach none of the 8 GPU NICs (tcpxo) of pool a3mega (a3-megagpu-8g)" in missing[0]
    (partial,) = violations("fabric-attached", [pool, kube(tcpxo_job(4))])
    assert "attach 4 of 8 GPU NICs (tcpxo)" in partial[0]
    assert violations("fabric-attached", [pool, kube(tcpxo_job(8))]) == []
    assert violations("nccl-socket-interface", [pool, kube(tcpxo_job(8))]) == [], "eth0 is right on GKE GPUDirect"
    unknown = tcpxo_job(8)
    unknown["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"][
        "networking.gke.io/interfaces"
    ] = UNKNOWN
    assert violations("fabric-attached", [pool, kube(unknown)]) == [], "known only after the update"


def test_trainjobs_and_their_runtimes_pass_every_policy_and_a_trainjobs_own_defect_lands_on_it() -> None:
    volcano = resource("kubernetes:helm.sh/v3:Release", {"chart": "volcano", "version": "1.15.1"}, "volcano")
    runtime, job = trainjob_on_its_runtime()
    assert [kube(runtime).resource_type, kube(job).resource_type] == [
        "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime",
        "kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob",
    ]
    for policy in gpu_policies.POLICIES:
        assert violations(policy.name, [volcano, kube(runtime), kube(job)]) == [], policy.name
        assert violations(policy.name, [volcano, kube(job)]) == [], f"{policy.name}: the runtime in another stack"
    job["spec"]["trainer"]["image"] = "registry.example.com/train:{TAG}"
    (found,) = violations("pinned-images", [kube(runtime), kube(job)])
    assert found[1].endswith("::pretrain") and "TrainJob/training/pretrain: node/node: image" in found[0]


def test_a_runtimes_defect_is_reported_on_the_runtime_not_on_every_trainjob() -> None:
    runtime, job = trainjob_on_its_runtime()
    del runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["tolerations"]
    other = copy.deepcopy(job)
    other["metadata"]["name"] = "finetune"
    found = violations("gpu-placement", [*p5_node_group(), kube(runtime), kube(job), kube(other)])
    assert [urn for _, urn in found] == [kube(runtime).urn]
    assert found[0][0].startswith(
        "ClusterTrainingRuntime/p5-torch: node pods tolerate no nvidia.com/gpu=true:NoSchedule"
    )


def test_unknown_values_in_a_trainjob_do_not_break_a_policy() -> None:
    runtime, job = trainjob_on_its_runtime(volumes=[{"claim": "ckpt", "mountPath": "/checkpoints"}])
    job["spec"]["trainer"]["resourcesPerNode"]["limits"]["vpc.amazonaws.com/efa"] = UNKNOWN
    job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"] = UNKNOWN
    ours = {kube(runtime).urn, kube(job).urn}
    for policy in gpu_policies.POLICIES:
        found = violations(policy.name, [*p5_node_group(), kube(runtime), kube(job)])
        assert [f for f in found if f[1] in ours] == [], policy.name


def test_a_gpu_node_group_without_a_health_agent_is_reported_as_advice() -> None:
    group = {"amiType": "AL2023_x86_64_NVIDIA", "instanceTypes": ["p5.48xlarge"], "taints": []}
    bare = resource("aws:eks/nodeGroup:NodeGroup", group, "p5")
    (policy,) = [p for p in gpu_policies.POLICIES if p.name == "gpu-pool-health-agent"]
    assert policy.enforcement_level.value == "advisory"
    (found,) = violations("gpu-pool-health-agent", [bare])
    assert "without a health agent" in found[0] and found[1] == bare.urn
    agent = resource("aws:eks/addon:Addon", {"addonName": "eks-node-monitoring-agent"}, "agent")
    repaired = resource("aws:eks/nodeGroup:NodeGroup", {**group, "nodeRepairConfig": {"enabled": True}}, "p5")
    assert violations("gpu-pool-health-agent", [agent, repaired]) == []


def test_a_literal_credential_blocks_a_preview_and_the_stacks_own_secrets_pass() -> None:
    token = "hf_" + "aB3dE5gH7jK9mN1p" + "Q2rS4tU6vW8xY0zA2c"  # of parts: no token literal in the repository
    bad = copy.deepcopy(BAD_JOB)
    bad["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "HF_TOKEN", "value": token},
        {"name": "WANDB_API_KEY", "value": "0123abcd4567efgh"},
    ]
    (found,) = violations("literal-credentials", [kube(bad)])
    assert found[0].startswith("Job/training/bad: pod/t: env HF_TOKEN: a Hugging Face token in plain text")
    assert found[1] and found[1].endswith("::bad") and token[4:] not in found[0]
    (advice,) = [m for m, _ in violations(gpu_policies.ADVICE, [kube(bad)]) if "literal-credentials" in m]
    assert "WANDB_API_KEY" in advice
    owned = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf", "namespace": "training"}}
    owned["stringData"] = {"token": token}  # a Secret the stack makes from a Pulumi secret: the provider keeps it
    referenced = copy.deepcopy(BAD_JOB)
    referenced["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}
    ]
    assert violations("literal-credentials", [kube(owned), kube(referenced)]) == []
