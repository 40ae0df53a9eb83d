"""The workload kinds the rules read, by API group and kind: where each keeps its pod templates, how many
pods each runs at once, whether they run as one job, and what its controller does that a manifest leaves out.

Pure data: dicts in, pod templates out. Malformed input never raises: a field of the wrong type reads as
absent, a count that is not a number as its default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from components.rules.podtemplate import PodTemplate, count, pod_spec

TRAINING_OPERATOR_KEYS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}
"""Where the Training Operator (kubeflow.org/v1) and the MPI Operator (v2beta1) keep their replica specs."""
REPLICA_KEYS = tuple(TRAINING_OPERATOR_KEYS.values())

Reader = Callable[[Mapping[str, Any]], list[PodTemplate]]


@dataclass(frozen=True, slots=True)
class Kind:
    """A workload kind: its API group and kind, how its pod templates are read, and what its controller does."""

    group: str
    """The API group (`` for the core group)."""
    kind: str
    read: Reader
    job: bool
    """Whether its pods run together as one job (so that several GPU pods make a multi-node job)."""
    controller: str
    """Who runs it, as messages name it."""
    restart_default: str | None = None
    """The restartPolicy its controller gives a replica that states none."""
    gang: bool = False
    """Whether its controller makes it a gang itself when the cluster's gang scheduler is Volcano: Volcano's own
    Job always, and the Training and MPI Operators as this platform installs them (`--gang-scheduler-name`,
    `--gang-scheduling`)."""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def template(role: str, replicas: int, value: Any, *, partial: bool = False) -> PodTemplate | None:
    """A PodTemplateSpec as the rules read it; None when it holds no pod spec."""
    found = _dict(value)
    if not isinstance(found.get("spec"), dict):
        return None
    return PodTemplate(role, replicas, pod_spec(found["spec"]), metadata(found.get("metadata")), partial)


def metadata(value: Any) -> dict[str, Any]:
    """ObjectMeta whose labels and annotations are maps."""
    meta = dict(_dict(value))
    for field in ("labels", "annotations"):
        if field in meta and not isinstance(meta[field], dict):
            del meta[field]
    return meta


def _templates(*found: PodTemplate | None) -> list[PodTemplate]:
    return [t for t in found if t is not None]


def _pod(obj: Mapping[str, Any]) -> list[PodTemplate]:
    return _templates(template("pod", 1, {"spec": obj.get("spec"), "metadata": obj.get("metadata")}))


def _replicated(obj: Mapping[str, Any]) -> list[PodTemplate]:
    spec = _dict(obj.get("spec"))
    return _templates(template("pod", count(spec.get("replicas"), 1), spec.get("template")))


def _daemon(obj: Mapping[str, Any]) -> list[PodTemplate]:
    return _templates(template("pod", 1, _dict(obj.get("spec")).get("template")))


def job_pods(spec: Mapping[str, Any]) -> int:
    """Pods a batch/v1 Job spec runs at once: its parallelism (1 by default), at most its completions."""
    parallelism = count(spec.get("parallelism"), 1)
    completions = count(spec.get("completions"), None)
    return min(parallelism, completions) if completions is not None else parallelism


def _batch_job(obj: Mapping[str, Any]) -> list[PodTemplate]:
    spec = _dict(obj.get("spec"))
    return _templates(template("pod", job_pods(spec), spec.get("template")))


def _cron_job(obj: Mapping[str, Any]) -> list[PodTemplate]:
    spec = _dict(_dict(_dict(obj.get("spec")).get("jobTemplate")).get("spec"))
    return _templates(template("pod", job_pods(spec), spec.get("template")))


def _replica_specs(obj: Mapping[str, Any]) -> list[PodTemplate]:
    spec = _dict(obj.get("spec"))
    specs = _dict(spec.get(TRAINING_OPERATOR_KEYS.get(str(obj.get("kind")), "")))
    return _templates(
        *(
            template(str(role), count(_dict(replica).get("replicas"), 1), _dict(replica).get("template"))
            for role, replica in specs.items()
        )
    )


def _volcano_job(obj: Mapping[str, Any]) -> list[PodTemplate]:
    tasks = _list(_dict(obj.get("spec")).get("tasks"))
    return _templates(
        *(
            template(
                str(_dict(task).get("name") or f"task-{n}"), count(_dict(task).get("replicas"), 1), task.get("template")
            )
            for n, task in enumerate(tasks)
            if isinstance(task, dict)
        )
    )


def _jobset(obj: Mapping[str, Any]) -> list[PodTemplate]:
    jobs = _list(_dict(obj.get("spec")).get("replicatedJobs"))
    found: list[PodTemplate | None] = []
    for n, job in enumerate(j for j in jobs if isinstance(j, dict)):
        spec = _dict(_dict(job.get("template")).get("spec"))
        replicas = count(job.get("replicas"), 1) * job_pods(spec)
        found.append(template(str(job.get("name") or f"job-{n}"), replicas, spec.get("template")))
    return _templates(*found)


def _leader_worker_set(obj: Mapping[str, Any]) -> list[PodTemplate]:
    spec = _dict(obj.get("spec"))
    groups = count(spec.get("replicas"), 1)
    lws = _dict(spec.get("leaderWorkerTemplate"))
    size = count(lws.get("size"), 1)
    worker = lws.get("workerTemplate")
    if isinstance(lws.get("leaderTemplate"), dict):
        return _templates(
            template("leader", groups, lws["leaderTemplate"]), template("worker", groups * (size - 1), worker)
        )
    return _templates(template("worker", groups * size, worker))


def _trainjob(obj: Mapping[str, Any]) -> list[PodTemplate]:
    # Read with its runtime by pods.templates(); alone, the pod set it states.
    from components.rules.trainjobs import trainjob_pods

    return trainjob_pods(obj, None)


def _runtime(obj: Mapping[str, Any]) -> list[PodTemplate]:
    from components.rules.trainjobs import runtime_pods

    return runtime_pods(obj)


KINDS: tuple[Kind, ...] = (
    Kind("", "Pod", _pod, True, "the kubelet"),
    Kind("batch", "Job", _batch_job, True, "the Job controller"),
    Kind("batch", "CronJob", _cron_job, True, "the CronJob controller"),
    Kind("apps", "Deployment", _replicated, False, "the Deployment controller"),
    Kind("apps", "ReplicaSet", _replicated, False, "the ReplicaSet controller"),
    Kind("apps", "StatefulSet", _replicated, True, "the StatefulSet controller"),
    Kind("apps", "DaemonSet", _daemon, False, "the DaemonSet controller"),
    Kind("kubeflow.org", "PyTorchJob", _replica_specs, True, "the Training Operator", "OnFailure", gang=True),
    Kind("kubeflow.org", "TFJob", _replica_specs, True, "the Training Operator", "Never", gang=True),
    Kind("kubeflow.org", "XGBoostJob", _replica_specs, True, "the Training Operator", "Never", gang=True),
    Kind("kubeflow.org", "PaddleJob", _replica_specs, True, "the Training Operator", "OnFailure", gang=True),
    Kind("kubeflow.org", "JAXJob", _replica_specs, True, "the Training Operator", "Never", gang=True),
    # kubeflow.org/v1 (the Training Operator's) defaults both roles to Never; v2beta1 (the MPI Operator's) the
    # launcher to OnFailure and the workers to Never: either way the workers, which hold the GPUs, never restart.
    Kind("kubeflow.org", "MPIJob", _replica_specs, True, "the MPI Operator", "Never", gang=True),
    Kind("batch.volcano.sh", "Job", _volcano_job, True, "Volcano", "Never", gang=True),
    Kind("jobset.x-k8s.io", "JobSet", _jobset, True, "JobSet"),
    Kind("leaderworkerset.x-k8s.io", "LeaderWorkerSet", _leader_worker_set, True, "LeaderWorkerSet"),
    Kind("trainer.kubeflow.org", "TrainJob", _trainjob, True, "Kubeflow Trainer"),
    Kind("trainer.kubeflow.org", "ClusterTrainingRuntime", _runtime, True, "Kubeflow Trainer"),
    Kind("trainer.kubeflow.org", "TrainingRuntime", _runtime, True, "Kubeflow Trainer"),
)
"""Every workload kind read by its own shape."""
_BY_GROUP = {(k.group, k.kind): k for k in KINDS}


def group(api_version: Any) -> str | None:
    """The API group of an apiVersion (`` for `v1`); None when there is none."""
    if not isinstance(api_version, str) or not api_version:
        return None
    return api_version.rpartition("/")[0]


def kind_of(obj: Mapping[str, Any]) -> Kind | None:
    """The kind an object is read as, by its apiVersion's group and its kind (by kind alone, the first of that
    name, when the object states no apiVersion); None when it is not one of KINDS."""
    name = obj.get("kind")
    found = group(obj.get("apiVersion"))
    if found is not None:
        return _BY_GROUP.get((found, name))  # type: ignore[arg-type]
    return next((k for k in KINDS if k.kind == name), None)


def generic(obj: Mapping[str, Any]) -> list[PodTemplate]:
    """The pod templates of a kind not in KINDS, wherever they sit: every `template` (or `podTemplate`) map with
    a pod spec of containers, its pods the `replicas` (or `parallelism`, or `size`) beside it."""
    return list(_walk(_dict(obj.get("spec")), "spec"))


def _walk(node: Any, path: str) -> Iterator[PodTemplate]:
    if isinstance(node, list):
        for n, item in enumerate(node):
            yield from _walk(item, f"{path}[{n}]")
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        spec = _dict(value).get("spec") if key in ("template", "podTemplate") else None
        if isinstance(spec, dict) and isinstance(spec.get("containers"), list):
            replicas = next((count(node[k], 1) for k in ("replicas", "parallelism", "size") if k in node), 1)
            found = template(f"{path}.{key}", replicas, value)
            if found is not None:
                yield found
        else:
            yield from _walk(value, f"{path}.{key}")


def read(obj: Mapping[str, Any]) -> list[PodTemplate]:
    """The pod templates of an object: by its kind's shape, else found generically."""
    kind = kind_of(obj)
    return kind.read(obj) if kind is not None else generic(obj)
