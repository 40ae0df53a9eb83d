"""The node check's objects: RBAC to update nodes, the scripts, and a DaemonSet per pool that runs only on its
unchecked nodes, sees every GPU without requesting one, and is the one GPU pod that tolerates the startup taint."""

from __future__ import annotations

from typing import Any

from components import nodecheck, rules
from components.manifests import nodecheck as manifests
from components.manifests import trainingjob
from components.models.nodepool import NodeCheckSpec
from components.pool import Pool
from components.rules import Settings
from components.rules.subjects import from_objects
from components.wellknown import NODE_CHECK_KEY
from tests.support.factories import gb200, planned, pool
from tests.support.schemas import assert_valid


def check_of(p: Pool, access: nodecheck.GpuAccess = "default-runtime", **spec: Any) -> nodecheck.NodeCheck:
    found, issues = nodecheck.resolve(NodeCheckSpec.model_validate(spec), p, path="nodePools[0]", access=access)
    assert found is not None and not issues
    return found


def pod_spec(ds: dict[str, Any]) -> dict[str, Any]:
    return ds["spec"]["template"]["spec"]


def env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container["env"]}


def test_every_object_validates_and_comes_in_apply_order() -> None:
    objs = manifests.objects([check_of(pool("efa")), check_of(pool("tcpx"))])
    assert [o["kind"] for o in objs] == [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "DaemonSet",
        "DaemonSet",
    ]
    assert_valid(*objs)
    assert manifests.objects([]) == []


def test_the_verdict_may_only_read_and_update_nodes_and_post_events() -> None:
    rules_ = manifests.cluster_role()["rules"]
    assert {(r["resources"][0], tuple(r["verbs"])) for r in rules_} == {
        ("nodes", ("get", "patch")),
        ("nodes/status", ("get", "patch")),
        ("events", ("create",)),
    }


def test_on_karpenter_pools_the_verdict_may_also_find_and_delete_nodeclaims_and_is_told_to() -> None:
    """A failed Karpenter node goes only when its NodeClaim is deleted; nothing more is granted."""
    karpenter = check_of(pool("efa", provisioner="karpenter"))
    assert (
        karpenter.replaces_failed
        and env(pod_spec(manifests.daemonset(karpenter))["containers"][0])["REPLACE_FAILED"] == "nodeclaim"
    )
    role = next(o for o in manifests.objects([karpenter]) if o["kind"] == "ClusterRole")
    extra = [r for r in role["rules"] if r["apiGroups"] != [""]]
    assert extra == [{"apiGroups": ["karpenter.sh"], "resources": ["nodeclaims"], "verbs": ["list", "delete"]}]
    group = check_of(pool("efa", provisioner="nodegroup"))
    assert (
        not group.replaces_failed and env(pod_spec(manifests.daemonset(group))["containers"][0])["REPLACE_FAILED"] == ""
    )
    role = next(o for o in manifests.objects([group]) if o["kind"] == "ClusterRole")
    assert all(r["apiGroups"] == [""] for r in role["rules"])


def test_the_daemonset_runs_only_on_the_pools_nodes_that_wait_for_their_check() -> None:
    p = pool("efa")
    spec = pod_spec(manifests.daemonset(check_of(p)))
    assert spec["nodeSelector"] == {**p.node_selector, NODE_CHECK_KEY: "required"}
    (term,) = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": nodecheck.RESULT_LABEL, "operator": "DoesNotExist"}]
    tolerated = {(t["key"], t.get("value")) for t in spec["tolerations"]}
    assert (nodecheck.STARTUP_TAINT.key, "pending") in tolerated, "its own startup taint"
    assert (NODE_CHECK_KEY, "pending") in tolerated, "a node that joined under an earlier release's key"
    assert (NODE_CHECK_KEY, "failed") not in tolerated
    assert not {t["key"] for t in spec["tolerations"]} & {nodecheck.FAILED_TAINT.key}
    assert {(t.key, t.value) for t in p.taints} <= tolerated


def test_pulumi_does_not_wait_for_checks_that_run_whenever_a_node_joins() -> None:
    ds = manifests.daemonset(check_of(pool("efa")))
    assert ds["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}


def test_the_checks_request_no_resources_and_see_every_gpu_privileged() -> None:
    """An autoscaler counts a DaemonSet's requests, init containers included, as overhead of every new node: a
    check that requested the GPUs would leave no room for any job, and no node would ever be made."""
    spec = pod_spec(manifests.daemonset(check_of(pool("efa"))))
    gpu, nvlink = spec["initContainers"]
    (verdict,) = spec["containers"]
    assert not [c["name"] for c in (gpu, nvlink, verdict) if "resources" in c]
    for step in (gpu, nvlink):
        assert step["securityContext"] == {"privileged": True}
        assert env(step)["NVIDIA_VISIBLE_DEVICES"] == "all" and env(step)["NVIDIA_DRIVER_CAPABILITIES"] == "all"
    assert "securityContext" not in verdict and "NVIDIA_VISIBLE_DEVICES" not in env(verdict)
    assert gpu["image"] == nodecheck.DCGM_IMAGE and verdict["image"] == nodecheck.KUBECTL_IMAGE
    assert "runtimeClassName" not in spec, "the EKS AMI's default runtime is NVIDIA's"
    assert verdict["command"][-1] == "sh /etc/node-check/node-check.sh verdict && sh /etc/node-check/node-check.sh hold"
    assert gpu["command"][-1] == "sh /etc/node-check/node-check.sh gpu && sh /etc/node-check/node-check.sh nics"
    assert spec["hostNetwork"] is True and spec["dnsPolicy"] == "ClusterFirstWithHostNet"


def test_where_the_gpu_operator_brings_the_toolkit_the_check_runs_under_its_runtime_class() -> None:
    spec = pod_spec(manifests.daemonset(check_of(pool("roce"), access="runtime-class")))
    assert spec["runtimeClassName"] == nodecheck.RUNTIME_CLASS
    assert env(spec["initContainers"][0])["NVIDIA_VISIBLE_DEVICES"] == "all"


def test_the_verdict_is_told_the_pools_gpus_nics_and_floor() -> None:
    spec = pod_spec(manifests.daemonset(check_of(pool("efa"))))
    values = env(spec["containers"][0])
    assert values["EXPECT_GPUS"] == "8" and values["RDMA_COUNT"] == "32" and values["RDMA_NAMES"] == ""
    assert values["FLOOR_GBS"] == "270" and values["MAX_BYTES"] == str(8 * 2**30) and values["DCGM_LEVEL"] == "2"
    assert spec["containers"][0]["env"][0]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}


def test_the_gpu_step_is_told_whose_dcgm_engine_to_wait_for() -> None:
    found, _ = nodecheck.resolve(NodeCheckSpec(), pool("efa"), path="nodePools[0]", engine="gpu-operator")
    assert found is not None
    values = env(pod_spec(manifests.daemonset(found))["initContainers"][0])
    assert values["DCGM_ENGINE"] == "gpu-operator" and values["DCGM_WAIT"] == str(nodecheck.DCGM_WAIT_SECONDS)
    assert env(pod_spec(manifests.daemonset(check_of(pool("efa"))))["initContainers"][0])["DCGM_ENGINE"] == "private"


def test_gke_containers_mount_the_hosts_driver_where_gke_mounts_it_for_gpu_containers() -> None:
    spec = pod_spec(manifests.daemonset(check_of(pool("tcpx"), access="gke-host")))
    gpu = env(spec["initContainers"][0])
    assert gpu["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64" and gpu["PATH"].startswith("/usr/local/nvidia/bin")
    mounted = {m["name"]: m["mountPath"] for m in spec["initContainers"][0]["volumeMounts"]}
    host = {v["name"]: v.get("hostPath", {}).get("path") for v in spec["volumes"]}
    assert mounted["nvidia"] == "/usr/local/nvidia" and host["nvidia"] == nodecheck.GKE_DRIVER_DIR
    assert "runtimeClassName" not in spec
    assert env(spec["initContainers"][0])["NETDEVS"] == "eth1 eth2 eth3 eth4"
    assert "LD_LIBRARY_PATH" not in env(spec["containers"][0])


def test_one_gpu_nodes_skip_the_nvlink_test() -> None:
    spec = pod_spec(manifests.daemonset(check_of(pool("efa", name="p5s", instanceType="p5.4xlarge"))))
    assert [c["name"] for c in spec["initContainers"]] == ["gpu"]


def test_the_scripts_ship_together() -> None:
    assert set(manifests.configmap()["data"]) == {"node-check.sh", "node-verdict.sh", "nccl-verdict.sh"}


def findings(*objs: dict[str, Any]) -> list[str]:
    return [f.message for f in rules.run(from_objects(list(objs)), Settings()) if f.rule == "unverified-nodes"]


def test_the_check_itself_passes_review_and_a_job_that_tolerates_the_taint_does_not() -> None:
    assert not findings(*manifests.objects([check_of(pool("efa"))]))
    job = trainingjob.objects(planned("efa"))[-1]
    assert not findings(job), "a TrainingJob never tolerates the startup taint"
    template = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    template["tolerations"].append({"key": NODE_CHECK_KEY, "operator": "Exists", "effect": "NoSchedule"})
    assert findings(job) and "gpu-training/node-check=pending:NoSchedule" in findings(job)[0]


def test_a_tolerate_everything_toleration_is_found_too() -> None:
    job = trainingjob.objects(planned("efa"))[-1]
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["tolerations"] = [{"operator": "Exists"}]
    assert findings(job)


def test_rack_scale_pools_have_their_nvlink_fabric_registration_judged() -> None:
    rack = env(pod_spec(manifests.daemonset(check_of(gb200())))["containers"][0])
    assert rack["NVLINK_FABRIC"] == "1"
    assert env(pod_spec(manifests.daemonset(check_of(pool("efa"))))["containers"][0])["NVLINK_FABRIC"] == ""
