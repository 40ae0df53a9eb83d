"""One pod template of a workload, as the rules read it: role, replicas, spec, and what its pods attach."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from components.fabric import GKE_INTERFACES_ANNOTATION, MULTUS_ANNOTATION
from components.manifests.pod import GPU_RESOURCE
from components.rules.review import once

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
    gpus: int = dataclasses.field(init=False)
    """GPUs one pod requests (limits, where GPUs are set)."""

    def __post_init__(self) -> None:
        # Counted once: every GPU rule asks each template, and a render's review asks half a million times.
        object.__setattr__(self, "gpus", gpus_of(self.spec))

    @property
    def containers(self) -> list[dict[str, Any]]:
        """Init and app containers."""
        return [*self.spec.get("initContainers", []), *self.spec.get("containers", [])]

    @property
    def annotations(self) -> dict[str, Any]:
        """The pod's annotations."""
        found = self.metadata.get("annotations")
        return found if isinstance(found, dict) else {}

    @once  # a dozen rules ask of every container
    def env(self, container: dict[str, Any]) -> dict[str, str]:
        """A container's plain environment values (shared within a review: callers must not change them)."""
        return {e["name"]: str(e["value"]) for e in container.get("env", []) if e.get("value") is not None}

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


def gpus_of(spec: dict[str, Any]) -> int:
    """GPUs a pod (spec) requests: its containers' limits, else requests (an extended resource's are equal)."""
    total = 0
    for container in spec.get("containers", []):
        resources = container.get("resources") or {}
        value = (resources.get("limits") or {}).get(GPU) or (resources.get("requests") or {}).get(GPU)
        total += count(value, 0)
    return total


def count(value: Any, default: Any) -> Any:
    """A count of things (replicas, GPUs, nodes) as an int at least 0, or `default` when the value is no number
    (a bool, a placeholder such as `$NUM_NODES`, a map)."""
    if type(value) is int:  # the common case, first
        return max(value, 0)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        return max(int(float(value)), 0)
    except (ValueError, OverflowError):
        return default


_LISTS = ("containers", "initContainers", "volumes", "tolerations", "resourceClaims")
_MAPS = ("nodeSelector", "affinity", "securityContext")
_CONTAINER_LISTS = ("env", "volumeMounts", "command", "args", "ports", "envFrom")
_CONTAINER_MAPS = ("securityContext", "resources", "readinessProbe")


def pod_spec(value: Any) -> dict[str, Any]:
    """A pod spec whose fields the rules read have the types the API gives them: lists of maps, maps; a field
    of another type (what the API server would reject) is left out, so rules never trip on it."""
    spec = dict(value) if isinstance(value, dict) else {}
    for field in _LISTS:
        if field in spec or field == "containers":
            items = spec.get(field)
            spec[field] = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    for field in _MAPS:
        if field in spec and not isinstance(spec[field], dict):
            del spec[field]
    spec["containers"] = [_container(c) for c in spec["containers"]]
    if "initContainers" in spec:
        spec["initContainers"] = [_container(c) for c in spec["initContainers"]]
    return spec


def _container(value: dict[str, Any]) -> dict[str, Any]:
    container = dict(value)
    for field in _CONTAINER_LISTS:
        if field not in container:
            continue
        items = container[field]
        if not isinstance(items, list):
            del container[field]
        elif field in ("command", "args"):
            container[field] = [str(i) for i in items if isinstance(i, str | int | float)]
        else:
            container[field] = [i for i in items if isinstance(i, dict)]
    if "env" in container:
        container["env"] = [e for e in container["env"] if isinstance(e.get("name"), str)]
    for field in _CONTAINER_MAPS:
        if field in container and not isinstance(container[field], dict):
            del container[field]
    if "resources" in container:
        resources = container["resources"]
        container["resources"] = {
            k: v for k, v in resources.items() if k not in ("limits", "requests") or isinstance(v, dict)
        }
    return container
