"""Tests for the MPIJob builder (MPI Operator v2beta1)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.manifests.gang import KUEUE_QUEUE_LABEL
from components.manifests.mpijob import mpijob, mpirun_args
from components.manifests.plan import plan
from tests.support.factories import EFA_RESOURCES, job, planned, pool
from tests.support.schemas import assert_valid


def mpi(fabric: str = "tcp", scheduler: str = "none", queue: str | None = None, **fields: Any) -> dict[str, Any]:
    return mpijob(planned(fabric, scheduler, queue, launcher="mpi", **fields))  # type: ignore[arg-type]


def replica(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return obj["spec"]["mpiReplicaSpecs"][role]


def pod_spec(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return replica(obj, role)["template"]["spec"]


def container(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return pod_spec(obj, role)["containers"][0]


def forwarded(args: list[str]) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == "-x"]


def np_of(args: list[str]) -> int:
    return int(args[args.index("-np") + 1])


def test_is_a_v2beta1_mpijob() -> None:
    obj = mpi(name="nccl-allreduce")
    assert (obj["apiVersion"], obj["kind"]) == ("kubeflow.org/v2beta1", "MPIJob")
    assert obj["metadata"]["name"] == "nccl-allreduce"


def test_slots_per_worker_are_the_gpus_per_node() -> None:
    assert mpi()["spec"]["slotsPerWorker"] == 8
    assert mpi(gpusPerNode=2)["spec"]["slotsPerWorker"] == 2


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(1, 16), gpus=st.integers(1, 8))
def test_one_rank_per_gpu_across_the_workers(nodes: int, gpus: int) -> None:
    obj = mpijob(plan(job(launcher="mpi", nodes=nodes, gpusPerNode=gpus), pool("tcp", maxNodes=16)))
    assert np_of(container(obj, "Launcher")["args"]) == nodes * gpus
    assert replica(obj, "Worker")["replicas"] == nodes
    assert replica(obj, "Launcher")["replicas"] == 1
    assert obj["spec"]["slotsPerWorker"] == gpus
    assert container(obj, "Worker")["resources"]["limits"]["nvidia.com/gpu"] == str(gpus)


def test_launcher_runs_mpirun_and_takes_no_gpu() -> None:
    launcher = container(mpi(nodes=2), "Launcher")
    assert launcher["command"] == ["mpirun"]
    resources = launcher["resources"]
    assert "nvidia.com/gpu" not in resources.get("requests", {})
    assert "nvidia.com/gpu" not in resources.get("limits", {})


@pytest.mark.parametrize("fabric", ["efa", "roce"])
def test_launcher_takes_no_fabric_devices(fabric: str) -> None:
    resources = container(mpi(fabric, nodes=2), "Launcher")["resources"]
    requested = {*resources.get("requests", {}), *resources.get("limits", {})}
    assert requested <= {"cpu", "memory"}


def test_launcher_is_not_pinned_to_the_gpu_pool() -> None:
    spec = pod_spec(mpi(nodes=2), "Launcher")
    assert "tolerations" not in spec
    assert "nodeSelector" not in spec


def test_launcher_has_no_multus_networks() -> None:
    template = replica(mpi("roce", nodes=2), "Launcher")["template"]
    assert "k8s.v1.cni.cncf.io/networks" not in template["metadata"].get("annotations", {})


def test_workers_run_sshd_with_the_gpus_on_the_pool() -> None:
    obj = mpi(nodes=3)
    worker = container(obj, "Worker")
    assert worker["command"] == ["/usr/sbin/sshd", "-De"]
    limits = worker["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == "8"
    assert worker["resources"]["requests"]["nvidia.com/gpu"] == "8"
    spec = pod_spec(obj, "Worker")
    assert spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in spec[
        "tolerations"
    ]


@pytest.mark.parametrize("fabric", ["tcp", "roce", "infiniband", "efa"])
def test_every_job_env_var_is_forwarded_to_the_ranks(fabric: str) -> None:
    p = plan(
        job(
            launcher="mpi",
            env={"HF_HOME": "/data/hf"},
            nccl={"NCCL_BUFFSIZE": 8388608},
            resources=EFA_RESOURCES if fabric == "efa" else {},
        ),
        pool(fabric),
        "none",
        None,
    )
    names = forwarded(mpirun_args(p))
    assert set(p.env) <= set(names)
    assert {"HF_HOME", "NCCL_BUFFSIZE", "NCCL_DEBUG", "NCCL_SOCKET_IFNAME"} <= set(names)


def test_efa_variables_are_forwarded() -> None:
    names = forwarded(container(mpi("efa"), "Launcher")["args"])
    assert {"FI_PROVIDER", "FI_EFA_USE_DEVICE_RDMA", "FI_EFA_FORK_SAFE"} <= set(names)


def test_launcher_carries_the_env_it_forwards() -> None:
    obj = mpi("roce", env={"HF_HOME": "/data/hf"})
    launcher = container(obj, "Launcher")
    env = {e["name"]: e["value"] for e in launcher["env"]}
    for name in forwarded(launcher["args"]):
        if name not in ("PATH", "LD_LIBRARY_PATH"):
            assert name in env


def test_a_python_script_gets_the_interpreter() -> None:
    args = container(mpi(command=["train.py", "--epochs=3"]), "Launcher")["args"]
    assert args[-3:] == ["python", "train.py", "--epochs=3"]


def test_an_explicit_interpreter_or_binary_is_kept() -> None:
    args = container(mpi(command=["python3", "train.py"]), "Launcher")["args"]
    assert args[-2:] == ["python3", "train.py"]
    assert "python" not in args
    binary = container(mpi(command=["/opt/nccl-tests/build/all_reduce_perf", "-b", "8"]), "Launcher")["args"]
    assert binary[-3:] == ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8"]


def test_the_program_comes_after_every_mpirun_flag() -> None:
    args = container(mpi(command=["train.py", "-x", "1"]), "Launcher")["args"]
    start = args.index("python")
    assert args[start:] == ["python", "train.py", "-x", "1"]
    assert "-np" in args[:start]


def test_volcano_gangs_the_workers_and_the_launcher_joins_them() -> None:
    obj = mpi("tcp", "volcano", "research", nodes=3)
    assert obj["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 3, "queue": "research"}
    assert pod_spec(obj, "Launcher")["schedulerName"] == "volcano"
    assert pod_spec(obj, "Worker")["schedulerName"] == "volcano"


def test_the_launcher_waits_for_ready_workers_under_every_scheduler_without_a_deadlock() -> None:
    # kubeflow/mpi-operator#608: with WaitForWorkersReady the launcher Pod is only created once the
    # workers are ready, so a PodGroup of workers + launcher would never be scheduled: the gang is the workers.
    for scheduler, queue in (("volcano", "research"), ("kueue", "research"), ("none", None)):
        obj = mpi("tcp", scheduler, queue, nodes=2)
        assert obj["spec"]["launcherCreationPolicy"] == "WaitForWorkersReady", scheduler
    volcano = mpi("tcp", "volcano", "research", nodes=2)
    assert volcano["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] == 2


def test_a_worker_is_ready_when_its_sshd_answers() -> None:
    worker = pod_spec(mpi("tcp", nodes=2), "Worker")["containers"][0]
    assert worker["command"] == ["/usr/sbin/sshd", "-De"]
    assert worker["readinessProbe"]["tcpSocket"] == {"port": 22}


def test_on_efa_mpirun_keeps_off_ucx_as_the_aws_reference_does() -> None:
    args = pod_spec(mpi("efa", nodes=2, resources={"memory": "1800Gi"}), "Launcher")["containers"][0]["args"]
    assert args[args.index("pml") - 1 : args.index("pml") + 2] == ["--mca", "pml", "^ucx"]
    assert "^ucx" not in pod_spec(mpi("roce", nodes=2), "Launcher")["containers"][0]["args"]


def test_failed_jobs_clean_up_their_running_pods() -> None:
    assert mpi("tcp", nodes=2)["spec"]["runPolicy"]["cleanPodPolicy"] == "Running"


def test_priority_class_reaches_the_gang_and_both_roles() -> None:
    obj = mpijob(plan(job(launcher="mpi", scheduler={"priorityClass": "high"}), pool("tcp"), "volcano", "research"))
    assert obj["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"] == "high"
    assert pod_spec(obj, "Launcher")["priorityClassName"] == "high"
    assert pod_spec(obj, "Worker")["priorityClassName"] == "high"


def test_kueue_labels_the_mpijob() -> None:
    obj = mpi("tcp", "kueue", "research")
    assert obj["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "research"
    assert "schedulingPolicy" not in obj["spec"]["runPolicy"]


def test_backoff_limit_goes_to_the_run_policy() -> None:
    assert mpi(backoffLimit=0)["spec"]["runPolicy"]["backoffLimit"] == 0


def test_deepspeed_flag_follows_the_program() -> None:
    args = container(mpi(deepspeed={"config": {"train_batch_size": 8}}), "Launcher")["args"]
    assert args[-1] == "--deepspeed_config=/etc/deepspeed/ds_config.json"


def test_an_mpirun_command_is_refused() -> None:
    with pytest.raises(ValueError, match="runs mpirun itself"):
        planned(launcher="mpi", command=["mpirun", "-np", "16", "python", "train.py"])


@pytest.mark.parametrize("fabric", ["tcp", "roce", "infiniband", "efa"])
@pytest.mark.parametrize("scheduler", ["none", "volcano", "kueue"])
def test_validates_against_the_mpijob_schema(fabric: str, scheduler: str) -> None:
    queue = "research" if scheduler != "none" else None
    obj = mpijob(
        plan(
            job(
                launcher="mpi",
                nodes=2,
                resources={"cpu": "32", "memory": "512Gi"},
                scheduler={"priorityClass": "high"},
                volumes=[{"claim": "training-checkpoints", "mountPath": "/checkpoints"}],
            ),
            pool(fabric),
            scheduler,  # type: ignore[arg-type]
            queue,
        )
    )
    assert_valid(obj)
