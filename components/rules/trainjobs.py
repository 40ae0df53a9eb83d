"""The pods a Kubeflow Trainer v2 TrainJob runs: its runtime's JobSet template with the job's runtime patches
and trainer fields merged in as Trainer v2.3 does, so that the rules see what will run.

Where findings land: a runtime's pods are judged as those of a TrainJob that states nothing of its own, on two
nodes at least (runtimes are made for multi-node jobs), so that what the runtime owns (placement, fabric,
/dev/shm, gang policy, restarts, its images) is reported on the runtime, once. A TrainJob is reported only for
what it brings (image, command, env, resources, patches) that its runtime does not already get wrong (see
`Rule.run`). Without its runtime among the subjects (a job stack whose runtimes the platform stack owns), a
TrainJob is checked for what it states alone, and rules about the runtime's share say nothing.

Pure data: dicts in, pod sets out. Malformed input never raises; what Trainer's API would reject (a patch of
the wrong type, a runtime kind Trainer does not know) changes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from components.manifests.trainingruntime import ANCESTOR_LABEL, GROUP, LAUNCHER, NODE
from components.rules.podtemplate import PodTemplate, count, pod_spec

if TYPE_CHECKING:
    from components.rules.subject import Subject

TRAINJOB = "TrainJob"
CLUSTER_RUNTIME = "ClusterTrainingRuntime"
RUNTIME_KINDS = (CLUSTER_RUNTIME, "TrainingRuntime")
RUNTIME_NODES = 2
"""The nodes a runtime is judged at: it is made for the multi-node TrainJobs that will run on it (its numNodes,
usually 1, is only the default a TrainJob overrides)."""
MERGE_KEYS = {
    "replicatedJobs": "name",
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
}
"""The lists a strategic merge patch merges item by item, by this key of their items; other lists are replaced."""


def runtime_ref(trainjob: Mapping[str, Any]) -> tuple[str, str] | None:
    """The kind and name of the runtime a TrainJob runs on; None when it names none Trainer knows."""
    ref = _dict(_dict(trainjob.get("spec")).get("runtimeRef"))
    kind, name = ref.get("kind", CLUSTER_RUNTIME), ref.get("name")
    if ref.get("apiGroup", GROUP) != GROUP or kind not in RUNTIME_KINDS or not isinstance(name, str) or not name:
        return None
    return kind, name


def find_runtime(trainjob: Mapping[str, Any], subjects: Iterable[Subject]) -> Subject | None:
    """The runtime subject a TrainJob runs on (a ClusterTrainingRuntime by name, a TrainingRuntime in its
    namespace), if it is among the subjects."""
    ref = runtime_ref(trainjob)
    if ref is None:
        return None
    kind, name = ref
    namespace = _dict(trainjob.get("metadata")).get("namespace")
    for subject in subjects:
        meta = _dict(subject.data.get("metadata"))
        if (
            subject.kind == kind
            and meta.get("name") == name
            and (kind == CLUSTER_RUNTIME or meta.get("namespace") == namespace)
        ):
            return subject
    return None


def runtime_spec(obj: Mapping[str, Any], subjects: Iterable[Subject]) -> dict[str, Any] | None:
    """The runtime spec a TrainJob or a runtime runs its pods by (mlPolicy, podGroupPolicy); None when unknown."""
    if obj.get("kind") in RUNTIME_KINDS:
        return _dict(obj.get("spec"))
    runtime = find_runtime(obj, subjects) if obj.get("kind") == TRAINJOB else None
    return _dict(runtime.data.get("spec")) if runtime is not None else None


def trainjob_pods(trainjob: Mapping[str, Any], runtime: Mapping[str, Any] | None) -> list[PodTemplate]:
    """The pods a TrainJob runs on its runtime; without the runtime, the one `node` pod set it states alone."""
    spec = _dict(trainjob.get("spec"))
    trainer = _dict(spec.get("trainer"))
    patches = [
        _dict(_dict(_dict(p).get("trainingRuntimeSpec")).get("template")).get("spec")
        for p in _list(spec.get("runtimePatches"))
    ]
    if runtime is not None:
        return _pods(_dict(runtime.get("spec")), trainer, patches)
    # Its resources, image, command and env as one `node` container: the runtime's share (placement, fabric,
    # /dev/shm) is unknown, and the pods are marked partial so that rules about it say nothing.
    alone = {
        "mlPolicy": {},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": NODE,
                        "template": {
                            "metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
                            "spec": {"template": {"spec": {"containers": [{"name": NODE}]}}},
                        },
                    }
                ]
            }
        },
    }
    return _pods(alone, trainer, patches, partial=True)


def runtime_pods(runtime: Mapping[str, Any]) -> list[PodTemplate]:
    """The pods of a training runtime: what a TrainJob stating nothing of its own runs, on two nodes at least."""
    return _pods(_dict(runtime.get("spec")), {}, [], minimum=RUNTIME_NODES)


def _pods(
    runtime: dict[str, Any],
    trainer: dict[str, Any],
    patches: list[Any],
    *,
    minimum: int = 1,
    partial: bool = False,
) -> list[PodTemplate]:
    jobset = _copy(_dict(_dict(runtime.get("template")).get("spec")))
    jobs = [j for j in _list(jobset.get("replicatedJobs")) if isinstance(j, dict)]
    names = {j.get("name") for j in jobs}
    for patch in patches:
        # A patch of a replicated job the runtime lacks adds no pods.
        wanted = [
            j for j in _list(_dict(patch).get("replicatedJobs")) if isinstance(j, dict) and j.get("name") in names
        ]
        jobs = _merge_list(jobs, wanted, "name")
    policy = _dict(runtime.get("mlPolicy"))
    mpi = policy.get("mpi") if isinstance(policy.get("mpi"), dict) else None
    launcher_as_node = bool(mpi and mpi.get("runLauncherAsNode"))
    nodes = max(count(trainer.get("numNodes"), 0) or count(policy.get("numNodes"), 0) or 1, minimum)
    ancestors = {
        j.get("name")
        for j in jobs
        if _dict(_dict(_dict(j.get("template")).get("metadata")).get("labels")).get(ANCESTOR_LABEL) == "trainer"
    } or {NODE}
    # Trainer fills the trainer job's `node` container from the TrainJob, and the nodes' too when the MPI
    # launcher is one of the nodes.
    filled = ancestors | ({NODE} if launcher_as_node else set())
    out: list[PodTemplate] = []
    for job in jobs:
        name = str(job.get("name") or "")
        job_spec = _dict(_dict(job.get("template")).get("spec"))
        pod = _dict(job_spec.get("template"))
        metadata, spec = _dict(pod.get("metadata")), pod_spec(pod.get("spec"))
        if name in filled:
            _fill(spec, trainer, command=name in ancestors)
        if mpi is not None and name == NODE:
            replicas = max(nodes - 1, 1) if launcher_as_node else nodes
        elif mpi is not None and name == LAUNCHER:
            replicas = 1
        elif mpi is None and name in ancestors:
            replicas = nodes
        else:
            replicas = (count(job.get("replicas"), 0) or 1) * (count(job_spec.get("parallelism"), 0) or 1)
        out.append(PodTemplate(name, replicas, spec, metadata, partial))
    return out


def _fill(spec: dict[str, Any], trainer: dict[str, Any], *, command: bool) -> None:
    """Write the TrainJob's trainer fields into the pod's `node` container, as Trainer does."""
    container = next((c for c in spec["containers"] if c.get("name") == NODE), None)
    if container is None:
        return
    if command:
        if isinstance(trainer.get("image"), str):
            container["image"] = trainer["image"]
        for field in ("command", "args"):
            if isinstance(trainer.get(field), list):
                container[field] = list(trainer[field])
    env = [e for e in _list(trainer.get("env")) if isinstance(e, dict) and isinstance(e.get("name"), str)]
    if env:
        container["env"] = _merge_list(container.get("env") or [], env, "name")
    per_node = _dict(trainer.get("resourcesPerNode"))
    for section in ("limits", "requests"):
        values = _dict(per_node.get(section))
        if values:
            resources = container.setdefault("resources", {})
            resources[section] = {**_dict(resources.get(section)), **values}


def merge(base: Any, patch: Any, field: str = "") -> Any:
    """`patch` strategic-merged into `base` (neither changed): maps merged key by key, the lists of
    MERGE_KEYS item by item, other values replaced; a patch of the wrong type changes nothing."""
    if isinstance(patch, dict):
        if base is not None and not isinstance(base, dict):
            return _copy(base)
        base = base or {}
        merged = {k: merge(v, patch[k], k) if k in patch else _copy(v) for k, v in base.items()}
        merged.update((k, merge(None, v, k)) for k, v in patch.items() if k not in base)
        return merged
    if field in MERGE_KEYS:
        if not isinstance(patch, list):
            return _copy(base)
        return _merge_list(_list(base), patch, MERGE_KEYS[field])
    if isinstance(base, dict | list) and not isinstance(patch, type(base)):
        return _copy(base)
    return _copy(patch)


def _merge_list(base: list[Any], patch: list[Any], key: str) -> list[Any]:
    """Items of `patch` merged into the items of `base` with the same key; new keys appended in order."""
    out = [_copy(i) for i in base]
    for item in patch:
        if not isinstance(item, dict) or item.get(key) is None:
            continue
        index = next((n for n, i in enumerate(out) if isinstance(i, dict) and i.get(key) == item[key]), None)
        if index is None:
            out.append(merge({}, item))
        else:
            out[index] = merge(out[index], item)
    return out


def _copy(value: Any) -> Any:
    """A copy of plain data (maps, lists, scalars): what copy.deepcopy does for it, at a fraction of the cost."""
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value if isinstance(value, str | int | float | bool | None) else copy.deepcopy(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
