"""Kubeflow Trainer v2 training runtimes: a JobSet template carrying everything a pool decides.

Each GPU pool gets ClusterTrainingRuntimes (`<pool>-torch`, `-deepspeed`, `-mpi`, `-tensorflow`) holding its GPUs,
tolerations, node selection, fabric, /dev/shm and gang policy, so a TrainJob only names the image,
command and nodes. A job whose pods need what a TrainJob cannot patch into its runtime (a priority
class, another MPI image, its own placement under Volcano) gets a TrainingRuntime of its own, built the
same way from the job.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from components import nvlink
from components.manifests.failure import child_job_failure_policy, jobset_failure_policy
from components.manifests.meta import INSTANCE_LABEL, job_labels, metadata
from components.manifests.plan import JobPlan, SchedulerKind, plan
from components.manifests.pod import worker_template
from components.manifests.podnames import LAUNCHER, NODE
from components.manifests.ports import container_port
from components.models.job import MPI_RUNTIMES, Runtime, TrainingJobSpec
from components.pool import Pool
from components.topology import Placement, placement
from components.versions import TRAINER_MPI_IMAGE, TRAINER_TENSORFLOW_IMAGE, TRAINER_TORCH_IMAGE

API = "trainer.kubeflow.org/v1alpha1"
GROUP = "trainer.kubeflow.org"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
"""Marks the replicated job whose `node` container Trainer fills from the TrainJob's trainer fields."""
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
RUNTIMES: tuple[Runtime, ...] = ("torch", "deepspeed", "mpi", "tensorflow")
ONE_NODE_RUNTIMES: tuple[Runtime, ...] = ("torch", "tensorflow")
"""The runtimes that run on one node too: every pod is a node running the job's program (no launcher)."""
TF_PORT = 2222
"""The port TensorFlow's workers serve each other on: the TFJob default, which TF_CONFIG names (training-operator
v1.9.4 pkg/apis/kubeflow.org/v1/tensorflow_types.go:28 TFJobDefaultPort)."""
TF_PORT_NAME = "tfjob-port"
"""The TFJob container port's name (training-operator v1.9.4 tensorflow_types.go:24 TFJobDefaultPortName)."""
# The MPI runtimes follow Trainer's deepspeed-runtime image: sshd as user 1000 on port 2222.
MPI_USER = 1000
MPI_SSH_DIR = "/home/mpiuser/.ssh"
SSHD_COMMAND = ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]
SSHD_PORT = 2222
_DEFAULT_NAMESPACE = "default"


def runtime_name(pool: str, runtime: str) -> str:
    """The ClusterTrainingRuntime of a pool for one kind of job: `<pool>-<runtime>`."""
    return f"{pool}-{runtime}"


def pool_runtimes(pool: Pool) -> tuple[Runtime, ...]:
    """The runtimes a pool gets: torch and tensorflow, and the MPI ones where two nodes fit (their launcher is a
    node)."""
    return RUNTIMES if pool.max_nodes >= 2 else ONE_NODE_RUNTIMES


def uses_mpi(runtime: Runtime) -> bool:
    """Whether the runtime starts its ranks with mpirun from a launcher pod, over sshd on the nodes."""
    return runtime in MPI_RUNTIMES


def runtime_names(pool: Pool) -> dict[str, str]:
    """The pool's ClusterTrainingRuntime names by runtime."""
    return {runtime: runtime_name(pool.name, runtime) for runtime in pool_runtimes(pool)}


def pool_plan(pool: Pool, runtime: Runtime, scheduler: SchedulerKind) -> JobPlan:
    """A whole-node job on the pool: what its runtime's pods carry when no TrainJob says otherwise."""
    # Pods attach the pool's networks in their namespace; the NAD names in the annotation are relative to it.
    namespace = pool.networks[0].namespace if pool.networks else _DEFAULT_NAMESPACE
    image = {"torch": TRAINER_TORCH_IMAGE, "tensorflow": TRAINER_TENSORFLOW_IMAGE}.get(
        runtime, pool.mpi_image or TRAINER_MPI_IMAGE
    )
    spec = TrainingJobSpec(
        name="runtime",
        namespace=namespace,
        launcher="trainjob",
        runtime=runtime,
        image=image,
        command=["train.py"],
        nodes=2 if uses_mpi(runtime) else 1,
    )
    base = plan(spec, pool, scheduler, path=f"trainer.runtimes.{runtime_name(pool.name, runtime)}")
    # A pool's runtime belongs to no job, so to no job's ComputeDomain: a job that has one gets its own runtime.
    env = {name: value for name, value in base.env.items() if name not in nvlink.ENV}
    return dataclasses.replace(base, placement=None, compute_domain=None, one_domain=False, env=env)


def pool_placement(pool: Pool) -> Placement | None:
    """Where a pool runtime's jobs land under Volcano: preferably in one domain of the finest shared level."""
    return placement(pool.topology, None, None, nodes=2)


def cluster_runtime(pool: Pool, runtime: Runtime, scheduler: SchedulerKind) -> dict[str, Any]:
    """The pool's ClusterTrainingRuntime for one kind of job."""
    base = pool_plan(pool, runtime, scheduler)
    return {
        "apiVersion": API,
        "kind": "ClusterTrainingRuntime",
        "metadata": metadata(
            runtime_name(pool.name, runtime), labels={FRAMEWORK_LABEL: runtime, "gpu-training/pool": pool.name}
        ),
        "spec": runtime_spec(base, network_topology=pool_placement(pool), shared=True),
    }


def job_runtime(job: JobPlan) -> dict[str, Any]:
    """A TrainingRuntime of the job's own, in its namespace, for what a TrainJob cannot patch."""
    runtime = job.spec.training_runtime or "torch"
    return {
        "apiVersion": API,
        "kind": "TrainingRuntime",
        "metadata": metadata(job.name, job.namespace, labels={**job_labels(job.name), FRAMEWORK_LABEL: runtime}),
        "spec": runtime_spec(job, network_topology=job.placement),
    }


@dataclass(frozen=True, slots=True)
class RuntimeChoice:
    """The runtime a TrainJob runs on, the plan its pods follow before the job's patch, and why it is the
    job's own (empty when it is the pool's)."""

    ref: dict[str, str]
    base: JobPlan
    reasons: tuple[str, ...] = ()


def choose_runtime(job: JobPlan) -> RuntimeChoice:
    """The pool's ClusterTrainingRuntime for the job, or a TrainingRuntime of its own, and why."""
    runtime = job.spec.training_runtime or "torch"
    pool = job.pool
    if runtime not in pool.runtimes:
        return _own(job, f"pool '{pool.name}' has no {runtime} runtime")
    base = pool_plan(pool, runtime, job.scheduler)
    reasons = []
    if uses_mpi(runtime) and job.spec.image != base.spec.image:
        reasons.append(
            f"its nodes run the job's image, and Trainer v2.3 starts them from the runtime's ({base.spec.image})"
        )
    if job.spec.scheduler.priority_class:
        reasons.append("its pods have a priority class")
    if job.spec.backoff_limit != base.spec.backoff_limit:
        reasons.append(f"it restarts up to {job.spec.backoff_limit} times")
    fabric, pool_fabric = job.fabric, base.fabric
    if (fabric.annotations, fabric.env, fabric.resources) != (
        pool_fabric.annotations,
        pool_fabric.env,
        pool_fabric.resources,
    ):
        reasons.append(f"its pods attach the pool's networks in namespace {job.namespace}")
    if job.compute_domain:
        reasons.append(f"its pods claim the IMEX channel of its own ComputeDomain ({job.compute_domain})")
    if job.scheduler == "volcano" and job.spec.topology is not None and job.placement != pool_placement(pool):
        reasons.append("Volcano places it by its own topology")
    if reasons:
        return _own(job, *reasons)
    return RuntimeChoice({"apiGroup": GROUP, "kind": "ClusterTrainingRuntime", "name": pool.runtimes[runtime]}, base)


def _own(job: JobPlan, *reasons: str) -> RuntimeChoice:
    """The job's own TrainingRuntime, built from the job itself."""
    return RuntimeChoice({"apiGroup": GROUP, "kind": "TrainingRuntime", "name": job.name}, job, reasons)


def runtime_spec(job: JobPlan, *, network_topology: Placement | None, shared: bool = False) -> dict[str, Any]:
    """The TrainingRuntimeSpec: the ML policy, the gang policy, and the JobSet of the job's pods.

    `shared`: a pool's runtime, whose pods belong to no one job.
    """
    runtime = job.spec.training_runtime or "torch"
    spec: dict[str, Any] = {"mlPolicy": _ml_policy(job, runtime)}
    if job.scheduler == "volcano":
        volcano: dict[str, Any] = {}
        if network_topology is not None and network_topology.tier is not None:
            volcano["networkTopology"] = network_topology.volcano_network_topology()
        spec["podGroupPolicy"] = {"volcano": volcano}
    spec["template"] = {"spec": _jobset(job, runtime, shared)}
    return spec


def _ml_policy(job: JobPlan, runtime: Runtime) -> dict[str, Any]:
    if runtime == "torch":
        return {"numNodes": 1, "torch": {}}
    if runtime == "tensorflow":
        # No framework policy: Trainer v2.3.0's PlainML plugin sizes the nodes by the TrainJob's numNodes and adds
        # its env, nothing more (pkg/runtime/framework/plugins/plainml/plainml.go:46-70); TF_CONFIG is the job's.
        return {"numNodes": 1}
    return {
        # Trainer sizes the launcher's Job (the trainer step) by this, and only the nodes' Job by the TrainJob's
        # numNodes (less the launcher): 2 here made every TrainJob two launchers, each running mpirun.
        "numNodes": 1,
        "mpi": {
            "numProcPerNode": job.gpus_per_node,
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": MPI_SSH_DIR,
            # Every pod is a GPU node; the launcher runs mpirun beside its own ranks.
            "runLauncherAsNode": True,
        },
    }


def _jobset(job: JobPlan, runtime: Runtime, shared: bool) -> dict[str, Any]:
    # A failed rank fails its Job at once (backoffLimit 0), and JobSet restarts every Job together:
    # ranks of a collective job cannot rejoin one by one. A node fault does so without using up a retry.
    failure = jobset_failure_policy(job)
    if not uses_mpi(runtime):
        return {
            "failurePolicy": failure,
            "replicatedJobs": [_replicated_job(NODE, _pod(job, None, shared), trainer=True)],
        }
    node = _pod(job, SSHD_COMMAND, shared)
    node["spec"]["containers"][0]["readinessProbe"] = {"tcpSocket": {"port": SSHD_PORT}, "initialDelaySeconds": 5}
    launcher = _replicated_job(LAUNCHER, _pod(job, None, shared), trainer=True)
    launcher["dependsOn"] = [{"name": NODE, "status": "Ready"}]
    return {
        # Ranks find each other by hostname before the pods are ready (sshd comes up after DNS is needed).
        "network": {"publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All", "targetReplicatedJobs": [LAUNCHER]},
        "failurePolicy": failure,
        "replicatedJobs": [_replicated_job(NODE, node, trainer=False), launcher],
    }


def _replicated_job(name: str, pod: dict[str, Any], *, trainer: bool) -> dict[str, Any]:
    template: dict[str, Any] = {}
    if trainer:
        template["metadata"] = {"labels": {ANCESTOR_LABEL: "trainer"}}
    template["spec"] = {"backoffLimit": 0, "podFailurePolicy": child_job_failure_policy(), "template": pod}
    return {"name": name, "template": template}


def _pod(job: JobPlan, command: list[str] | None, shared: bool) -> dict[str, Any]:
    """A node pod of the runtime: the job's worker pod, named as Trainer expects."""
    runtime = job.spec.training_runtime or "torch"
    grouped = uses_mpi(runtime)  # the launcher and the nodes are two GPU pod sets
    pod = worker_template(job, role="worker", container=NODE, command=command, restart_policy="Never", group=grouped)
    if shared:
        del pod["metadata"]["labels"][INSTANCE_LABEL]
    if runtime == "tensorflow":
        pod["spec"]["containers"][0]["ports"] = [container_port(TF_PORT_NAME, TF_PORT)]
    if grouped:
        container = pod["spec"]["containers"][0]
        container.setdefault("securityContext", {})["runAsUser"] = MPI_USER
        pod["spec"]["securityContext"] = {"fsGroup": MPI_USER}
    return pod
