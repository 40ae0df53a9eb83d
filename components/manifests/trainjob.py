"""TrainJob (trainer.kubeflow.org/v1alpha1): a job on its pool's training runtime, with what is its own."""

from __future__ import annotations

import copy
import json
from typing import Any

from components.manifests import envsecret, gang
from components.manifests.meta import INSTANCE_LABEL, job_labels, metadata
from components.manifests.mpijob import mpirun_args
from components.manifests.plan import JobPlan
from components.manifests.pod import env_list, job_volumes, shm_volume, topology_annotations, worker_resources
from components.manifests.serviceaccount import pod_service_account
from components.manifests.storage import pod_annotations
from components.manifests.trainingruntime import (
    API,
    LAUNCHER,
    NODE,
    TF_PORT,
    RuntimeChoice,
    choose_runtime,
    uses_mpi,
)

MANAGER = "gpu-training/trainingjob"
"""Who owns the TrainJob's runtime patch (Kueue writes its own under kueue.x-k8s.io/manager)."""
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
"""Trainer's Volcano plugin reads the queue from the runtime template's annotations, which a patch extends."""
# pulumi-kubernetes deletes in the foreground by default: the TrainJob stays until its JobSet is gone. Trainer
# v2.3.0 reconciles a TrainJob that is being deleted like any other and makes its JobSet again as soon as the
# garbage collector removes it, so `pulumi destroy` (or a replacement) never finishes; found on the real engine
# (tests/engine/test_deploy.py). In the background, the TrainJob goes at once and the collector removes the rest.
BACKGROUND_DELETE = {"pulumi.com/deletionPropagationPolicy": "background"}
TF_CONFIG = "TF_CONFIG"
INDEX_ENV = "JOB_COMPLETION_INDEX"
"""The pod's index in its Job, which the Job controller appends to every container's env of an Indexed Job (JobSet
v0.12.0's webhook makes every child Job Indexed: pkg/webhooks/jobset_webhook.go:120-123). Appended last, it is
not there for another env value's $(JOB_COMPLETION_INDEX) to expand, so TF_CONFIG is written by a shell."""


def trainjob(job: JobPlan, choice: RuntimeChoice | None = None) -> dict[str, Any]:
    """The TrainJob of a trainjob-launcher job, on the runtime `choice` names (default: as chosen for it)."""
    choice = choice or choose_runtime(job)
    runtime = job.spec.training_runtime or "torch"
    base = choice.base
    resources = worker_resources(job)
    per_node: dict[str, Any] = {"limits": dict(resources), "requests": dict(resources)}
    if job.claims:
        per_node["claims"] = [{"name": c["name"]} for c in job.claims]
    trainer: dict[str, Any] = {"image": job.spec.image, "command": _command(job, runtime), "numNodes": job.nodes}
    if runtime != "tensorflow":  # one TensorFlow process drives every GPU of its node; PlainML reads no count
        trainer["numProcPerNode"] = job.gpus_per_node
    trainer["resourcesPerNode"] = per_node
    env = {name: value for name, value in job.env.items() if base.env.get(name) != value}
    if env:
        trainer["env"] = env_list(env, job.name)
    spec: dict[str, Any] = {"runtimeRef": dict(choice.ref), "trainer": trainer}
    patch = _patch(job, base, [NODE, LAUNCHER] if uses_mpi(runtime) else [NODE])
    if patch:
        spec["runtimePatches"] = [{"manager": MANAGER, "trainingRuntimeSpec": {"template": patch}}]
    return {
        "apiVersion": API,
        "kind": "TrainJob",
        "metadata": metadata(
            job.name,
            job.namespace,
            labels={**job_labels(job.name), **gang.queue_labels(job)},
            annotations=BACKGROUND_DELETE,
        ),
        "spec": spec,
    }


def gang_size(job: JobPlan) -> int:
    """The pods Volcano must place together for an MPI-style TrainJob: its nodes' pods, less the launcher.

    Trainer v2.3.0's Volcano plugin counts every pod in its PodGroup, the launcher too, while the runtime makes
    the launcher only once the nodes are Ready: the gang never forms (found by `simulate`, as kubeflow/mpi-operator
    #608 for MPIJobs). The job's own PodGroup, made first under the TrainJob's name, counts the nodes alone, and
    Trainer leaves a PodGroup that exists as it is; the launcher joins the running group.
    """
    return max(job.nodes - 1, 1)


def _command(job: JobPlan, runtime: str) -> list[str]:
    """torchrun (Trainer sets its node count, rank and master as PET_* variables), mpirun, or the program with
    TF_CONFIG."""
    if runtime == "torch":
        return ["torchrun", *job.program]
    if runtime == "tensorflow":
        return tf_config_command(job)
    return ["mpirun", *mpirun_args(job, as_root=False)]


def worker_hosts(job: JobPlan) -> list[str]:
    """Each node pod's `host:port`, as TF_CONFIG lists the workers: its hostname under the JobSet's subdomain.

    Trainer v2.3.0 names the JobSet after the TrainJob, and JobSet v0.12.0 names the nodes' Job `<jobset>-node-0`
    (pkg/util/placement/placement.go:14-16 GenJobName) and sets its pods' subdomain to the JobSet's name
    (pkg/controllers/jobset_controller.go:954-956, GetSubdomain at :1090-1099, serving a headless Service of that
    name at :788-818); the Job controller gives each pod the hostname `<job>-<index>`. So pod i is
    `<trainjob>-node-0-<i>.<trainjob>`, as Trainer's torch plugin names node 0 for PET_MASTER_ADDR
    (pkg/runtime/framework/plugins/torch/torch.go:162).
    """
    return [f"{job.name}-{NODE}-0-{index}.{job.name}:{TF_PORT}" for index in range(job.nodes)]


def tf_config_command(job: JobPlan) -> list[str]:
    """The program, run by a shell that first exports TF_CONFIG: every node a worker, this pod the one at its Job's
    completion index. A job of one node gets none, as a TFJob of one replica (training-operator v1.9.4
    pkg/controller.v1/tensorflow/tfjob_controller.go:561-564), and TensorFlow trains locally."""
    if job.nodes < 2:
        return list(job.program)
    mark = "index-here"
    config = json.dumps({"cluster": {"worker": worker_hosts(job)}, "task": {"type": "worker", "index": mark}})
    # The index spliced in by the shell, outside the single quotes; unset, the shell stops with an error.
    before, after = config.split(json.dumps(mark))
    script = f"export {TF_CONFIG}='{before}'\"${{{INDEX_ENV}:?}}\"'{after}'; exec \"$@\""
    return ["sh", "-c", script, "sh", *job.program]


def _patch(job: JobPlan, base: JobPlan, replicated_jobs: list[str]) -> dict[str, Any]:
    """The job's own part of its pods: its label, volumes, pull secrets, /dev/shm size, placement and queue."""
    volumes, mounts = job_volumes(job)
    if job.shm_size != base.shm_size:
        volumes.insert(0, shm_volume(job.shm_size))
    pod_meta: dict[str, Any] = {"labels": {INSTANCE_LABEL: job.name}}
    annotations = {**pod_annotations(job.volumes), **topology_annotations(job, group=len(replicated_jobs) > 1)}
    if annotations:
        pod_meta["annotations"] = annotations
    pod_spec: dict[str, Any] = {}
    pod_service_account(pod_spec, job.spec.service_account)
    if job.spec.image_pull_secrets:
        pod_spec["imagePullSecrets"] = envsecret.image_pull_secrets(job.spec)
    if volumes:
        pod_spec["volumes"] = volumes
    if mounts:
        pod_spec["containers"] = [{"name": NODE, "volumeMounts": mounts}]
    pod: dict[str, Any] = {"metadata": pod_meta}
    if pod_spec:
        pod["spec"] = pod_spec
    template: dict[str, Any] = {}
    if job.scheduler == "volcano" and job.queue:
        template["metadata"] = {"annotations": {VOLCANO_QUEUE_ANNOTATION: job.queue}}
    template["spec"] = {
        "replicatedJobs": [
            {"name": name, "template": {"spec": {"template": copy.deepcopy(pod)}}} for name in replicated_jobs
        ]
    }
    return template
