"""Tests for planning a job on a pool: derived values, environment, and what stops a job from fitting."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import quantity
from components.errors import ConfigError, Issue
from components.fabric import FabricProfile
from components.manifests.plan import default_shm, job_issues, plan
from components.manifests.trainingjob import objects
from tests.support.factories import EFA_RESOURCES, job, planned, pool
from tests.support.schemas import assert_valid


def issue_at(issues: list[Issue], path: str) -> Issue:
    found = [i for i in issues if i.path == path]
    assert len(found) == 1, issues
    return found[0]


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(1, 16), gpus=st.integers(1, 8))
def test_world_size_is_nodes_times_gpus(nodes: int, gpus: int) -> None:
    p = plan(job(nodes=nodes, gpusPerNode=gpus), pool("tcp", maxNodes=16))
    assert (p.nodes, p.gpus_per_node, p.world_size) == (nodes, gpus, nodes * gpus)


def test_gpus_default_to_the_pools() -> None:
    assert planned().gpus_per_node == 8
    assert planned("efa").gpus_per_node == 8


def test_nodes_default_to_one_or_the_elastic_minimum() -> None:
    assert planned(nodes=None).nodes == 1
    assert planned(nodes=None, elastic={"minNodes": 3, "maxNodes": 4}).nodes == 3


def test_min_nodes_is_the_gang_size() -> None:
    assert planned(nodes=4).min_nodes == 4
    assert planned(nodes=3, elastic={"minNodes": 2, "maxNodes": 4}).min_nodes == 2


@pytest.mark.parametrize(
    ("gpus", "memory", "node_gib", "expected"),
    [
        (8, None, None, "64Gi"),
        (1, None, None, "8Gi"),
        (8, "512Gi", None, "64Gi"),
        (8, "64Gi", None, "32Gi"),
        (8, None, 2048, "64Gi"),
        (8, None, 96, "48Gi"),
        (4, "100Gi", 40, "20Gi"),
        (8, "100G", None, "46Gi"),
    ],
)
def test_default_shm(gpus: int, memory: str | None, node_gib: int | None, expected: str) -> None:
    assert default_shm(gpus, memory, node_gib) == expected


@settings(max_examples=50, deadline=None)
@given(
    gpus=st.integers(1, 16),
    memory_mi=st.none() | st.integers(128, 4 * 1024 * 1024),
    node_gib=st.none() | st.integers(1, 4096),
)
def test_default_shm_stays_within_its_caps(gpus: int, memory_mi: int | None, node_gib: int | None) -> None:
    memory = f"{memory_mi}Mi" if memory_mi is not None else None
    size = quantity.parse(default_shm(gpus, memory, node_gib))
    assert 0 < size <= gpus * 8 * 2**30
    if memory is not None:
        assert size <= quantity.parse(memory) / 2
    if node_gib is not None:
        assert size <= node_gib * 2**30 / 2


def test_explicit_shm_size_wins() -> None:
    assert planned(shmSize="100Gi").shm_size == "100Gi"


def test_restart_policy_defaults() -> None:
    assert planned().restart_policy == "OnFailure"
    assert planned(launcher="mpi").restart_policy == "OnFailure"
    assert planned(launcher="indexed").restart_policy == "Never"
    assert planned(launcher="indexed", restartPolicy="OnFailure").restart_policy == "OnFailure"


def test_queue_follows_the_scheduler() -> None:
    assert planned("tcp", "none", "research").queue is None
    assert planned("tcp", "volcano").queue == "default"
    assert planned("tcp", "volcano", "research").queue == "research"
    assert plan(job(scheduler={"queue": "urgent"}), pool("tcp"), "kueue", "research").queue == "urgent"


def test_python_is_dropped_for_torchrun_and_added_for_mpi_and_tensorflow() -> None:
    assert planned(command=["python", "train.py"]).program == ["train.py"]
    assert planned(launcher="indexed", command=["python3", "train.py"]).program == ["train.py"]
    assert planned(launcher="mpi", command=["train.py"]).program == ["python", "train.py"]
    assert planned(launcher="tensorflow", command=["train.py"]).program == ["python", "train.py"]
    assert planned(launcher="mpi", command=["python", "train.py"]).program == ["python", "train.py"]


# -- environment ------------------------------------------------------------------------------


def test_nccl_debug_defaults_to_warn() -> None:
    for fabric in ("tcp", "roce", "infiniband", "efa"):
        assert planned(fabric).env["NCCL_DEBUG"] == "WARN"


def test_fabric_env_is_in_the_job_env() -> None:
    env = planned("roce").env
    assert env["NCCL_IB_ADDR_RANGE"] == "192.168.10.0/24"
    assert env["NCCL_SOCKET_IFNAME"] == "net1"


def test_nccl_keys_become_nccl_variables() -> None:
    env = planned("roce", nccl={"debug": "INFO", "ibGidIndex": 5, "NCCL_BUFFSIZE": 8388608}).env
    assert env["NCCL_DEBUG"] == "INFO"
    assert env["NCCL_IB_GID_INDEX"] == "5"
    assert env["NCCL_BUFFSIZE"] == "8388608"
    assert "debug" not in env
    assert "ibGidIndex" not in env


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("debug", "NCCL_DEBUG"),
        ("ibHca", "NCCL_IB_HCA"),
        ("socketIfname", "NCCL_SOCKET_IFNAME"),
        ("NCCL_BUFFSIZE", "NCCL_BUFFSIZE"),
        ("P2P_NET_CHUNKSIZE", "NCCL_P2P_NET_CHUNKSIZE"),
    ],
)
def test_nccl_key_names(key: str, name: str) -> None:
    assert planned(nccl={key: "eth0"}).env[name] == "eth0"


def test_env_precedence_is_fabric_then_nccl_then_env() -> None:
    assert "NCCL_IB_GID_INDEX" not in planned("roce").env
    assert planned("roce", nccl={"ibAddrRange": "10.0.0.0/8"}).env["NCCL_IB_ADDR_RANGE"] == "10.0.0.0/8"
    assert planned("roce", nccl={"ibGidIndex": 5}).env["NCCL_IB_GID_INDEX"] == "5"
    both = planned("roce", nccl={"ibGidIndex": 5}, env={"NCCL_IB_GID_INDEX": "7"})
    assert both.env["NCCL_IB_GID_INDEX"] == "7"
    assert planned("roce", env={"NCCL_IB_GID_INDEX": "7"}).env["NCCL_IB_GID_INDEX"] == "7"


def test_env_overrides_nccl_debug() -> None:
    assert planned(nccl={"debug": "INFO"}, env={"NCCL_DEBUG": "TRACE"}).env["NCCL_DEBUG"] == "TRACE"


def test_env_values_are_strings() -> None:
    env = planned(env={"SEED": 42, "DETERMINISTIC": True}).env
    assert (env["SEED"], env["DETERMINISTIC"]) == ("42", "true")


# -- what stops a job from fitting ------------------------------------------------------------


def test_a_fitting_job_has_no_issues() -> None:
    assert job_issues(job(nodes=4), pool("tcp"), "jobs[0]") == []
    assert job_issues(job(nodes=4, resources=EFA_RESOURCES), pool("efa"), "jobs[0]") == []


def test_more_gpus_than_the_pool() -> None:
    issue = issue_at(job_issues(job(gpusPerNode=16), pool("tcp"), "jobs[2]"), "jobs[2].gpusPerNode")
    assert "16" in issue.message
    assert "h100" in issue.message
    assert "at most 8" in issue.message


def test_more_nodes_than_max_nodes() -> None:
    issue = issue_at(job_issues(job(nodes=5), pool("tcp"), "jobs[0]"), "jobs[0].nodes")
    assert "5 nodes" in issue.message
    assert "at most 4" in issue.message
    assert "maxNodes" in issue.message


def test_elastic_max_nodes_over_the_pool() -> None:
    issues = job_issues(job(nodes=2, elastic={"minNodes": 2, "maxNodes": 8}), pool("tcp"), "jobs[0]")
    issue = issue_at(issues, "jobs[0].elastic.maxNodes")
    assert "8 nodes" in issue.message
    assert not [i for i in issues if i.path == "jobs[0].nodes"]


@pytest.mark.parametrize(
    ("launcher", "command"),
    [
        ("pytorch", ["torchrun", "--nproc_per_node=8", "train.py"]),
        ("indexed", ["torchrun", "train.py"]),
        ("mpi", ["mpirun", "-np", "16", "python", "train.py"]),
    ],
)
def test_command_must_not_start_with_the_launchers_program(launcher: str, command: list[str]) -> None:
    issue = issue_at(job_issues(job(launcher=launcher, command=command), pool("tcp"), "jobs[0]"), "jobs[0].command")
    assert command[0] in issue.message


def test_tensorflow_command_is_not_checked_for_a_launcher() -> None:
    assert job_issues(job(launcher="tensorflow", command=["python", "train.py"]), pool("tcp")) == []


@pytest.mark.parametrize(
    ("fabric", "ifname"),
    [
        ("tcp", "eth0"),
        ("tcp", "eth"),
        ("tcp", "^lo,docker"),
        ("tcp", "=eth0"),
        ("roce", "net1"),
        ("roce", "eth0,net1"),
        ("efa", "eth0"),
    ],
)
def test_socket_ifname_of_an_interface_the_pod_has(fabric: str, ifname: str) -> None:
    resources = EFA_RESOURCES if fabric == "efa" else {}
    assert job_issues(job(nccl={"socketIfname": ifname}, resources=resources), pool(fabric)) == []
    assert job_issues(job(env={"NCCL_SOCKET_IFNAME": ifname}, resources=resources), pool(fabric)) == []


@pytest.mark.parametrize(("fabric", "ifname"), [("tcp", "net1"), ("tcp", "^eth"), ("tcp", "=eth"), ("roce", "ib0")])
def test_socket_ifname_via_nccl_naming_an_interface_the_pod_lacks(fabric: str, ifname: str) -> None:
    issues = job_issues(job(nccl={"socketIfname": ifname}), pool(fabric), "jobs[0]")
    issue = issue_at(issues, "jobs[0].nccl.socketIfname")
    assert ifname in issue.message
    assert "eth0" in issue.message


def test_socket_ifname_via_env_naming_an_interface_the_pod_lacks() -> None:
    issues = job_issues(job(env={"NCCL_SOCKET_IFNAME": "ib0"}), pool("tcp"), "jobs[0]")
    assert "ib0" in issue_at(issues, "jobs[0].env.NCCL_SOCKET_IFNAME").message


def test_socket_ifname_checked_is_the_one_the_pod_gets() -> None:
    # env overrides nccl, so the env value is the one NCCL will use and the one to check.
    spec = job(nccl={"socketIfname": "net1"}, env={"NCCL_SOCKET_IFNAME": "ib0"})
    issues = job_issues(spec, pool("roce"), "jobs[0]")
    assert "ib0" in issue_at(issues, "jobs[0].env.NCCL_SOCKET_IFNAME").message


@pytest.mark.parametrize("shm", ["64Gi", "128Gi", "65536Mi"])
def test_shm_size_at_or_over_the_memory(shm: str) -> None:
    issues = job_issues(job(shmSize=shm, resources={"memory": "64Gi"}), pool("tcp"), "jobs[0]")
    issue = issue_at(issues, "jobs[0].shmSize")
    assert shm in issue.message
    assert "64Gi" in issue.message


def test_shm_size_under_the_memory_is_fine() -> None:
    assert job_issues(job(shmSize="32Gi", resources={"memory": "64Gi"}), pool("tcp")) == []


def test_efa_job_must_take_the_whole_node() -> None:
    issues = job_issues(job(gpusPerNode=4), pool("efa"), "jobs[0]")
    issue = issue_at(issues, "jobs[0].gpusPerNode")
    assert "EFA" in issue.message
    assert "drop gpusPerNode" in issue.message


def test_efa_job_stating_the_nodes_gpus_is_fine() -> None:
    assert job_issues(job(gpusPerNode=8, resources=EFA_RESOURCES), pool("efa")) == []


def test_a_worker_on_a_known_machine_gets_the_machine_less_the_system_reserve() -> None:
    # p5.48xlarge: 192 vCPUs less 10 (5%), 2048 GiB less 204.8 (10%).
    p = plan(job(), pool("efa"))
    assert p.requests == {"cpu": "182", "memory": "1843Gi"}
    resources = objects(p)[0]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"]["memory"] == resources["limits"]["memory"] == "1843Gi"
    assert resources["requests"]["cpu"] == "182"
    assert p.shm_size == "64Gi", "8Gi per GPU fits in half the memory"


def test_a_worker_with_part_of_the_gpus_gets_that_share_of_the_machine() -> None:
    half = plan(job(gpusPerNode=4), pool("tcp", instanceType="p5.48xlarge", gpusPerNode=None))
    assert half.requests == {"cpu": "91", "memory": "921Gi"}


def test_a_stated_request_wins_and_the_other_is_derived() -> None:
    p = plan(job(resources={"memory": "512Gi"}), pool("efa"))
    assert p.requests == {"cpu": "182", "memory": "512Gi"}


def test_a_request_larger_than_the_machine_is_refused_with_the_default() -> None:
    issue = issue_at(job_issues(job(resources={"memory": "4Ti"}), pool("efa"), "jobs[0]"), "jobs[0].resources.memory")
    assert "more than a node of pool 'p5' advertises (1894.1 GiB of a p5.48xlarge's 2048 GiB)" in issue.message
    assert "ask for at most 1843Gi" in issue.message
    issue = issue_at(job_issues(job(resources={"cpu": "500"}), pool("efa"), "jobs[0]"), "jobs[0].resources.cpu")
    assert "(191.45 of a p5.48xlarge's 192 vCPUs)" in issue.message and "at most 182" in issue.message


def test_the_whole_machine_is_more_than_its_node_advertises() -> None:
    # The kubelet keeps 550m of a p5.48xlarge's 192 vCPUs: a worker asking all 192 never schedules.
    issue = issue_at(job_issues(job(resources={"cpu": "192"}), pool("efa"), "jobs[0]"), "jobs[0].resources.cpu")
    assert "advertises (191.45 of" in issue.message


def test_karpenter_launches_nothing_for_memory_past_its_vm_overhead() -> None:
    # Karpenter counts 7.5% of a p5.48xlarge's 2048 GiB as never visible, so 1900Gi fits none of its instance
    # types; a managed node group's node still has it.
    stated = job(resources={"memory": "1900Gi"})
    assert issue_at(job_issues(stated, pool("efa"), "jobs[0]"), "jobs[0].resources.memory")
    grouped = pool("efa", provisioner="nodegroup", minNodes=1)
    assert not [i for i in job_issues(stated, grouped, "jobs[0]") if i.path == "jobs[0].resources.memory"]


def test_an_unknown_machine_gets_no_requests() -> None:
    assert plan(job(), pool("tcp")).requests == {}


def test_a_request_beyond_an_unknown_machines_stated_allocatable_is_refused_and_none_is_judged_without_it() -> None:
    stated = pool("tcp", allocatable={"cpu": "190", "memory": "900Gi"})
    issue = issue_at(job_issues(job(resources={"memory": "1000Gi"}), stated, "jobs[0]"), "jobs[0].resources.memory")
    assert "advertises (900Gi, its allocatable.memory)" in issue.message
    assert not job_issues(job(resources={"memory": "1000Gi"}), pool("tcp"), "jobs[0]")
    assert not job_issues(job(resources={"memory": "800Gi", "cpu": "190"}), stated, "jobs[0]")


def test_a_worker_requesting_what_no_node_of_its_pool_advertises_is_refused() -> None:
    # As EFA workers once requested huge pages that Karpenter's nodes never have: Pending forever.
    wanting = FabricProfile(fabric="efa", resources={"vpc.amazonaws.com/efa": "32", "hugepages-2Mi": "5120Mi"})
    issue = issue_at(job_issues(job(), pool("efa"), "jobs[0]", fabric=wanting), "jobs[0].nodePool")
    assert "hugepages-2Mi" in issue.message and "advertises" in issue.message
    too_many = FabricProfile(fabric="efa", resources={"vpc.amazonaws.com/efa": "64"})
    issue = issue_at(job_issues(job(), pool("efa"), "jobs[0]", fabric=too_many), "jobs[0].nodePool")
    assert "more than a node of pool" in issue.message


def test_every_fabric_requests_only_what_its_pool_advertises() -> None:
    for fabric in ("efa", "roce", "infiniband", "tcp"):
        assert not [i for i in job_issues(job(), pool(fabric), "jobs[0]") if i.path == "jobs[0].nodePool"], fabric


def test_networks_of_another_namespace() -> None:
    issues = job_issues(job(namespace="research"), pool("roce"), "jobs[0]")
    issue = issue_at(issues, "jobs[0].namespace")
    assert "training/roce-network" in issue.message


def test_paths_without_a_prefix() -> None:
    assert [i.path for i in job_issues(job(nodes=5), pool("tcp"))] == ["nodes"]


def test_plan_raises_every_issue_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        plan(job(nodes=5, gpusPerNode=16, command=["torchrun", "train.py"]), pool("tcp"), path="jobs[1]")
    paths = {i.path for i in caught.value.issues}
    assert paths == {"jobs[1].nodes", "jobs[1].gpusPerNode", "jobs[1].command"}
    assert "jobs[1].nodes" in str(caught.value)


def test_planned_objects_validate() -> None:
    p = plan(
        job(nodes=4, nccl={"debug": "INFO", "ibGidIndex": 5}, env={"HF_HOME": "/data"}), pool("roce"), "volcano", None
    )
    assert_valid(*objects(p))


def test_a_multi_node_job_gets_at_least_1gi_of_shared_memory() -> None:
    issue = issue_at(job_issues(job(nodes=2, shmSize="1"), pool("tcp"), "jobs[0]"), "jobs[0].shmSize")
    assert issue.message == "/dev/shm would be 1, below the 1Gi a multi-node job needs: write a size such as 64Gi"
    issue = issue_at(
        job_issues(job(nodes=2, resources={"memory": "1Gi"}), pool("tcp"), "jobs[0]"), "jobs[0].resources.memory"
    )
    assert "raise the memory" in issue.message
    assert job_issues(job(nodes=1, shmSize="512Mi"), pool("tcp")) == []
