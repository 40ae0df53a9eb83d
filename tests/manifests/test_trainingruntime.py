"""Tests for the training runtimes: each pool's ClusterTrainingRuntimes, and a job's own TrainingRuntime."""

from __future__ import annotations

from typing import Any

import pytest

from components.manifests.plan import plan
from components.manifests.trainingruntime import (
    ANCESTOR_LABEL,
    MPI_SSH_DIR,
    SSHD_PORT,
    TF_PORT,
    choose_runtime,
    cluster_runtime,
    job_runtime,
    pool_runtimes,
)
from components.models import TrainingJobSpec
from components.versions import TRAINER_TENSORFLOW_IMAGE
from tests.support.factories import job, pool, with_topology, with_trainer
from tests.support.schemas import assert_valid

FABRICS = ["tcp", "roce", "infiniband", "efa", "tcpx", "tcpxo", "rdma"]


def replicated(runtime: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def pod(runtime: dict[str, Any], name: str = "node") -> dict[str, Any]:
    return replicated(runtime)[name]["template"]["spec"]["template"]


def node_container(runtime: dict[str, Any], name: str = "node") -> dict[str, Any]:
    (container,) = [c for c in pod(runtime, name)["spec"]["containers"] if c["name"] == "node"]
    return container


def env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container["env"]}


@pytest.mark.parametrize("scheduler", ["volcano", "kueue", "none"])
@pytest.mark.parametrize("runtime", ["torch", "deepspeed", "mpi", "tensorflow"])
@pytest.mark.parametrize("fabric", FABRICS)
def test_every_pool_runtime_validates(fabric: str, runtime: str, scheduler: str) -> None:
    assert_valid(cluster_runtime(with_trainer(pool(fabric)), runtime, scheduler))


def test_a_roce_runtime_carries_the_pools_fabric_shm_and_gang_policy() -> None:
    runtime = cluster_runtime(with_trainer(pool("roce")), "torch", "volcano")
    assert runtime["kind"] == "ClusterTrainingRuntime"
    assert runtime["metadata"]["name"] == "h100-torch"
    assert runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 1, "torch": {}}
    node = replicated(runtime)["node"]
    assert node["template"]["metadata"]["labels"][ANCESTOR_LABEL] == "trainer"
    template = pod(runtime)
    assert template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "roce-network@net1"
    spec = template["spec"]
    assert spec["schedulerName"] == "volcano"
    assert any(t["key"] == "nvidia.com/gpu" for t in spec["tolerations"])
    assert spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}} in spec["volumes"]
    container = node_container(runtime)
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert container["resources"]["limits"]["rdma/rdma_shared_device_a"] == "1"
    assert "IPC_LOCK" in container["securityContext"]["capabilities"]["add"]
    values = env(container)
    assert values["NCCL_IB_DISABLE"] == "0"
    assert values["NCCL_SOCKET_IFNAME"] == "net1"
    assert "command" not in container, "the TrainJob gives the command"
    assert "app.kubernetes.io/instance" not in template["metadata"]["labels"], "a pool runtime is no one job's"


def test_a_failed_rank_restarts_the_whole_jobset() -> None:
    spec = cluster_runtime(with_trainer(pool("tcp")), "torch", "none")["spec"]["template"]["spec"]
    assert spec["failurePolicy"]["maxRestarts"] == 3
    assert spec["failurePolicy"]["restartStrategy"] == "Recreate"
    assert replicated({"spec": {"template": {"spec": spec}}})["node"]["template"]["spec"]["backoffLimit"] == 0
    assert pod({"spec": {"template": {"spec": spec}}})["spec"]["restartPolicy"] == "Never"


@pytest.mark.parametrize("runtime", ["torch", "deepspeed", "mpi"])
def test_a_node_fault_fails_its_child_job_by_policy_and_restarts_the_jobset_without_using_up_a_retry(
    runtime: str,
) -> None:
    spec = cluster_runtime(with_trainer(pool("roce")), runtime, "kueue")["spec"]["template"]["spec"]
    # Every child Job fails by its podFailurePolicy (reason PodFailurePolicy) when a pod is disrupted ...
    for child in spec["replicatedJobs"]:
        assert child["template"]["spec"]["podFailurePolicy"] == {
            "rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
        }
        assert child["template"]["spec"]["template"]["spec"]["restartPolicy"] == "Never", "a podFailurePolicy needs it"
    # ... and only that reason restarts the JobSet uncounted; any other failure falls to RestartJobSet (counted).
    assert spec["failurePolicy"]["rules"] == [
        {
            "name": "NodeFault",
            "action": "RestartJobSetAndIgnoreMaxRestarts",
            "onJobFailureReasons": ["PodFailurePolicy"],
        }
    ]


def test_a_job_with_its_own_retries_gets_them_in_its_own_runtime() -> None:
    job_plan = plan(job(launcher="trainjob", backoffLimit=7), with_trainer(pool("tcp")), "none")
    choice = choose_runtime(job_plan)
    assert choice.ref["kind"] == "TrainingRuntime", "a TrainJob cannot patch its runtime's failurePolicy"
    runtime = job_runtime(job_plan)
    assert runtime["spec"]["template"]["spec"]["failurePolicy"]["maxRestarts"] == 7
    assert_valid(runtime)


def test_an_efa_runtime_requests_every_efa_device_and_the_machines_share() -> None:
    container = node_container(cluster_runtime(with_trainer(pool("efa")), "torch", "kueue"))
    limits = container["resources"]["limits"]
    assert limits["vpc.amazonaws.com/efa"] == "32"
    assert "hugepages-2Mi" not in limits
    assert {"cpu", "memory"} <= limits.keys()


def test_a_tcpxo_runtime_runs_the_rxdm_sidecar_natively() -> None:
    template = pod(cluster_runtime(with_trainer(pool("tcpxo")), "torch", "kueue"))
    sidecars = template["spec"]["initContainers"]
    assert [s["restartPolicy"] for s in sidecars] == ["Always"]
    assert "networking.gke.io/interfaces" in template["metadata"]["annotations"]


def test_kueue_runtimes_have_no_pod_group_policy() -> None:
    assert "podGroupPolicy" not in cluster_runtime(with_trainer(pool("tcp")), "torch", "kueue")["spec"]


def test_the_mpi_runtimes_run_the_launcher_as_a_node_after_the_nodes_sshd_is_ready() -> None:
    runtime = cluster_runtime(with_trainer(pool("roce")), "deepspeed", "volcano")
    assert runtime["spec"]["mlPolicy"]["numNodes"] == 1, "one launcher: Trainer sizes its Job by this"
    mpi = runtime["spec"]["mlPolicy"]["mpi"]
    assert mpi == {
        "numProcPerNode": 8,
        "mpiImplementation": "OpenMPI",
        "sshAuthMountPath": MPI_SSH_DIR,
        "runLauncherAsNode": True,
    }
    jobs = replicated(runtime)
    assert list(jobs) == ["node", "launcher"]
    assert jobs["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert jobs["launcher"]["template"]["metadata"]["labels"][ANCESTOR_LABEL] == "trainer"
    assert ANCESTOR_LABEL not in jobs["node"]["template"].get("metadata", {}).get("labels", {})
    spec = runtime["spec"]["template"]["spec"]
    assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    assert spec["network"] == {"publishNotReadyAddresses": True}
    node = node_container(runtime, "node")
    assert node["command"][0] == "/usr/sbin/sshd"
    assert node["readinessProbe"]["tcpSocket"]["port"] == SSHD_PORT
    assert node["securityContext"]["runAsUser"] == 1000
    for name in ("node", "launcher"):  # both are GPU nodes on the fabric
        container = node_container(runtime, name)
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"
        assert "IPC_LOCK" in container["securityContext"]["capabilities"]["add"]
        assert "k8s.v1.cni.cncf.io/networks" in pod(runtime, name)["metadata"]["annotations"]


def test_a_one_node_pool_gets_only_the_runtimes_without_a_launcher() -> None:
    # An MPI TrainJob runs its launcher beside at least one node pod: two nodes.
    assert pool_runtimes(pool("tcp", maxNodes=1)) == ("torch", "tensorflow")
    assert pool_runtimes(pool("tcp")) == ("torch", "deepspeed", "mpi", "tensorflow")


def test_under_volcano_a_pool_with_a_topology_prefers_its_finest_shared_level() -> None:
    runtime = cluster_runtime(with_topology(with_trainer(pool("efa"))), "torch", "volcano")
    assert runtime["spec"]["podGroupPolicy"]["volcano"]["networkTopology"] == {"mode": "soft", "highestTierAllowed": 1}


def spec(**fields: Any) -> TrainingJobSpec:
    return job(launcher="trainjob", **fields)


def test_a_plain_job_runs_on_its_pools_runtime() -> None:
    assert choose_runtime(plan(spec(), with_trainer(pool("roce")), "volcano")).reasons == ()


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"runtime": "deepspeed"}, "runtime's"),
        ({"scheduler": {"priorityClass": "training-high"}}, "priority class"),
        ({"backoffLimit": 0}, "restarts up to 0"),
    ],
)
def test_a_job_the_pool_runtime_cannot_carry_gets_its_own(fields: dict[str, Any], reason: str) -> None:
    job_plan = plan(spec(**fields), with_trainer(pool("roce")), "volcano")
    (found,) = choose_runtime(job_plan).reasons
    assert reason in found
    own = job_runtime(job_plan)
    assert own["kind"] == "TrainingRuntime"
    assert (own["metadata"]["namespace"], own["metadata"]["name"]) == ("training", "train")
    assert_valid(own)


def test_volcano_places_a_job_with_its_own_topology_through_its_own_runtime() -> None:
    job_plan = plan(
        spec(topology={"mode": "required", "level": "layer-2"}, resources={"memory": "1800Gi"}),
        with_topology(with_trainer(pool("efa"))),
        "volcano",
    )
    assert choose_runtime(job_plan).reasons == ("Volcano places it by its own topology",)
    network = job_runtime(job_plan)["spec"]["podGroupPolicy"]["volcano"]["networkTopology"]
    assert network == {"mode": "hard", "highestTierAllowed": 2}


def test_a_pool_without_runtimes_makes_every_job_bring_its_own() -> None:
    # A workloads stack whose platform has no Trainer runtimes for the pool.
    assert choose_runtime(plan(spec(), pool("tcp"), "none")).reasons == ("pool 'h100' has no torch runtime",)


def test_the_tensorflow_runtime_is_plain_ml_one_node_job_on_the_pools_fabric() -> None:
    runtime = cluster_runtime(with_trainer(pool("roce")), "tensorflow", "volcano")
    assert runtime["metadata"]["name"] == "h100-tensorflow"
    assert runtime["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "tensorflow"
    # No torch or mpi policy: Trainer's PlainML plugin runs it, sized by the TrainJob's numNodes.
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 1}
    assert set(replicated(runtime)) == {"node"}
    assert replicated(runtime)["node"]["template"]["metadata"]["labels"] == {ANCESTOR_LABEL: "trainer"}
    container = node_container(runtime)
    assert container["image"] == TRAINER_TENSORFLOW_IMAGE
    assert container["ports"] == [{"name": "tfjob-port", "containerPort": TF_PORT, "protocol": "TCP"}]
    variables = env(container)
    # The fabric's NCCL settings (TensorFlow's collectives use NCCL on GPUs); torch's watchdog is torch's own.
    assert variables["NCCL_DEBUG"] == "WARN" and "NCCL_IB_HCA" in variables
    assert not [name for name in variables if name.startswith(("TORCH_", "PET_"))]
    assert "runAsUser" not in container.get("securityContext", {}), "no sshd: the job's own user"
    assert "k8s.v1.cni.cncf.io/networks" in pod(runtime)["metadata"]["annotations"]
    assert_valid(runtime)


def test_the_torch_runtime_restarts_ranks_in_place_three_times_as_the_pytorch_launcher() -> None:
    runtime = cluster_runtime(with_trainer(pool("roce")), "torch", "volcano")
    assert env(node_container(runtime))["PET_MAX_RESTARTS"] == "3"
    for other in ("deepspeed", "mpi", "tensorflow"):
        assert "PET_MAX_RESTARTS" not in env(node_container(cluster_runtime(with_trainer(pool("roce")), other, "none")))
