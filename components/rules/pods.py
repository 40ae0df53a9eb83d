"""The pod templates inside a workload object, whatever its kind, and the job its pods make together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from components.manifests.pod import VOLCANO_GROUP_ANNOTATION
from components.rules.kinds import REPLICA_KEYS, kind_of, read
from components.rules.podtemplate import PodTemplate
from components.rules.review import once
from components.rules.trainjobs import TRAINJOB, find_runtime, trainjob_pods

if TYPE_CHECKING:
    from components.rules.subject import Subject

__all__ = ["REPLICA_KEYS", "distributed", "gpu_pods", "multi_node", "pods", "resources", "templates"]

VOLCANO_GROUPS = (VOLCANO_GROUP_ANNOTATION, "scheduling.volcano.sh/group-name")
"""The annotations naming a pod's Volcano PodGroup (Volcano reads either; we write the first)."""
KUEUE_POD_GROUP = "kueue.x-k8s.io/pod-group-name"
"""The label that makes plain Pods one workload of Kueue's."""


def resources(container: dict[str, Any]) -> dict[str, Any]:
    """A container's resource requests and limits in one map (limits win)."""
    found = container.get("resources") or {}
    requests, limits = found.get("requests"), found.get("limits")
    return {**(requests if isinstance(requests, dict) else {}), **(limits if isinstance(limits, dict) else {})}


def templates(obj: Mapping[str, Any], subjects: Sequence[Subject] = ()) -> list[PodTemplate]:
    """The pod templates of a workload (a TrainJob on its runtime when that is among the subjects); none for an
    object that runs no pods."""
    return list(_templates(obj, subjects))


def _templates(obj: Mapping[str, Any], subjects: Sequence[Subject]) -> list[PodTemplate]:
    if obj.get("kind") == TRAINJOB and kind_of(obj) is not None:
        return _trainjob_templates(obj, subjects)
    return _read(obj)  # whatever the subjects: a review's checks before the rules read the same objects


@once
def _trainjob_templates(obj: Mapping[str, Any], subjects: Sequence[Subject]) -> list[PodTemplate]:
    runtime = find_runtime(obj, subjects)
    return trainjob_pods(obj, runtime.data if runtime is not None else None)


_read = once(read)


def pods(obj: Mapping[str, Any], subjects: Sequence[Subject] = ()) -> int:
    """Pods the workload runs at once."""
    return sum(t.replicas for t in templates(obj, subjects))


def pod_group(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """What makes a bare Pod one of several that run as a job: the same headless-Service subdomain, PodGroup
    or Kueue pod group, in one namespace; None for a Pod on its own."""
    if obj.get("kind") != "Pod":
        return None
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    namespace = str(meta.get("namespace") or "")
    for value in (
        *(annotations.get(a) for a in VOLCANO_GROUPS),
        labels.get(KUEUE_POD_GROUP),
        spec.get("subdomain"),
    ):
        if isinstance(value, str) and value:
            return namespace, value
    return None


def gpu_pods(obj: Mapping[str, Any], subjects: Sequence[Subject] = ()) -> int:
    """GPU pods of the job the object is, or is one Pod of (with the Pods of its group among the subjects)."""
    own = sum(t.replicas for t in templates(obj, subjects) if t.gpus)
    group = pod_group(obj)
    if group is None or not own:
        return own
    name = (obj.get("metadata") or {}).get("name")
    peers = [
        s.data
        for s in subjects
        if s.kind == "Pod" and (s.data.get("metadata") or {}).get("name") != name and pod_group(s.data) == group
    ]
    return own + sum(t.replicas for p in peers for t in templates(p) if t.gpus)


def distributed(obj: Mapping[str, Any]) -> bool:
    """Whether the workload's pods run as one job: not replicas of a service (Deployment, DaemonSet), nor the
    independent pods of a batch Job that is not Indexed (a work queue)."""
    kind = kind_of(obj)
    if kind is None:
        return True
    if kind.group == "batch":
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        if kind.kind == "CronJob":
            template = spec.get("jobTemplate") if isinstance(spec.get("jobTemplate"), dict) else {}
            spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
        return spec.get("completionMode") == "Indexed"
    return kind.job


def multi_node(obj: Mapping[str, Any], subjects: Sequence[Subject] = ()) -> bool:
    """Whether the workload is one job of several GPU pods (so several nodes)."""
    return distributed(obj) and gpu_pods(obj, subjects) > 1
