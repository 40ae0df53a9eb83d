"""The Training Operator v1 and the MPI Operator, real and configured as the dev stack configures them, run
the PyTorchJob and the MPIJob the dev stack emits.

dev gang-schedules with Volcano; here its scheduler is none (so neither operator is given a gang scheduler)
and kube-scheduler binds the pods the operators make to kwok nodes shaped like the h100 pool. Every assertion
reads the cluster: the pods, Services, ConfigMaps, Secrets and Jobs the operators created, the environment
they injected into the stored pod specs, the nodes the pods are bound to and the jobs' status conditions.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from components.render import Rendered, render
from components.simulate import apply, mpi_operator, training_operator, volumes
from components.simulate.client import Client, ClientError
from components.simulate.controlplane import ControlPlane
from components.validation import resolve_file
from tests.simulate.conftest import cluster_of

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0
JOB_KINDS = ("Job", "PyTorchJob", "MPIJob", "TrainJob")
JOB_NAME = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
JOB_ROLE = "training.kubeflow.org/job-role"
POOL = "h100"

T = TypeVar("T")


def _without_gang_scheduler(tmp_path: Path) -> Rendered:
    """dev, with no gang scheduler (Volcano is another test's), every job keeping its launcher."""
    doc = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())
    doc["config"]["gpu-training:scheduler"] = {"type": "none"}
    for job in doc["config"]["gpu-training:jobs"]:
        job.pop("scheduler", None)  # a Volcano queue
    variant = tmp_path / "Pulumi.dev.yaml"
    variant.write_text(yaml.safe_dump(doc, sort_keys=False))
    return render(resolve_file(variant))


@pytest.fixture
def cluster(control_plane, kwok_binary, definitions, tmp_path) -> tuple[ControlPlane, Rendered]:
    """A cluster shaped like dev, both operators running, dev's objects other than jobs applied."""
    rendered = _without_gang_scheduler(tmp_path)
    assert training_operator.installed(rendered) and mpi_operator.installed(rendered)
    plane = cluster_of(control_plane, kwok_binary, definitions, rendered.stack)
    training_operator.start(plane, rendered)
    mpi_operator.start(plane, rendered)
    client = plane.client()
    rest = [o for o in rendered.objects if o["kind"] not in JOB_KINDS]
    refused = [o for o in apply.apply_all(client, rest + volumes.stand_ins(rest)) if not o.accepted and not o.skipped]
    assert not refused, refused
    _until(plane, "claims bound", lambda: all(c["status"].get("phase") == "Bound" for c in _claims(client)))
    return plane, rendered


def _claims(client: Client) -> list[dict[str, Any]]:
    return client.list("v1", "PersistentVolumeClaim")


def _until(plane: ControlPlane, what: str, check: Callable[[], T]) -> T:
    """check()'s first truthy value within WAIT; else fail with the operators' logs and the events."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.5)
    tails = [
        f"--- {name}.log\n" + "\n".join((plane.folder / f"{name}.log").read_text(errors="replace").splitlines()[-25:])
        for name in ("training-operator", "mpi-operator")
    ]
    events = [f"{e['involvedObject']['name']}: {e.get('message')}" for e in plane.client().list("v1", "Event")]
    pytest.fail(f"not {what} in {WAIT:.0f} s\n" + "\n".join(tails) + "\n--- events\n" + "\n".join(events[-15:]))


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
    return {c["type"]: c["status"] for c in stored.get("status", {}).get("conditions", [])}


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
    launchers = _until(plane, "the nccl-allreduce launcher", lambda: _pods(client, mpi, f"{JOB_ROLE}=launcher"))
    assert len(launchers) == 1
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
