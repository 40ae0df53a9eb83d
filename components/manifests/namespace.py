"""Namespaces, and the GPU quota of those that declare one."""

from __future__ import annotations

from typing import Any

from components import quantity
from components.manifests.meta import metadata
from components.manifests.pod import GPU_RESOURCE


def namespace(name: str) -> dict[str, Any]:
    """A Namespace."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(name)}


def gpu_quota(name: str, gpus: int) -> dict[str, Any]:
    """A ResourceQuota capping the GPUs pods in a namespace may request."""
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": metadata("gpu-quota", name),
        "spec": {"hard": quantity.quantities({f"requests.{GPU_RESOURCE}": gpus})},
    }
