"""One pod template of a workload, as the rules read it: role, replicas, spec, and what its pods attach."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from components.fabric import GKE_INTERFACES_ANNOTATION, MULTUS_ANNOTATION
from components.manifests.pod import GPU_RESOURCE

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
