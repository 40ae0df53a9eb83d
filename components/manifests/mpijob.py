"""MPIJob (kubeflow.org/v2beta1, MPI Operator): a launcher running mpirun across GPU workers."""

from __future__ import annotations

from typing import Any

from components.manifests import gang
from components.manifests.meta import job_labels, metadata
from components.manifests.plan import JobPlan
from components.manifests.pod import launcher_template, worker_template

# Workers only serve the launcher's ssh connections; mpirun starts the ranks on them.
WORKER_COMMAND = ["/usr/sbin/sshd", "-De"]
# MPI's own traffic (wire-up, small messages) stays on the pod network; NCCL carries the gradients.
MPI_TCP_INTERFACE = "eth0"


def mpirun_args(plan: JobPlan, *, as_root: bool = True) -> list[str]:
    """mpirun's flags (one rank per GPU, the job's environment forwarded) followed by the program."""
    args = ["--allow-run-as-root"] if as_root else []
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
    """When the launcher pod is created: after the workers are ready, unless a Volcano gang waits for it.

    A gang that counts the launcher never schedules the workers until the launcher exists, so
    waiting for ready workers first would deadlock (kubeflow/mpi-operator#608).
    """
    return "AtStartup" if plan.scheduler == "volcano" else "WaitForWorkersReady"


def mpijob(plan: JobPlan) -> dict[str, Any]:
    """The MPIJob of an mpi-launcher job."""
    run_policy: dict[str, Any] = {"backoffLimit": plan.spec.backoff_limit, "cleanPodPolicy": "Running"}
    policy = gang.scheduling_policy(plan, plan.nodes + 1)  # the workers and the launcher
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
                    "template": worker_template(plan, role="worker", container="worker", command=WORKER_COMMAND),
                },
            },
        },
    }
