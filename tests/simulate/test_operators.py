"""The Training Operator v1 and the MPI Operator, real and configured as the dev stack configures them, run
the PyTorchJob and the MPIJob the dev stack emits.

dev gang-schedules with Volcano; here its scheduler is none (so neither operator is given a gang scheduler)
and kube-scheduler binds the pods the operators make to kwok nodes shaped like the h100 pool. Every assertion
reads the cluster: the pods, Services, ConfigMaps, Secrets and Jobs the operators created, the environment
they injected into the stored pod specs, the nodes the pods are bound to and the jobs' status conditions.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from components.render import Rendered, render
from components.resolution import resolve_file
from components.simulate import apply, mpi_operator, training_operator, volumes
from components.simulate.client import Client, ClientError, conditions_of
from components.simulate.controlplane import ControlPlane
from components.simulate.nodes import KWOK_ANNOTATION
from tests.simulate.conftest import cluster_of
from tests.support import diagnosis, waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0
SETTLE = 5.0
JOB_KINDS = ("Job", "PyTorchJob", "MPIJob", "TrainJob")
JOB_NAME = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
JOB_ROLE = "training.kubeflow.org/job-role"
POOL = "h100"
SYSTEM_NODE = "system-0"

T = TypeVar("T")


def _without_gang_scheduler(tmp_path: Path) -> Rendered:
    """dev, with no gang scheduler (Volcano is another test's), every job keeping its launcher."""

    def edit(config: dict[str, Any]) -> None:
        config["gpu-training:scheduler"] = {"type": "none"}
        for job in config["gpu-training:jobs"]:
            job.pop("scheduler", None)  # a Volcano queue

    return render(resolve_file(variant(REPO / "Pulumi.dev.yaml", tmp_path, edit)))


@pytest.fixture
def cluster(control_plane, kwok_binary, definitions, tmp_path) -> tuple[ControlPlane, Rendered]:
    """A cluster shaped like dev, both operators running, dev's objects other than jobs applied."""
    rendered = _without_gang_scheduler(tmp_path)
    assert training_operator.installed(rendered) and mpi_operator.installed(rendered)
    plane = cluster_of(control_plane, kwok_binary, definitions, rendered.stack)
    client = plane.client()
    client.apply(_system_node())
    training_operator.start(plane, rendered)
    mpi_operator.start(plane, rendered)
    rest = [o for o in rendered.objects if o["kind"] not in JOB_KINDS]
    refused = [o for o in apply.apply_all(client, rest + volumes.stand_ins(rest)) if not o.accepted and not o.skipped]
    assert not refused, refused
    waiting.claims_bound(client, wait=WAIT)
    return plane, rendered


def _system_node() -> dict[str, Any]:
    """A node with no GPU and no taint, as the existing cluster has for what is not a GPU pod (mpirun's launcher)."""
    resources = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": SYSTEM_NODE,
            "labels": {"kubernetes.io/hostname": SYSTEM_NODE, "kubernetes.io/os": "linux", "type": "kwok"},
            "annotations": {KWOK_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "status": {"capacity": resources, "allocatable": resources},
    }


def _until(plane: ControlPlane, what: str, check: Callable[[], T]) -> T:
    """check()'s first truthy value within WAIT; else fail with the operators' logs and the events."""
    return waiting.until(what, check, lambda: diagnosis.of(plane, None, "training-operator", "mpi-operator"), wait=WAIT)


def _job(rendered: Rendered, kind: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(next(o for o in rendered.objects if o["kind"] == kind and o["metadata"]["name"] == name))


def _pods(client: Client, job: dict[str, Any], selector: str = "") -> list[dict[str, Any]]:
    labels = f"{JOB_NAME}={job['metadata']['name']}" + (f",{selector}" if selector else "")
    return client.list("v1", "Pod", job["metadata"]["namespace"], labels)


def _running(pods: list[dict[str, Any]], count: int) -> list[dict[str, Any]] | None:
    ok = len(pods) == count and all(p["spec"].get("nodeName") and p["status"].get("phase") == "Running" for p in pods)
    return pods if ok else None


def _env(pod: dict[str, Any], container: str) -> dict[str, str]:
    spec = next(c for c in pod["spec"]["containers"] if c["name"] == container)
    return {e["name"]: e.get("value", "") for e in spec.get("env", [])}


def _conditions(client: Client, job: dict[str, Any]) -> dict[str, str]:
    stored = client.get(client.path_of(job)) or {}
    return {c["type"]: c["status"] for c in conditions_of(stored)}


def _delete(plane: ControlPlane, job: dict[str, Any]) -> None:
    client = plane.client()
    client.delete(job)
    _until(
        plane,
        f"{job['metadata']['name']} gone",
        lambda: client.get(client.path_of(job)) is None and not _pods(client, job),
    )


def test_the_training_operator_runs_the_pytorchjob_and_the_mpi_operator_the_mpijob(cluster) -> None:
    plane, rendered = cluster
    client = plane.client()

    # The API server calls the operator's validating webhook: a PyTorchJob with no container named
    # `pytorch` passes the CRD's schema but not the operator's validation.
    job = _job(rendered, "PyTorchJob", "llama-finetune")
    unnamed = copy.deepcopy(job)
    unnamed["metadata"]["name"] = "no-pytorch-container"
    for spec in unnamed["spec"]["pytorchReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0]["name"] = "trainer"
    with pytest.raises(ClientError, match=r"validator\.pytorchjob\.training-operator\.kubeflow\.org"):
        client.apply(unnamed)

    client.apply(job)
    pods = _until(plane, "4 llama-finetune pods Running", lambda: _running(_pods(client, job), 4))
    roles = sorted(p["metadata"]["labels"][REPLICA_TYPE] for p in pods)
    assert roles == ["master", "worker", "worker", "worker"]
    nodes = {p["spec"]["nodeName"] for p in pods}
    assert len(nodes) == 4 and all(n.startswith(f"{POOL}-") for n in nodes), nodes
    envs = {p["metadata"]["name"]: _env(p, "pytorch") for p in pods}
    for name, env in envs.items():
        assert env["MASTER_ADDR"] == "llama-finetune-master-0", name
        assert env["MASTER_PORT"] == "23456", name
        assert (env["WORLD_SIZE"], env["PET_NNODES"], env["PET_NPROC_PER_NODE"]) == ("32", "4", "8"), name
        assert env["PET_NODE_RANK"] == env["RANK"], name
    assert sorted(e["RANK"] for e in envs.values()) == ["0", "1", "2", "3"]
    assert envs["llama-finetune-master-0"]["RANK"] == "0"
    # The Service workers reach MASTER_ADDR through.
    assert client.get("/api/v1/namespaces/training/services/llama-finetune-master-0") is not None
    conditions = _until(
        plane, "llama-finetune Running", lambda: (c := _conditions(client, job)).get("Running") == "True" and c
    )
    assert conditions.get("Created") == "True"
    _delete(plane, job)

    mpi = _job(rendered, "MPIJob", "nccl-allreduce")
    client.apply(mpi)
    workers = _until(
        plane, "2 nccl-allreduce workers Running", lambda: _running(_pods(client, mpi, f"{JOB_ROLE}=worker"), 2)
    )
    nodes = {p["spec"]["nodeName"] for p in workers}
    assert len(nodes) == 2 and all(n.startswith(f"{POOL}-") for n in nodes), nodes
    # Workers answer (kwok makes them Ready), so under WaitForWorkersReady the launcher is made now.
    [launcher] = _until(
        plane, "the nccl-allreduce launcher Running", lambda: _running(_pods(client, mpi, f"{JOB_ROLE}=launcher"), 1)
    )
    assert launcher["spec"]["nodeName"] == SYSTEM_NODE
    launcher_job = client.get("/apis/batch/v1/namespaces/training/jobs/nccl-allreduce-launcher")
    assert launcher_job is not None
    assert launcher_job["spec"]["backoffLimit"] == mpi["spec"]["runPolicy"]["backoffLimit"]
    config = client.get("/api/v1/namespaces/training/configmaps/nccl-allreduce-config")
    assert config is not None
    hostfile = config["data"]["hostfile"]
    for index in range(2):
        assert f"nccl-allreduce-worker-{index}." in hostfile, hostfile
    assert "slots=8" in hostfile, hostfile
    secret = client.get("/api/v1/namespaces/training/secrets/nccl-allreduce-ssh")
    assert secret is not None and secret["type"] == "kubernetes.io/ssh-auth"
    _delete(plane, mpi)


def _restart(client: Client, pod: dict[str, Any], container: str, count: int) -> None:
    """Report what the kubelet reports once `container` has been restarted in place `count` times."""
    path = f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods/{pod['metadata']['name']}/status"
    for _ in range(10):
        stored = client.get(path)
        assert stored is not None, f"{pod['metadata']['name']} is gone"
        statuses = stored["status"].setdefault("containerStatuses", [])
        entry = next((s for s in statuses if s["name"] == container), None)
        if entry is None:
            image = next(c["image"] for c in stored["spec"]["containers"] if c["name"] == container)
            entry = {"name": container, "image": image, "imageID": "", "ready": True, "state": {"running": {}}}
            statuses.append(entry)
        entry["restartCount"] = count
        try:
            client.request("PUT", path, json.dumps(stored).encode(), "application/json")
            return
        except ClientError as exc:
            if exc.code != 409:  # another writer (kwok) in between: read again
                raise
    pytest.fail(f"could not report the restarts of {pod['metadata']['name']}")


_holds = functools.partial(waiting.holds, seconds=SETTLE)
"""check() stays true long enough for the operators to have reconciled what changed (tests/support/waiting.py)."""


def test_the_operators_fail_a_job_after_the_retries_the_stack_promises(cluster) -> None:
    """backoffLimit is whole-job retries: the PyTorchJob states it in container restarts of all its pods
    (OnFailure), the MPIJob as its launcher's retries (components/manifests/failure.py)."""
    plane, rendered = cluster
    client = plane.client()
    plan = next(j for j in rendered.stack.jobs if j.name == "llama-finetune")
    retries = plan.spec.backoff_limit
    assert retries > 1

    job = _job(rendered, "PyTorchJob", "llama-finetune")
    client.apply(job)
    pods = _until(plane, "4 llama-finetune pods Running", lambda: _running(_pods(client, job), 4))
    _until(plane, "llama-finetune Running", lambda: _conditions(client, job).get("Running") == "True")
    # Each fault stops every rank: torchrun's container in every pod restarts once.
    for fault in range(1, retries):
        for pod in pods:
            _restart(client, pod, "pytorch", fault)
    _holds(
        f"llama-finetune running after {retries - 1} whole-job retries",
        lambda: _conditions(client, job).get("Failed") != "True" and len(_pods(client, job)) == 4,
    )
    for pod in pods:
        _restart(client, pod, "pytorch", retries)
    _until(
        plane,
        f"llama-finetune Failed after {retries} retries",
        lambda: _conditions(client, job).get("Failed") == "True",
    )
    stored = client.get(client.path_of(job)) or {}
    [message] = [c["message"] for c in stored["status"]["conditions"] if c["type"] == "Failed"]
    assert "backoff limit" in message, message
    # cleanPodPolicy Running: ranks left hanging in collectives give their GPUs back.
    _until(plane, "the failed job's running pods deleted", lambda: not _pods(client, job))

    mpi = _job(rendered, "MPIJob", "nccl-allreduce")
    limit = mpi["spec"]["runPolicy"]["backoffLimit"]
    client.apply(mpi)
    _until(plane, "2 nccl-allreduce workers Running", lambda: _running(_pods(client, mpi, f"{JOB_ROLE}=worker"), 2))
    [launcher] = _until(
        plane, "the nccl-allreduce launcher Running", lambda: _running(_pods(client, mpi, f"{JOB_ROLE}=launcher"), 1)
    )
    launcher_job = "/apis/batch/v1/namespaces/training/jobs/nccl-allreduce-launcher"

    def failed(path: str) -> dict[str, Any] | None:
        stored = client.get(path) or {}
        return next(
            (c for c in conditions_of(stored) if c["type"] == "Failed" and c["status"] == "True"),
            None,
        )

    _restart(client, launcher, "launcher", limit - 1)
    _holds(
        f"nccl-allreduce running after {limit - 1} launcher retries",
        lambda: failed(launcher_job) is None and _conditions(client, mpi).get("Failed") != "True",
    )
    _restart(client, launcher, "launcher", limit)
    condition = _until(plane, f"the launcher's Job Failed after {limit} retries", lambda: failed(launcher_job))
    assert condition["reason"] == "BackoffLimitExceeded", condition
    _until(plane, "nccl-allreduce Failed", lambda: _conditions(client, mpi).get("Failed") == "True")
    _until(plane, "its workers deleted", lambda: not _pods(client, mpi, f"{JOB_ROLE}=worker"))
