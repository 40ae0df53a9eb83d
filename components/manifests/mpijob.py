"""MPIJob (kubeflow.org/v2beta1, MPI Operator): a launcher running mpirun across GPU workers."""

from __future__ import annotations

from typing import Any

from components.manifests import failure, gang
from components.manifests.meta import job_labels, metadata
from components.manifests.plan import JobPlan
from components.manifests.pod import launcher_template, worker_template

# Workers only serve the launcher's ssh connections; mpirun starts the ranks on them.
WORKER_COMMAND = ["/usr/sbin/sshd", "-De"]
SSHD_PORT = 22
# A worker is ready when sshd answers, not when its container starts: the launcher is made only then,
# so mpirun does not ssh into a worker still pulling a 20 GB image and burn its retries.
WORKER_READINESS = {"tcpSocket": {"port": SSHD_PORT}, "initialDelaySeconds": 2, "periodSeconds": 5}
# On EFA, Open MPI must not take the UCX path, and its own traffic stays on TCP
# (awsome-distributed-training micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml).
_EFA_MPI_ARGS = ["--mca", "pml", "^ucx", "--mca", "btl", "tcp,self"]
# MPI's own traffic (wire-up, small messages) stays on the pod network; NCCL carries the gradients.
MPI_TCP_INTERFACE = "eth0"


def mpirun_args(plan: JobPlan, *, as_root: bool = True) -> list[str]:
    """mpirun's flags (one rank per GPU, the job's environment forwarded) followed by the program."""
    args = ["--allow-run-as-root"] if as_root else []
    if plan.pool.fabric == "efa":
        args += _EFA_MPI_ARGS
    args += [
        "-np",
        str(plan.world_size),
        "-bind-to",
        "none",
        "-map-by",
        "slot",
        "--mca",
        "btl_tcp_if_include",
        MPI_TCP_INTERFACE,
        "--mca",
        "oob_tcp_if_include",
        MPI_TCP_INTERFACE,
    ]
    for name in [*plan.env, "LD_LIBRARY_PATH", "PATH"]:
        args += ["-x", name]
    return [*args, *plan.program]


def launcher_creation_policy(plan: JobPlan) -> str:
    """When the launcher pod is created: once every worker's sshd answers, under every scheduler.

    A Volcano gang that counted the launcher would never schedule the workers before the launcher
    exists (kubeflow/mpi-operator#608), so the gang is the workers alone (`gang_size`).
    """
    return "WaitForWorkersReady"


def gang_size(plan: JobPlan) -> int:
    """The pods Volcano schedules together: the GPU workers. The launcher, a CPU pod made once they are
    ready, joins the running group afterwards."""
    return plan.nodes


def mpijob(plan: JobPlan) -> dict[str, Any]:
    """The MPIJob of an mpi-launcher job."""
    # The launcher's Job is what fails: its retries are the job's.
    run_policy = failure.run_policy(plan, backoff_limit=plan.spec.backoff_limit)
    policy = gang.scheduling_policy(plan, gang_size(plan))
    if policy:
        run_policy["schedulingPolicy"] = policy
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": metadata(plan.name, plan.namespace, labels={**job_labels(plan.name), **gang.queue_labels(plan)}),
        "spec": {
            "slotsPerWorker": plan.gpus_per_node,
            "runPolicy": run_policy,
            "mpiImplementation": "OpenMPI",
            "launcherCreationPolicy": launcher_creation_policy(plan),
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": plan.restart_policy,
                    "template": launcher_template(
                        plan, container="launcher", command=["mpirun"], args=mpirun_args(plan)
                    ),
                },
                "Worker": {
                    "replicas": plan.nodes,
                    "restartPolicy": plan.restart_policy,
                    "template": _worker(plan),
                },
            },
        },
    }


def _worker(plan: JobPlan) -> dict[str, Any]:
    """A worker pod: sshd, ready when it answers."""
    template = worker_template(plan, role="worker", container="worker", command=WORKER_COMMAND)
    template["spec"]["containers"][0]["readinessProbe"] = dict(WORKER_READINESS)
    return template
