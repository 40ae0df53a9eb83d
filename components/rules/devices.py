"""Which extended resources are fabric devices (EFA, RDMA HCAs, SR-IOV functions): from the stack when one is
given, from the objects under review (NetworkAttachmentDefinitions, the Network Operator's NicClusterPolicy),
and from a documented list; never from the shape of a resource's name."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from components.fabric import EFA_RESOURCE
from components.manifests.network import RESOURCE_ANNOTATION
from components.manifests.pod import GPU_RESOURCE
from components.rules.review import once
from components.rules.subject import Subject

DOCUMENTED: dict[str, str] = {
    EFA_RESOURCE: "the AWS EFA Kubernetes device plugin",
    "rdma/rdma_shared_device_a": "the NVIDIA Network Operator's RDMA shared device plugin, as its docs configure it",
    "rdma/rdma_shared_device_b": "the NVIDIA Network Operator's RDMA shared device plugin, as its docs configure it",
    "rdma/hca_shared_devices_a": "the k8s-rdma-shared-dev-plugin's default config",
    "rdma/ib": "CoreWeave's InfiniBand device resource",
    "nvidia.com/hostdev": "the NVIDIA Network Operator's host-device network example",
}
"""Fabric device resources known without a stack, with where each comes from."""
_NOT_DEVICES = ("cpu", "memory", "ephemeral-storage", "pods", GPU_RESOURCE)
_NOT_DEVICE_PREFIXES = ("hugepages-", "nvidia.com/mig-", "nvidia.com/gpu.")
_RDMA_PREFIX = "rdma"
"""The RDMA shared device plugin's default resource prefix."""


def _extended(resource: str) -> bool:
    """Whether a resource is an extended one that could be a device (not CPU, memory, GPUs or huge pages)."""
    return resource not in _NOT_DEVICES and not resource.startswith(_NOT_DEVICE_PREFIXES)


def _nic_cluster_policy(spec: Mapping[str, Any]) -> Iterable[str]:
    """The resources a NicClusterPolicy's RDMA shared device plugin advertises (its config is a JSON string)."""
    plugin = spec.get("rdmaSharedDevicePlugin")
    config = plugin.get("config") if isinstance(plugin, Mapping) else None
    try:
        parsed = json.loads(config) if isinstance(config, str) else {}
    except ValueError:
        return []
    prefix = parsed.get("resourcePrefix", _RDMA_PREFIX) if isinstance(parsed, dict) else _RDMA_PREFIX
    items = parsed.get("configList") if isinstance(parsed, dict) else None
    return [
        f"{prefix}/{i['resourceName']}"
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict) and isinstance(i.get("resourceName"), str)
    ]


@once
def known(subjects: Iterable[Subject]) -> tuple[frozenset[str], bool]:
    """The fabric device resources the subjects tell of (with the documented ones), and whether they are all
    of the cluster's (a stack's pools state theirs)."""
    found = set(DOCUMENTED)
    complete = False
    for s in subjects:
        data = s.data
        if s.kind == "NodePool" and isinstance(data.get("device_resources"), list):
            complete = True
            found.update(str(r) for r in data["device_resources"])
        elif s.kind == "NetworkAttachmentDefinition":
            annotations = (data.get("metadata") or {}).get("annotations")
            resource = annotations.get(RESOURCE_ANNOTATION) if isinstance(annotations, Mapping) else None
            if isinstance(resource, str) and resource:
                found.add(resource)
        elif s.kind == "NicClusterPolicy" and isinstance(data.get("spec"), Mapping):
            found.update(_nic_cluster_policy(data["spec"]))
    return frozenset(found), complete


def requests_device(requested: Mapping[str, Any], devices: frozenset[str], complete: bool) -> bool | None:
    """Whether a container requests a fabric device: True or False, or None when it requests an extended
    resource the rules cannot place (possibly a device plugin's they were not told of)."""
    if any(r in devices for r in requested):
        return True
    unknown = [r for r in requested if _extended(r)]
    return None if unknown and not complete else False
