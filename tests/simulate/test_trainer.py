"""Kubeflow Trainer v2 and JobSet, the real controllers, running the dev stack's TrainJobs on kwok nodes.

Both managers run out of cluster as the stack's kubeflow-trainer chart configures them, with their admission
webhooks (components/simulate/trainer.py, jobset.py). The dev stack's gang scheduler (Volcano) is not part of
this test, so the stack runs with none and the default kube-scheduler places the pods; the TrainJobs, the
pool's ClusterTrainingRuntimes and everything else are what `render` emits. Each assertion reads the
cluster: the JobSet Trainer made, the Jobs JobSet made, the pods the Job controller made and the scheduler
bound, the pod specs as the API server stored them, and the TrainJob's status.
"""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.render import Rendered, render
from components.resolution import resolve_file
from components.simulate import apply, controlplane, jobset, trainer, volumes
from components.simulate.client import Client, ClientError, conditions_of, status_of
from tests.simulate.conftest import cluster_of
from tests.support import diagnosis, jobsets, waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0
JOB_KINDS = ("Job", "PyTorchJob", "MPIJob", "TrainJob")
POOL = "h100"


TF_JOB = {
    "name": "tf-mnist",
    "launcher": "trainjob",
    "runtime": "tensorflow",
    "image": "registry.example.com/tensorflow:2.20",
    "command": ["train.py", "--epochs=1"],
    "nodes": 2,
    "nodePool": POOL,
}
"""A TFJob moved to Trainer: the dev stack has none, so the test's variant adds it (applied only where used)."""


def _dev_without_gang_scheduler(tmp_path: Path) -> Rendered:
    """The dev stack with no gang scheduler (so no queue on its jobs); its jobs' launchers kept, and a tensorflow
    TrainJob added."""

    def edit(config: dict[str, Any]) -> None:
        config["gpu-training:scheduler"] = {"type": "none"}
        config["gpu-training:jobs"] = [*config.get("gpu-training:jobs", []), TF_JOB]
        for job in config.get("gpu-training:jobs", []):
            job.pop("scheduler", None)

    return render(resolve_file(variant(REPO / "Pulumi.dev.yaml", tmp_path, edit)))


@pytest.fixture
def cluster(
    control_plane: Callable[[], controlplane.ControlPlane],
    kwok_binary: Path,
    definitions: list[dict[str, Any]],
    tmp_path: Path,
) -> tuple[controlplane.ControlPlane, Rendered]:
    """The dev stack's cluster with JobSet and Trainer running, and every object but the jobs applied."""
    rendered = _dev_without_gang_scheduler(tmp_path)
    assert trainer.installed(rendered) and jobset.installed(rendered)
    plane = cluster_of(control_plane, kwok_binary, definitions, rendered.stack)
    jobset.start(plane, rendered)
    trainer.start(plane, rendered)
    client = plane.client()
    objects = list(rendered.objects)
    outcomes = apply.apply_all(client, [o for o in objects if o["kind"] not in JOB_KINDS] + volumes.stand_ins(objects))
    assert not [o for o in outcomes if not o.accepted and not o.skipped], outcomes
    waiting.claims_bound(client, wait=WAIT)
    return plane, rendered


def _trainjob(rendered: Rendered, name: str) -> dict[str, Any]:
    return copy.deepcopy(next(o for o in rendered.objects if o["kind"] == "TrainJob" and o["metadata"]["name"] == name))


def _runtime(rendered: Rendered, name: str) -> dict[str, Any]:
    return next(o for o in rendered.objects if o["kind"] == "ClusterTrainingRuntime" and o["metadata"]["name"] == name)


def _owned_by(obj: dict[str, Any], kind: str, name: str) -> bool:
    return any(
        r["kind"] == kind and r["name"] == name and r.get("controller")
        for r in obj["metadata"].get("ownerReferences", [])
    )


def _wait_running(plane: controlplane.ControlPlane, trainjob: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The TrainJob's pods once `count` of them run and its status counts every child Job ready."""
    client = plane.client()
    name, namespace = trainjob["metadata"]["name"], trainjob["metadata"]["namespace"]

    def running() -> list[dict[str, Any]] | None:
        pods = jobsets.pods(client, trainjob)
        jobs_status = status_of(client.get(client.path_of(trainjob)) or {}).get("jobsStatus") or []
        whole = len(pods) == count and all(p["status"].get("phase") == "Running" for p in pods)
        return pods if whole and jobs_status and all(s.get("ready", 0) >= 1 for s in jobs_status) else None

    return waiting.until(
        f"{name}: {count} pods Running and ready in the TrainJob's status",
        running,
        lambda: diagnosis.of(plane, namespace, "trainer", "jobset", lines=15),
        wait=WAIT,
    )


def _assert_chain(client: Client, trainjob: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """TrainJob -> JobSet -> Jobs -> pods, each owned by the one before; the Jobs by replicated job name."""
    name, namespace = trainjob["metadata"]["name"], trainjob["metadata"]["namespace"]
    made = jobsets.made(client, trainjob)
    assert _owned_by(made, "TrainJob", name), made["metadata"].get("ownerReferences")
    jobs = client.list("batch/v1", "Job", namespace, f"{jobsets.NAME_LABEL}={name}")
    assert jobs and all(_owned_by(j, "JobSet", name) for j in jobs), "JobSet made no Jobs of its own"
    by_name = {j["metadata"]["name"]: j for j in jobs}
    for pod in pods:
        assert any(_owned_by(pod, "Job", job) for job in by_name), f"{pod['metadata']['name']} has no Job owner"
    return {j["metadata"]["labels"][jobsets.REPLICATED_JOB_LABEL]: j for j in jobs}


def _assert_placed(client: Client, pods: list[dict[str, Any]], count: int) -> None:
    """One pod a node, every node of the pool."""
    nodes = {p["spec"].get("nodeName") for p in pods}
    assert None not in nodes and len(nodes) == count, f"not one pod a node: {sorted(map(str, nodes))}"
    for node in nodes:
        stored = client.get(f"/api/v1/nodes/{node}") or {}
        assert node.startswith(f"{POOL}-"), f"{node} is not a node of pool {POOL}"
        assert stored["metadata"]["labels"].get("nvidia.com/gpu.product") == "NVIDIA-H100-80GB-HBM3"


def _container(pod: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in pod["spec"]["containers"] if c["name"] == "node")


def _assert_fabric(pod: dict[str, Any], runtime_pod: dict[str, Any]) -> None:
    """The runtime's fabric as the API server stored the pod: rails, RDMA device, GPUs, NCCL environment."""
    meta = runtime_pod["metadata"]
    want = next(c for c in runtime_pod["spec"]["containers"] if c["name"] == "node")
    got = _container(pod)
    networks = "k8s.v1.cni.cncf.io/networks"
    assert pod["metadata"]["annotations"].get(networks) == meta["annotations"][networks]
    for resource in ("nvidia.com/gpu", "rdma/rdma_shared_device_a"):
        assert got["resources"]["limits"].get(resource) == want["resources"]["limits"][resource], resource
    env = {e["name"]: e.get("value") for e in got.get("env", [])}
    for var in want["env"]:
        if var["name"].startswith("NCCL_"):
            assert env.get(var["name"]) == var["value"], var["name"]
    assert "IPC_LOCK" in got.get("securityContext", {}).get("capabilities", {}).get("add", [])
    assert pod["spec"]["nodeSelector"] == runtime_pod["spec"]["nodeSelector"]
    # JobSet's pod webhook ran: it labels every JobSet pod with the priority admission gave it.
    assert pod["metadata"]["labels"].get("jobset.sigs.k8s.io/priority") == str(pod["spec"].get("priority", 0))


def _template(runtime: dict[str, Any], replicated: str) -> dict[str, Any]:
    spec = runtime["spec"]["template"]["spec"]
    job = next(r for r in spec["replicatedJobs"] if r["name"] == replicated)
    return dict(job["template"]["spec"]["template"])


def _delete(client: Client, trainjob: dict[str, Any]) -> None:
    # In the background, as Pulumi deletes a TrainJob (components/manifests/trainjob.py): in the foreground
    # Trainer v2.3.0 makes the JobSet again while the TrainJob waits for it.
    client.delete(trainjob, propagation="Background")
    waiting.until(
        f"{trainjob['metadata']['name']} and its pods deleted",
        lambda: client.get(client.path_of(trainjob)) is None and not jobsets.pods(client, trainjob),
        wait=WAIT,
    )


def test_a_torch_trainjob_becomes_a_jobset_whose_pods_carry_the_runtimes_fabric_on_the_pools_nodes(
    cluster: tuple[controlplane.ControlPlane, Rendered],
) -> None:
    plane, rendered = cluster
    client = plane.client()
    trainjob = _trainjob(rendered, "llama-pretrain")
    runtime = _runtime(rendered, trainjob["spec"]["runtimeRef"]["name"])
    nodes = trainjob["spec"]["trainer"]["numNodes"]
    client.apply(trainjob)
    pods = _wait_running(plane, trainjob, nodes)
    jobs = _assert_chain(client, trainjob, pods)
    assert set(jobs) == {"node"}
    assert jobs["node"]["spec"]["parallelism"] == nodes
    _assert_placed(client, pods, nodes)
    want = trainjob["spec"]["trainer"]
    for pod in pods:
        _assert_fabric(pod, _template(runtime, "node"))
        got = _container(pod)
        assert got["image"] == want["image"] and got["command"] == want["command"]
        assert got["resources"]["requests"] == want["resourcesPerNode"]["requests"]
        env = {e["name"]: e.get("value") for e in got["env"]}
        # Trainer's torch plugin: torchrun's rendezvous from the TrainJob's shape.
        assert env["PET_NNODES"] == str(nodes) and env["PET_NPROC_PER_NODE"] == str(want["numProcPerNode"])
        # The runtime's in-place restarts survive Trainer's own PET_* variables: torchrun reads them from there.
        assert env["PET_MAX_RESTARTS"] == "3"
        claims = {
            v["persistentVolumeClaim"]["claimName"] for v in pod["spec"]["volumes"] if "persistentVolumeClaim" in v
        }
        assert claims == {"training-checkpoints", "training-dataset"}, "the TrainJob's runtime patch is lost"
    stored = client.get(client.path_of(trainjob)) or {}
    # Trainer's defaulting webhook ran: it stamps each runtime patch with the time it was made.
    assert all(patch.get("time") for patch in stored["spec"]["runtimePatches"]), stored["spec"]["runtimePatches"]
    assert not [c for c in conditions_of(stored) if c["type"] == "Failed" and c["status"] == "True"]
    [status] = stored["status"]["jobsStatus"]
    assert status["name"] == "node" and status["ready"] == 1 and status["active"] == 1
    _delete(client, trainjob)

    # The validating webhook holds a TrainJob to its runtime: naming none, it is refused at admission.
    orphan = _trainjob(rendered, "llama-pretrain")
    orphan["spec"]["runtimeRef"]["name"] = "h100-no-such-runtime"
    with pytest.raises(ClientError, match=trainer.VALIDATOR):
        client.apply(orphan)
    assert client.get(client.path_of(orphan)) is None, "the refused TrainJob was stored"


def test_a_deepspeed_trainjob_runs_its_launcher_as_a_node_with_a_hostfile_of_every_node(
    cluster: tuple[controlplane.ControlPlane, Rendered],
) -> None:
    plane, rendered = cluster
    client = plane.client()
    trainjob = _trainjob(rendered, "ds-finetune")
    runtime = _runtime(rendered, trainjob["spec"]["runtimeRef"]["name"])
    assert runtime["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"]
    nodes = trainjob["spec"]["trainer"]["numNodes"]
    client.apply(trainjob)
    # The launcher is one of the nodes: numNodes pods in all, one of them the launcher.
    pods = _wait_running(plane, trainjob, nodes)
    jobs = _assert_chain(client, trainjob, pods)
    assert set(jobs) == {"node", "launcher"}
    assert jobs["node"]["spec"]["parallelism"] == nodes - 1 and jobs["launcher"]["spec"]["parallelism"] == 1
    _assert_placed(client, pods, nodes)
    by_job = {p["metadata"]["labels"][jobsets.REPLICATED_JOB_LABEL]: p for p in pods}
    for role, pod in by_job.items():
        _assert_fabric(pod, _template(runtime, role))
        mounts = {m["mountPath"] for m in _container(pod).get("volumeMounts", [])}
        # Trainer's SSH keys where the runtime says, and the TrainJob's own volumes from its runtime patch.
        wanted = {runtime["spec"]["mlPolicy"]["mpi"]["sshAuthMountPath"], "/etc/deepspeed", "/checkpoints"}
        assert wanted | ({"/etc/mpi"} if role == "launcher" else set()) <= mounts, f"{role}: {sorted(mounts)}"
    launcher = _container(by_job["launcher"])
    assert launcher["command"] == trainjob["spec"]["trainer"]["command"]
    assert _container(by_job["node"])["command"] == _container(_template(runtime, "node"))["command"], "sshd"
    # JobSet started the launcher only once the node Job was ready (the runtime's dependsOn).
    node_ready = next(c["lastTransitionTime"] for c in by_job["node"]["status"]["conditions"] if c["type"] == "Ready")
    assert by_job["launcher"]["metadata"]["creationTimestamp"] >= node_ready
    # Trainer's MPI plugin: the hostfile lists every node, the launcher among them, with a slot per GPU.
    name, namespace = trainjob["metadata"]["name"], trainjob["metadata"]["namespace"]
    hostfile = client.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}-mpi-hostfile")
    assert hostfile is not None, "no hostfile"
    hosts = hostfile["data"]["hostfile"].split()
    slots = trainjob["spec"]["trainer"]["numProcPerNode"]
    assert hosts.count(f"slots={slots}") == nodes and any("launcher" in h for h in hosts), hosts
    secret = client.get(f"/api/v1/namespaces/{namespace}/secrets/{name}-mpi-ssh-auth")
    assert secret is not None and secret["type"] == "kubernetes.io/ssh-auth"
    stored = client.get(client.path_of(trainjob)) or {}
    statuses = {s["name"]: s for s in stored["status"]["jobsStatus"]}
    assert set(statuses) == {"node", "launcher"} and all(s["ready"] == 1 for s in statuses.values()), json.dumps(
        statuses
    )


def _tf_config(command: list[str], index: str) -> dict[str, Any]:
    """The TF_CONFIG a pod's command exports, run by a real shell with the pod's completion index: the wrapper
    (`sh -c SCRIPT NAME`) then, in place of the training program, a print of what it was handed."""
    assert command[:2] == ["sh", "-c"], command
    shown = [*command[:4], "sh", "-c", 'printf %s "$TF_CONFIG"']
    ran = subprocess.run(shown, env={"JOB_COMPLETION_INDEX": index}, capture_output=True, text=True, check=True)
    return json.loads(ran.stdout)


def test_a_tensorflow_trainjob_tells_every_pod_each_workers_real_hostname_and_its_own_index(
    cluster: tuple[controlplane.ControlPlane, Rendered],
) -> None:
    plane, rendered = cluster
    client = plane.client()
    trainjob = _trainjob(rendered, TF_JOB["name"])
    runtime = _runtime(rendered, trainjob["spec"]["runtimeRef"]["name"])
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 1}, "plain ML: no torch or mpi policy"
    nodes = trainjob["spec"]["trainer"]["numNodes"]
    assert nodes == 2
    client.apply(trainjob)
    pods = _wait_running(plane, trainjob, nodes)
    jobs = _assert_chain(client, trainjob, pods)
    assert set(jobs) == {"node"} and jobs["node"]["spec"]["parallelism"] == nodes
    _assert_placed(client, pods, nodes)
    name, namespace = trainjob["metadata"]["name"], trainjob["metadata"]["namespace"]
    # JobSet's headless Service gives each pod its DNS name: <hostname>.<subdomain>.
    service = client.get(f"/api/v1/namespaces/{namespace}/services/{name}")
    assert service is not None and service["spec"]["clusterIP"] == "None"
    by_index = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in pods}
    assert sorted(by_index) == [str(i) for i in range(nodes)]
    # What the API server stored: the Job controller's hostname, JobSet's subdomain, TFJob's port.
    hosts = []
    for index in sorted(by_index, key=int):
        spec = by_index[index]["spec"]
        assert spec["subdomain"] == service["metadata"]["name"]
        hosts.append(f"{spec['hostname']}.{spec['subdomain']}:2222")
    for index, pod in by_index.items():
        _assert_fabric(pod, _template(runtime, "node"))
        got = _container(pod)
        assert got["image"] == trainjob["spec"]["trainer"]["image"]
        assert got["command"] == trainjob["spec"]["trainer"]["command"]
        env = {e["name"]: e for e in got["env"]}
        # The Job controller appends the index the command reads; Trainer's PlainML adds no PET_* variables.
        assert env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"].endswith(
            "['batch.kubernetes.io/job-completion-index']"
        )
        assert not [n for n in env if n.startswith(("PET_", "TORCH_"))], sorted(env)
        assert _tf_config(got["command"], index) == {
            "cluster": {"worker": hosts},
            "task": {"type": "worker", "index": int(index)},
        }, f"pod {pod['metadata']['name']}"
    stored = client.get(client.path_of(trainjob)) or {}
    assert not [c for c in conditions_of(stored) if c["type"] == "Failed" and c["status"] == "True"]
    _delete(client, trainjob)
