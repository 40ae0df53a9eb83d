"""The pod templates inside a workload object, whatever its kind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.manifests.pod import GPU_RESOURCE

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

    def env(self, container: dict[str, Any]) -> dict[str, str]:
        """A container's plain environment values."""
        return {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}


def templates(obj: dict[str, Any]) -> list[PodTemplate]:
    """The pod templates of a workload (Job, PyTorchJob, TFJob, MPIJob, Deployment, Pod ...), else none."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
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


def pods(obj: dict[str, Any]) -> int:
    """Pods the workload runs at once."""
    return sum(t.replicas for t in templates(obj))


def multi_node(obj: dict[str, Any]) -> bool:
    """Whether the workload spans several GPU pods (so several nodes)."""
    return sum(t.replicas for t in templates(obj) if t.gpus) > 1
