"""The fabric check's objects: scripts, headless Service, gang, and the Indexed Job with the pool's whole fabric."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from components import rules
from components.fabric import EFA_RESOURCE, MULTUS_ANNOTATION
from components.fabriccheck import IMAGES, SSH_PORT, FabricCheck
from components.fabriccheck import resolve as resolve_check
from components.manifests import fabriccheck
from components.manifests.gang import KUEUE_QUEUE_LABEL
from components.manifests.plan import SchedulerKind
from components.manifests.pod import GPU_RESOURCE
from components.models.nodepool import FabricCheckSpec
from components.rules import Settings
from components.rules.subjects import from_objects, from_pools
from tests.support.factories import checked, pool
from tests.support.schemas import assert_valid


def by_kind(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objs}


def container(job: dict[str, Any]) -> dict[str, Any]:
    return job["spec"]["template"]["spec"]["containers"][0]


def env(job: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container(job)["env"]}


def test_an_efa_pool_is_tested_with_all_its_efa_devices_and_tolerations_and_no_huge_pages() -> None:
    check = checked("efa", minBusBandwidth=123)
    job = fabriccheck.job(check)
    body = container(job)
    limits = body["resources"]["limits"]
    assert limits[GPU_RESOURCE] == "8"
    assert limits[EFA_RESOURCE] == "32"
    assert not [r for r in limits if r.startswith("hugepages-")], "no node of ours advertises huge pages"
    assert body["resources"]["requests"] == limits
    variables = env(job)
    assert variables["FI_PROVIDER"] == "efa"
    assert variables["FI_EFA_USE_HUGE_PAGE"] == "0"
    # ADT's tuning: the aws-ofi-nccl tuner (in this image), and its buffer and chunk sizes.
    assert variables["NCCL_TUNER_PLUGIN"] == "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so"
    assert (variables["NCCL_BUFFSIZE"], variables["NCCL_P2P_NET_CHUNKSIZE"]) == ("8388608", "524288")
    # The tuner stands aside when either is set (aws/aws-ofi-nccl v1.16.3 src/tuner/nccl_ofi_tuner.cpp).
    assert not {"NCCL_ALGO", "NCCL_PROTO"} & variables.keys(), "the tuner picks algorithm and protocol"
    assert variables["FLOOR_GBS"] == "123"
    assert variables["NETWORKS"] == "Libfabric,AWS Libfabric,OFI"
    assert variables["MIN_NCCL"] == "", "EFA sets no RoCE GID: any NCCL"
    assert variables["NCCL_DEBUG"] == "INFO", "the network NCCL picks shows at INFO"
    pod = job["spec"]["template"]["spec"]
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in pod["tolerations"]
    assert pod["nodeSelector"] == {"gpu-training/pool": "p5"}
    assert body["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert body["image"] == IMAGES["efa"].image
    assert variables["MPIRUN"] == "/opt/amazon/openmpi/bin/mpirun"
    assert variables["MPI_ARGS"].startswith("--mca pml ^ucx --mca btl tcp,self"), "as ADT's nccl-tests MPIJob"


def test_the_job_is_indexed_fails_on_any_pod_and_has_a_deadline() -> None:
    check = checked("efa", timeoutMinutes=45)
    job = fabriccheck.job(check)
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == 2
    assert spec["backoffLimit"] == 0
    assert spec["activeDeadlineSeconds"] == 45 * 60
    assert job["metadata"]["annotations"] == {"pulumi.com/replaceUnready": "true"}, "a failed gate runs again"
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["subdomain"] == check.name
    assert container(job)["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert container(job)["command"] == ["sh", "/etc/fabric-check/scripts/fabric-check.sh"]
    variables = env(job)
    assert variables["TEST"] == "/opt/nccl-tests/build/all_reduce_perf"
    assert variables["TEST_ARGS"] == "-b 1M -e 8G -f 2 -g 1 -c 1 -w 5 -n 20"
    assert variables["MAX_BYTES"] == str(8 * 2**30)
    assert variables["RANKS"] == "16"
    assert variables["LOGS"] == "kubectl logs -n training job/fabric-check-p5"


def test_the_scripts_and_the_key_are_mounted_and_the_service_names_the_pods() -> None:
    check = checked("efa")
    objs = by_kind(fabriccheck.objects(check))
    assert set(objs) == {"ConfigMap", "Service", "Job"}
    assert objs["ConfigMap"]["data"] == {name: fabriccheck.script(name) for name in fabriccheck.SCRIPTS}
    service = objs["Service"]["spec"]
    assert service["clusterIP"] == "None" and service["publishNotReadyAddresses"] is True
    assert service["ports"] == [{"name": "ssh", "port": SSH_PORT, "targetPort": SSH_PORT, "protocol": "TCP"}]
    pod = objs["Job"]["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["scripts"]["configMap"]["name"] == fabriccheck.scripts_name(check)
    assert volumes["ssh"]["secret"] == {"secretName": fabriccheck.ssh_secret_name(check), "defaultMode": 0o400}
    secret = fabriccheck.ssh_secret(check, "PRIVATE", "PUBLIC")
    assert secret["stringData"] == {"id_ed25519": "PRIVATE", "id_ed25519.pub": "PUBLIC"}


def test_under_volcano_the_gate_is_one_gang_and_under_kueue_it_queues() -> None:
    volcano = by_kind(fabriccheck.objects(checked("efa", scheduler="volcano")))
    assert volcano["PodGroup"]["spec"]["minMember"] == 2
    template = volcano["Job"]["spec"]["template"]
    assert template["spec"]["schedulerName"] == "volcano"
    assert template["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "fabric-check-p5"
    kueue = by_kind(fabriccheck.objects(checked("efa", scheduler="kueue", queue="research")))
    assert "PodGroup" not in kueue
    assert kueue["Job"]["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "research"


def test_a_roce_pool_is_tested_on_its_rails_with_nccls_own_ib_transport() -> None:
    job = fabriccheck.job(checked("roce"))
    template = job["spec"]["template"]
    assert template["metadata"]["annotations"][MULTUS_ANNOTATION] == "roce-network@net1"
    variables = env(job)
    assert variables["NCCL_NET_PLUGIN"] == "none", "the image's SHARP plugin stays out"
    assert variables["NCCL_IB_DISABLE"] == "0"
    assert "NCCL_IB_HCA" in variables["FORWARD"].split()
    # No NCCL_IB_GID_INDEX, so the verdict fails a log whose NCCL is older than 2.21 (or states none).
    assert "NCCL_IB_GID_INDEX" not in variables and variables["MIN_NCCL"] == "2.21"
    assert env(fabriccheck.job(checked("infiniband")))["MIN_NCCL"] == "", "InfiniBand needs no GID choice"


def test_a_gke_tcpxo_pool_gets_the_rxdm_sidecar_and_its_interfaces() -> None:
    job = fabriccheck.job(checked("tcpxo"))
    pod = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod.get("initContainers", [])] == ["tcpxo-daemon"]
    assert "networking.gke.io/interfaces" in job["spec"]["template"]["metadata"]["annotations"]
    assert env(job)["NETWORKS"] == "FasTrak*,GPUDirectTCPXO*"


def test_the_pod_template_carries_the_fingerprint_so_a_change_reruns_the_gate() -> None:
    check = checked("efa")
    annotations = fabriccheck.job(check)["spec"]["template"]["metadata"]["annotations"]
    assert annotations[fabriccheck.FINGERPRINT_ANNOTATION] == check.fingerprint()


@pytest.mark.parametrize("fabric", ["efa", "roce", "infiniband", "tcpx", "tcpxo", "rdma"])
@pytest.mark.parametrize("scheduler", ["none", "volcano", "kueue"])
def test_every_object_validates(fabric: str, scheduler: str) -> None:
    check = checked(fabric, scheduler=scheduler, queue="research" if scheduler == "kueue" else None)  # type: ignore[arg-type]
    assert_valid(*fabriccheck.objects(check), fabriccheck.ssh_secret(check, "key", "key.pub"))


@pytest.mark.parametrize("fabric", ["efa", "roce", "infiniband", "tcpx", "tcpxo", "rdma"])
def test_every_gate_passes_every_mandatory_rule(fabric: str) -> None:
    # A gate pod is a GPU workload like any: e.g. an env value a shell should expand but no shell runs.
    check = checked(fabric)
    subjects = from_objects(fabriccheck.objects(check)) + from_pools([check.pool])
    assert [str(f) for f in rules.run(subjects, Settings()) if f.enforcement == "mandatory"] == []


def test_the_tuner_is_set_only_where_the_image_is_known_to_carry_it() -> None:
    own = env(fabriccheck.job(checked("efa", minBusBandwidth=123, image="registry.example.com/my-nccl-tests:v1")))
    assert "NCCL_TUNER_PLUGIN" not in own
    assert own["NCCL_BUFFSIZE"] == "8388608", "the EFA defaults stay"


def scale_up(scheduler: SchedulerKind = "volcano") -> FabricCheck:
    """The fabric check of an EFA pool that scales from zero."""
    found, _, issues = resolve_check(FabricCheckSpec(), pool("efa"), scheduler, "research", path="nodePools[0]")
    assert found is not None and not issues and found.when == "scale-up"
    return found


def test_a_scale_up_check_ships_its_job_in_a_template_and_a_watcher_that_runs_it() -> None:
    check = scale_up()
    objs = fabriccheck.objects(check)
    assert [o["kind"] for o in objs] == [
        "ConfigMap", "Service", "ConfigMap", "ServiceAccount", "Role", "RoleBinding", "ClusterRole",
        "ClusterRoleBinding", "CronJob",
    ]  # fmt: skip
    assert_valid(*objs)
    waiting = list(yaml.safe_load_all(fabriccheck.template(check)["data"][fabriccheck.TEMPLATE_KEY]))
    assert waiting == fabriccheck.run(check), "the same PodGroup and Job a deploy-time gate runs"
    assert [o["kind"] for o in waiting] == ["PodGroup", "Job"]
    assert fabriccheck.WATCH_SCRIPT in fabriccheck.configmap(check)["data"]
    assert fabriccheck.WATCH_SCRIPT not in fabriccheck.configmap(checked("efa"))["data"]


def test_the_watcher_counts_checked_nodes_of_the_pool_and_keeps_to_its_rights() -> None:
    check = scale_up()
    *rbac, cron = fabriccheck.watcher(check)
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["NODE_SELECTOR"] == "gpu-training/pool=p5,gpu-training/node-check-result=passed"
    assert env["NODES"] == "2" and env["FINGERPRINT"] == check.fingerprint() and env["JOB"] == "fabric-check-p5"
    assert env["RESULT"] == "fabric-check-p5-result"
    assert cron["spec"]["concurrencyPolicy"] == "Forbid" and pod["restartPolicy"] == "Never"
    role = next(o for o in rbac if o["kind"] == "Role")
    granted = {(r["resources"][0], v) for r in role["rules"] for v in r["verbs"]}
    assert ("jobs", "create") in granted and ("podgroups", "create") in granted and ("configmaps", "patch") in granted
    assert not [r for r in role["rules"] if "secrets" in r["resources"]], "the key is mounted, never read"
    cluster = next(o for o in rbac if o["kind"] == "ClusterRole")
    assert cluster["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]
    kueue = fabriccheck.watcher(scale_up("kueue"))[1]
    assert not [r for r in kueue["rules"] if "podgroups" in r["resources"]], "Kueue's gate has no PodGroup"
