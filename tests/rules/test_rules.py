"""The rules: every corpus case is caught by its rule (and only it), with its fix; correct output passes."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import rules
from components.rules import rule as rule_module
from components.rules.cloud import efa_placement
from components.rules.rule import Settings
from components.rules.subject import Subject
from components.rules.subjects import from_objects, from_pools
from tests.rules.corpus import (
    CLOUD_CASES,
    NVLINK_CASES,
    QUEUE_CASES,
    TRAINJOB_CASES,
    WORKLOAD_CASES,
    bad_objects,
    bad_trainjob_objects,
    good,
    good_trainjob,
)

WORKLOAD_RULES = [
    *WORKLOAD_CASES,
    "checkpoint-rwx",
    "fabric-attached",
    "duplicate-keys",
    "privileged-containers",
    "legacy-launcher",
]
LEGACY = "legacy-launcher"
"""The corpus's workloads are PyTorchJobs: each draws this one advisory for its kind, beside what it is a case of."""


def _run(subjects: list[Subject], settings: Settings) -> list[rules.Finding]:
    """The rules' findings but the legacy-launcher advice every v1 job draws (its own case tests it)."""
    return [f for f in rules.run(subjects, settings) if f.rule != LEGACY]


def _beside_legacy(findings: list[rules.Finding], rule: str) -> list[rules.Finding]:
    """The findings of a v1 corpus case but its kind's one legacy-launcher advice (asserted to be there)."""
    legacy = [f for f in findings if f.rule == LEGACY]
    assert [f.enforcement for f in legacy] == ["advisory"], "a PyTorchJob is on the legacy path, once"
    return findings if rule == LEGACY else [f for f in findings if f.rule != LEGACY]


TRAINJOB_RULES = [*TRAINJOB_CASES, "checkpoint-rwx", "privileged-containers"]


def _privileged(pod_template: dict[str, Any]) -> None:
    pod_template["spec"]["containers"][0]["securityContext"] = {"privileged": True}


def bad(rule: str) -> tuple[list[Subject], Settings]:
    """The corpus case of a rule (privileged-containers': the workers run privileged; legacy-launcher's: the good
    PyTorchJob itself)."""
    if rule == LEGACY:
        return from_objects(good()), Settings(gang_scheduler="volcano", production=True)
    if rule != "privileged-containers":
        return bad_objects(rule)
    objects = good()
    workload = copy.deepcopy(objects[-1])
    _privileged(workload["spec"]["pytorchReplicaSpecs"]["Worker"]["template"])
    return from_objects([*objects[:-1], workload]), Settings()


def bad_trainjob(rule: str) -> tuple[list[Subject], Settings, str]:
    """The TrainJob corpus case of a rule (privileged-containers': the runtime's node runs privileged)."""
    if rule != "privileged-containers":
        return bad_trainjob_objects(rule)
    objects = copy.deepcopy(good_trainjob())
    trainjob = objects[-1]
    runtime = next(o for o in objects if o["metadata"]["name"] == trainjob["spec"]["runtimeRef"]["name"])
    _privileged(runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"])
    return from_objects(objects), Settings(), from_objects([runtime])[0].key


def test_every_rule_has_a_corpus_case() -> None:
    assert {r.id for r in rules.RULES} == set(WORKLOAD_RULES) | set(CLOUD_CASES) | set(QUEUE_CASES) | set(NVLINK_CASES)
    assert set(WORKLOAD_RULES) - set(TRAINJOB_RULES) == {
        "processes-per-node",
        "node-count",
        "env-references",
        "checkpoint-path",
        "duplicate-keys",
        "legacy-launcher",
    }, "every other workload rule covers TrainJobs and runtimes"


def test_every_rule_states_its_reason_fix_severity_and_enforcement() -> None:
    for rule in rules.RULES:
        assert rule.reason and rule.fix and rule.severity in ("low", "medium", "high", "critical")
        assert rule.enforcement in ("mandatory", "advisory")


@pytest.mark.parametrize("fabric", ["roce", "tcp", "efa"])
def test_the_good_job_passes_but_for_its_legacy_kind(fabric: str) -> None:
    findings = rules.run(from_objects(good(fabric)), Settings(gang_scheduler="volcano", production=True))
    assert _beside_legacy(findings, "") == []


@pytest.mark.parametrize("rule", WORKLOAD_RULES)
def test_each_bad_manifest_is_caught_by_its_rule_only(rule: str) -> None:
    subjects, settings = bad(rule)
    findings = _beside_legacy(rules.run(subjects, settings), rule)
    assert {f.rule for f in findings} == {rule}
    assert all(f.fix == rules.by_id(rule).fix for f in findings)
    assert {f.enforcement for f in findings} == {rules.by_id(rule).enforcement}, "the case is a defect, not advice"


@pytest.mark.parametrize(("fabric", "runtime"), list(itertools.product(["roce", "tcp", "efa"], ["torch", "deepspeed"])))
def test_the_good_trainjob_and_its_runtimes_pass(fabric: str, runtime: str) -> None:
    subjects = from_objects(good_trainjob(fabric, runtime))  # type: ignore[arg-type]
    assert {"ClusterTrainingRuntime", "TrainJob"} <= {s.kind for s in subjects}
    assert rules.run(subjects, Settings(gang_scheduler="volcano", production=True)) == []


@pytest.mark.parametrize("rule", TRAINJOB_RULES)
def test_each_bad_trainjob_or_runtime_is_caught_by_its_rule_only_on_the_object_at_fault(rule: str) -> None:
    subjects, settings, at_fault = bad_trainjob(rule)
    findings = rules.run(subjects, settings)
    assert findings and {f.rule for f in findings} == {rule}
    assert {f.subject for f in findings} == {at_fault}, "a runtime's defect is not reported again on its TrainJob"


@pytest.mark.parametrize("rule", sorted(CLOUD_CASES))
def test_each_bad_cloud_resource_is_caught_by_its_rule_only(rule: str) -> None:
    findings = rules.run([CLOUD_CASES[rule]], Settings())
    assert {f.rule for f in findings} == {rule} and findings[0].enforcement == rules.by_id(rule).enforcement


@pytest.mark.parametrize("rule", sorted(NVLINK_CASES))
def test_each_broken_rack_scale_job_is_caught_by_its_rule_only(rule: str) -> None:
    findings = [f for f in rules.run(NVLINK_CASES[rule], Settings(cluster="existing")) if f.enforcement == "mandatory"]
    assert findings and {f.rule for f in findings} == {rule}


@pytest.mark.parametrize("rule", sorted(QUEUE_CASES))
def test_each_bad_queue_object_is_caught_by_its_rule_only(rule: str) -> None:
    findings = rules.run(QUEUE_CASES[rule], Settings(gang_scheduler="kueue"))
    assert findings and {f.rule for f in findings} == {rule}
    assert {f.enforcement for f in findings} == {rules.by_id(rule).enforcement}


def test_enforcement_overrides() -> None:
    subjects, _ = bad_objects("pinned-images")
    (finding,) = _run(subjects, Settings(enforcement={"pinned-images": "advisory"}))
    assert finding.enforcement == "advisory"
    assert _run(subjects, Settings(enforcement={"pinned-images": "disabled"})) == []


def test_allowed_registries_and_minimum_shm() -> None:
    subjects = from_objects(good())
    assert {f.rule for f in _run(subjects, Settings(allowed_registries=("nvcr.io",)))} == {"pinned-images"}
    assert _run(subjects, Settings(allowed_registries=("registry.example.com",))) == []
    assert {f.rule for f in _run(subjects, Settings(min_shm="512Gi"))} == {"shared-memory"}


def test_digests_and_docker_hub_images() -> None:
    digest = "nvcr.io/nvidia/pytorch@sha256:" + "a" * 64
    job = Subject(
        "Pod/x",
        "Pod",
        {"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "image": digest}]}},
    )
    assert rules.run([job], Settings(allowed_registries=("nvcr.io",))) == []
    hub = Subject(
        "Pod/y",
        "Pod",
        {
            "kind": "Pod",
            "metadata": {"name": "y"},
            "spec": {"containers": [{"name": "c", "image": "pytorch/pytorch:2.4"}]},
        },
    )
    assert [f.message for f in rules.run([hub], Settings(allowed_registries=("nvcr.io",)))] == [
        "pod/c: image pytorch/pytorch:2.4 is not from an allowed registry (nvcr.io)"
    ]


def test_an_mpi_launcher_forwarding_rdma_variables_is_not_an_rdma_pod() -> None:
    objects = good(launcher="mpi")
    assert _run(from_objects(objects), Settings(gang_scheduler="volcano")) == []


LAUNCHERS = ["pytorch", "mpi", "tensorflow", "indexed", "trainjob"]
FABRICS = ["tcp", "roce", "infiniband", "efa", "tcpx", "tcpxo", "rdma"]
SCHEDULERS = ["volcano", "kueue", "none"]


@pytest.mark.parametrize(("launcher", "fabric", "scheduler"), list(itertools.product(LAUNCHERS, FABRICS, SCHEDULERS)))
def test_our_output_passes_every_mandatory_rule(launcher: str, fabric: str, scheduler: str) -> None:
    from components.manifests import trainingjob
    from components.manifests.plan import plan
    from tests.support.factories import EFA_RESOURCES, job, pool

    spec = job(launcher=launcher, resources=EFA_RESOURCES if fabric == "efa" else {})
    objects = trainingjob.objects(plan(spec, pool(fabric), scheduler, "research" if scheduler != "none" else None))
    target = pool(fabric)
    findings = rules.run(from_objects(objects) + from_pools([target]), Settings(gang_scheduler=scheduler))
    assert [f for f in findings if f.enforcement == "mandatory"] == []


def test_an_rdma_pool_with_one_rail_for_eight_gpus_gets_advice() -> None:
    from tests.rules.corpus import EIGHT_RAILS
    from tests.support.factories import pool

    findings = [f for f in rules.run(from_pools([pool("roce")]), Settings()) if f.rule == "rdma-rails"]
    assert {f.enforcement for f in findings} == {"advisory"}
    assert any("uses 1 of its nodes' 8 rails: workers attach 1 of the node's 8 rails" in f.message for f in findings)
    eight = pool("roce", networks=[], rails=EIGHT_RAILS)
    assert [f for f in rules.run(from_pools([eight]), Settings()) if f.rule == "rdma-rails"] == []


@pytest.mark.parametrize(("runtime", "scheduler"), list(itertools.product(["torch", "deepspeed", "mpi"], SCHEDULERS)))
def test_a_stacks_trainjobs_and_cluster_training_runtimes_pass_every_mandatory_rule(
    runtime: str, scheduler: str
) -> None:
    from components.manifests import platform, trainingjob
    from tests.addons.stacks import stack_file

    jobs = [
        {
            "name": "x",
            "launcher": "trainjob",
            "runtime": runtime,
            "image": "r/i:1",
            "command": ["train.py"],
            "nodes": 2,
            "nodePool": "h100",
        }
    ]
    queues = [{"name": "research", "gpus": 16}] if scheduler == "kueue" else []
    stack = stack_file("dev", trainer={"enabled": True}, jobs=jobs, scheduler={"type": scheduler, "queues": queues})
    objects = [*platform.objects(stack), *(o for plan in stack.jobs for o in trainingjob.objects(plan))]
    subjects = from_objects(objects) + from_pools(stack.pools.values())
    assert "ClusterTrainingRuntime" in {s.kind for s in subjects}
    findings = rules.run(subjects, Settings(gang_scheduler=stack.scheduler))
    assert [f for f in findings if f.enforcement == "mandatory"] == []


# --- GPU rules judge GPU workloads ---------------------------------------------------------------

# Our own reduction of the shape of volcano-sh/volcano example/hierarchical-jobs/jobs.yaml at tag v1.15.1 (the
# jobs of its hierarchical-queues example): a CPU-only Volcano Job of 6 nginx pods that may start one at a time.
VOLCANO_CPU_JOB: dict[str, Any] = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "minAvailable": 1,
        "schedulerName": "volcano",
        "queue": "root-eng-prod",
        "tasks": [
            {
                "name": "nginx",
                "replicas": 6,
                "template": {
                    "spec": {
                        "schedulerName": "volcano",
                        "restartPolicy": "OnFailure",
                        "containers": [{"name": "nginx", "image": "nginx", "resources": {"requests": {"cpu": "0.5"}}}],
                    }
                },
            }
        ],
    },
}
GENERAL_RULES = {
    "pinned-images",
    "host-namespaces",
    "env-references",
    "duplicate-keys",
    "privileged-containers",
    "unverified-nodes",
    "nvlink-karpenter",
    "literal-credentials",
    "legacy-launcher",
    *CLOUD_CASES,
}
"""The rules that judge every object, not only GPU workloads (the cloud rules judge pools and storage;
unverified-nodes reads every workload because a pod may hold GPUs in its init containers only; legacy-launcher judges
a v1 job by its kind)."""


def test_only_the_general_rules_judge_workloads_without_gpus() -> None:
    assert {r.id for r in rules.RULES if not r.gpu_only} == GENERAL_RULES


def test_a_cpu_only_volcano_job_that_starts_one_pod_at_a_time_passes() -> None:
    findings = rules.run(from_objects([VOLCANO_CPU_JOB]), Settings(gang_scheduler="volcano"))
    assert [(f.rule, f.enforcement) for f in findings] == [("pinned-images", "advisory")], "nginx has no tag"


def test_the_same_job_on_gpus_is_judged() -> None:
    job = copy.deepcopy(VOLCANO_CPU_JOB)
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    findings = [
        f for f in rules.run(from_objects([job]), Settings(gang_scheduler="volcano")) if f.rule != "gpu-placement"
    ]
    assert [(f.rule, f.message) for f in findings if f.enforcement == "mandatory"] == [
        ("gang-scheduling", "minAvailable 1 is smaller than the job's 6 GPU pods, so part of the job can start alone")
    ]


def test_a_workload_whose_gpus_cannot_be_read_is_each_gpu_rules_error_and_the_others_are_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A subject whose GPUs cannot be read is each GPU rule's to report, and the review goes on to the next."""
    unreadable = copy.deepcopy(VOLCANO_CPU_JOB)
    unreadable["metadata"]["name"] = "unreadable"
    on_gpus = copy.deepcopy(VOLCANO_CPU_JOB)
    on_gpus["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    without_gpus = rule_module._without_gpus

    def failing(subject: Subject, subjects: Any) -> bool:
        if subject.data["metadata"]["name"] == "unreadable":
            raise ValueError("no pods to read")
        return without_gpus(subject, subjects)

    monkeypatch.setattr(rule_module, "_without_gpus", failing)
    errors: list[str] = []
    findings = rules.run(from_objects([unreadable, on_gpus]), Settings(gang_scheduler="volcano"), errors)
    (job,) = from_objects([on_gpus])
    gpu_rules = [r.id for r in rules.RULES if r.gpu_only and r.applies_to(job)]
    assert gpu_rules and errors == [
        f"Job/default/unreadable: rule {r} could not read it (ValueError: no pods to read)" for r in gpu_rules
    ]
    assert ("gang-scheduling", "Job/default/web") in {(f.rule, f.subject) for f in findings}, "the next is judged"


CPU_WORKLOADS = st.sampled_from(["pytorch", "volcano", "indexed", "podgroup"])


@given(
    kind=CPU_WORKLOADS,
    replicas=st.integers(min_value=1, max_value=64),
    gang=st.integers(min_value=0, max_value=64),
    scheduler=st.sampled_from(["volcano", "kueue", "none"]),
    env=st.sampled_from(
        [[], [{"name": "NCCL_SOCKET_IFNAME", "value": "ib0"}], [{"name": "NCCL_IB_DISABLE", "value": "0"}]]
    ),
)
def test_no_gpu_rule_judges_a_workload_without_gpus(
    kind: str, replicas: int, gang: int, scheduler: str, env: list
) -> None:
    """Whatever a CPU-only workload states (a gang smaller than its pods, NCCL variables, no /dev/shm, no queue),
    no GPU rule has a word to say about it."""
    container = {
        "name": "c",
        "image": "registry.example.com/app:1.0",
        "env": env,
        "resources": {"requests": {"cpu": "1"}},
    }
    template = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    objects: list[dict[str, Any]] = {
        "pytorch": [
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "PyTorchJob",
                "metadata": {"name": "j", "namespace": "t"},
                "spec": {
                    "runPolicy": {"schedulingPolicy": {"minAvailable": gang}},
                    "pytorchReplicaSpecs": {"Worker": {"replicas": replicas, "template": template}},
                },
            }
        ],
        "volcano": [
            {
                **VOLCANO_CPU_JOB,
                "spec": {"minAvailable": gang, "tasks": [{"name": "t", "replicas": replicas, "template": template}]},
            }
        ],
        "indexed": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j", "namespace": "t"},
                "spec": {
                    "completionMode": "Indexed",
                    "completions": replicas,
                    "parallelism": replicas,
                    "template": template,
                },
            }
        ],
        "podgroup": [
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "g", "namespace": "t"},
                "spec": {"minMember": gang},
            },
            *(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"p{i}",
                        "namespace": "t",
                        "annotations": {"scheduling.k8s.io/group-name": "g"},
                    },
                    "spec": {"schedulerName": "volcano", **template["spec"]},
                }
                for i in range(min(replicas, 4))
            ),
        ],
    }[kind]
    findings = _run(from_objects(objects), Settings(gang_scheduler=scheduler, production=True))
    assert [f for f in findings if f.rule not in GENERAL_RULES] == []


# --- privileged containers ----------------------------------------------------------------------


def daemonset(namespace: str) -> dict[str, Any]:
    """A node agent that needs the host: a privileged DaemonSet, as the GPU and Network Operators run theirs."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "containers": [
                        {
                            "name": "agent",
                            "image": "registry.example.com/agent:1.0",
                            "securityContext": {"privileged": True},
                        }
                    ]
                },
            },
        },
    }


def test_a_privileged_training_container_is_a_defect_naming_the_container() -> None:
    (finding,) = _run(*bad("privileged-containers"))
    assert (finding.rule, finding.enforcement) == ("privileged-containers", "mandatory")
    assert finding.message == "Worker/pytorch: runs privileged, with root on its node"


def test_node_agents_may_run_privileged_in_the_exempt_namespaces_only() -> None:
    from components.rules.config import settings

    assert rules.run(from_objects([daemonset("kube-system")]), settings()) == []
    assert rules.run(from_objects([daemonset("gpu-operator")]), settings()) == []
    (finding,) = rules.run(from_objects([daemonset("training")]), settings())
    assert finding.subject == "DaemonSet/training/agent" and finding.enforcement == "mandatory"
    # The setting replaces the default list: a cluster may exempt its own agents' namespace, or none at all.
    own = settings({"privileged-containers": {"exemptNamespaces": ["node-agents"]}})
    assert rules.run(from_objects([daemonset("node-agents")]), own) == []
    assert rules.run(from_objects([daemonset("kube-system")]), own)


def test_the_exempt_namespaces_must_be_a_list_of_names() -> None:
    from components.errors import ConfigError
    from components.rules.config import settings

    with pytest.raises(ConfigError, match=r"privileged-containers.exemptNamespaces: must be a list of namespace names"):
        settings({"privileged-containers": {"exemptNamespaces": "kube-system"}})


def test_a_privileged_rdma_worker_is_reported_once() -> None:
    objects = good("roce")
    workload = copy.deepcopy(objects[-1])
    for replica in workload["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    findings = _run(from_objects([*objects[:-1], workload]), Settings(gang_scheduler="volcano"))
    assert {f.rule for f in findings} == {"privileged-containers"}, "no second word from rdma-devices"


HEALTH = "gpu-pool-health-agent"


def _advised(subjects: list[Subject]) -> list[str]:
    return [f.subject for f in rules.run(subjects, Settings()) if f.rule == HEALTH]


def test_a_gpu_pool_without_a_health_agent_is_advised_offline() -> None:
    from tests.rules.corpus import pool

    plain = pool("roce")
    assert _advised(from_pools([plain], {plain.name: None})) == [f"NodePool/{plain.name}"]
    assert _advised(from_pools([plain], {plain.name: "NVSentinel ..."})) == []
    assert _advised(from_pools([plain])) == [], "nothing known about repair: nothing said"
    assert rules.by_id(HEALTH).enforcement == "advisory"


def test_a_gpu_pool_without_a_health_agent_is_advised_in_a_preview() -> None:
    from types import SimpleNamespace

    from components.rules.subjects import from_resources

    def resource(kind: str, props: dict[str, Any], name: str) -> SimpleNamespace:
        return SimpleNamespace(
            resource_type=kind, props=props, urn=f"urn:{name}", name=name, opts=None, dependencies=[]
        )

    group = {"amiType": "AL2023_x86_64_NVIDIA", "instanceTypes": ["p5.48xlarge"], "taints": []}
    node_group = "aws:eks/nodeGroup:NodeGroup"
    agent = resource("aws:eks/addon:Addon", {"addonName": "eks-node-monitoring-agent"}, "agent")
    assert _advised(from_resources([resource(node_group, group, "p5")])) == ["NodeGroup/p5"]
    assert _advised(from_resources([agent, resource(node_group, group, "p5")])) == ["NodeGroup/p5"], "detects only"
    repaired = resource(node_group, {**group, "nodeRepairConfig": {"enabled": True}}, "p5")
    assert _advised(from_resources([agent, repaired])) == []
    gke = {"nodeConfig": {"guestAccelerators": [{"count": 8}]}}
    gke_pool = "gcp:container/nodePool:NodePool"
    assert _advised(from_resources([resource(gke_pool, gke, "a3")])) == ["NodePool/a3"]
    assert _advised(from_resources([resource(gke_pool, {**gke, "management": {"autoRepair": True}}, "a3")])) == []
    sentinel = resource("kubernetes:helm.sh/v3:Release", {"chart": "oci://ghcr.io/nvidia/nvsentinel"}, "nvsentinel")
    assert _advised(from_resources([sentinel, resource(node_group, group, "p5")])) == []


def test_an_efa_pool_on_a_reservation_or_capacity_block_needs_no_placement_group() -> None:
    # The reservation brings its own placement; a placement group on top of it fails to launch.
    data = {"gpus": 8, "taints": [], "efa": True, "placement_group": False, "zones": 1}
    assert list(efa_placement(Subject("NodePool/b300", "NodePool", data), [], Settings()))
    assert not list(efa_placement(Subject("NodePool/b300", "NodePool", {**data, "reserved": True}), [], Settings()))
