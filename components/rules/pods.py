"""The pod templates inside a workload object, whatever its kind."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from components.fabric import GKE_INTERFACES_ANNOTATION, MULTUS_ANNOTATION
from components.manifests.pod import GPU_RESOURCE
from components.rules.trainjobs import RUNTIME_KINDS, TRAINJOB, PodSet, find_runtime, runtime_pods, trainjob_pods

if TYPE_CHECKING:
    from components.rules.rule import Subject

REPLICA_KEYS = ("pytorchReplicaSpecs", "tfReplicaSpecs", "mpiReplicaSpecs")
"""Where the Training and MPI Operators keep their replica specs."""
GPU = GPU_RESOURCE


@dataclass(frozen=True, slots=True)
class PodTemplate:
    """One pod template of a workload: its role, how many replicas, and its spec."""

    role: str
    replicas: int
    spec: dict[str, Any]
    metadata: dict[str, Any]
    partial: bool = False
    """A TrainJob's pods without its runtime: rules about what the runtime brings (placement, fabric,
    /dev/shm, gang) skip them."""

    @property
    def containers(self) -> list[dict[str, Any]]:
        """Init and app containers."""
        return [*self.spec.get("initContainers", []), *self.spec.get("containers", [])]

    @property
    def gpus(self) -> int:
        """GPUs one pod requests (limits, where GPUs are set)."""
        total = 0
        for container in self.spec.get("containers", []):
            resources = container.get("resources") or {}
            value = (resources.get("limits") or {}).get(GPU) or (resources.get("requests") or {}).get(GPU) or 0
            total += int(float(value))
        return total

    @property
    def annotations(self) -> dict[str, Any]:
        """The pod's annotations."""
        found = self.metadata.get("annotations")
        return found if isinstance(found, dict) else {}

    def env(self, container: dict[str, Any]) -> dict[str, str]:
        """A container's plain environment values."""
        return {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}

    def multus_networks(self) -> list[tuple[str, str]]:
        """The Multus networks the pod attaches, each with its interface (net1, net2... unless named)."""
        attached = self.annotations.get(MULTUS_ANNOTATION)
        if not isinstance(attached, str) or not attached.strip():
            return []
        if attached.lstrip().startswith("["):
            try:
                items = json.loads(attached)
            except ValueError:
                return []
            return [
                (str(item.get("name")), str(item.get("interface") or f"net{index + 1}"))
                for index, item in enumerate(items if isinstance(items, list) else [])
                if isinstance(item, dict)
            ]
        found: list[tuple[str, str]] = []
        for index, item in enumerate(a.strip() for a in attached.split(",") if a.strip()):
            name, _, interface = item.partition("@")
            found.append((name.strip(), interface.strip() or f"net{index + 1}"))
        return found

    def gke_interfaces(self) -> list[tuple[str, str]] | None:
        """(interface, network) of each entry of GKE multi-networking's annotation; None when it is absent
        or not a JSON list."""
        attached = self.annotations.get(GKE_INTERFACES_ANNOTATION)
        if not isinstance(attached, str):
            return None
        try:
            items = json.loads(attached)
        except ValueError:
            return None
        if not isinstance(items, list):
            return None
        return [(str(i.get("interfaceName", "")), str(i.get("network", ""))) for i in items if isinstance(i, dict)]


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
        return [_template(p) for p in trainjob_pods(obj, runtime.data if runtime is not None else None)]
    if kind in RUNTIME_KINDS:
        return [_template(p) for p in runtime_pods(obj)]
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


def _template(pods: PodSet) -> PodTemplate:
    return PodTemplate(pods.role, pods.replicas, pods.spec, pods.metadata, pods.partial)


def pods(obj: dict[str, Any], subjects: Sequence[Subject] = ()) -> int:
    """Pods the workload runs at once."""
    return sum(t.replicas for t in templates(obj, subjects))


def multi_node(obj: dict[str, Any], subjects: Sequence[Subject] = ()) -> bool:
    """Whether the workload spans several GPU pods (so several nodes)."""
    return sum(t.replicas for t in templates(obj, subjects) if t.gpus) > 1
