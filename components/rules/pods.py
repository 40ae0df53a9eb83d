"""The pod templates inside a workload object, whatever its kind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from components.rules.podtemplate import PodTemplate
from components.rules.trainjobs import RUNTIME_KINDS, TRAINJOB, find_runtime, runtime_pods, trainjob_pods

if TYPE_CHECKING:
    from components.rules.rule import Subject

REPLICA_KEYS = ("pytorchReplicaSpecs", "tfReplicaSpecs", "mpiReplicaSpecs")
"""Where the Training and MPI Operators keep their replica specs."""


def resources(container: dict[str, Any]) -> dict[str, Any]:
    """A container's resource requests and limits in one map (limits win)."""
    found = container.get("resources") or {}
    return {**(found.get("requests") or {}), **(found.get("limits") or {})}


def templates(obj: dict[str, Any], subjects: Sequence[Subject] = ()) -> list[PodTemplate]:
    """The pod templates of a workload (Job, PyTorchJob, TFJob, MPIJob, TrainJob on its runtime among the
    subjects, a training runtime, Deployment, Pod ...), else none."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == TRAINJOB:
        runtime = find_runtime(obj, subjects)
        return trainjob_pods(obj, runtime.data if runtime is not None else None)
    if kind in RUNTIME_KINDS:
        return runtime_pods(obj)
    if kind == "Pod":
        return [PodTemplate("pod", 1, spec, obj.get("metadata") or {})]
    for key in REPLICA_KEYS:
        if key in spec:
            return [
                PodTemplate(
                    role,
                    int(replica.get("replicas", 1)),
                    (replica.get("template") or {}).get("spec") or {},
                    (replica.get("template") or {}).get("metadata") or {},
                )
                for role, replica in spec[key].items()
            ]
    template = spec.get("template") or (spec.get("jobTemplate") or {}).get("spec", {}).get("template")
    if isinstance(template, dict) and "spec" in template:
        replicas = int(spec.get("parallelism") or spec.get("completions") or spec.get("replicas") or 1)
        return [PodTemplate("pod", replicas, template["spec"], template.get("metadata") or {})]
    return []


def pods(obj: dict[str, Any], subjects: Sequence[Subject] = ()) -> int:
    """Pods the workload runs at once."""
    return sum(t.replicas for t in templates(obj, subjects))


def multi_node(obj: dict[str, Any], subjects: Sequence[Subject] = ()) -> bool:
    """Whether the workload spans several GPU pods (so several nodes)."""
    return sum(t.replicas for t in templates(obj, subjects) if t.gpus) > 1
