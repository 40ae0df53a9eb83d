"""Resolving pool specs in tests: typical pools of each provider, and the helpers that resolve them."""

from __future__ import annotations

from typing import Any

from components.errors import Issue
from components.models import NetworkConfig, NodePoolSpec
from components.pool import Pool, Provider
from components.pools import resolve_pools

REGION: dict[str, str | None] = {"aws": "us-east-1", "gcp": "us-central1", "existing": None}
"""The cluster's region the helpers resolve each provider's pools in."""
SELECTOR = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
"""The node selector of an existing cluster's H100 pool."""

P5 = {"name": "h100", "instanceType": "p5.48xlarge", "maxNodes": 4, "zone": "us-east-1a"}
A3 = {"name": "a3", "machineType": "a3-highgpu-8g", "maxNodes": 4, "zone": "us-central1-a"}
EXISTING = {"name": "h100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": SELECTOR}


def resolve(
    provider: Provider,
    *specs: dict[str, Any],
    networks: list[dict[str, Any]] | None = None,
    gpu_labels: bool = False,
    **network: Any,
) -> tuple[dict[str, Pool], list[Issue]]:
    """The pools of `specs` on `provider` in its REGION, with `networks` declared and the rest of `network`."""
    config = NetworkConfig.model_validate({"networks": networks or [], **network})
    pools = [NodePoolSpec.model_validate(s) for s in specs]
    return resolve_pools(pools, provider, REGION[provider], config, gpu_labels=gpu_labels)


def one(provider: Provider, spec: dict[str, Any], **kwargs: Any) -> Pool:
    """The pool of `spec`, which must resolve without an issue."""
    pools, issues = resolve(provider, spec, **kwargs)
    assert not issues, issues
    return pools[spec["name"]]


def issue_at(issues: list[Issue], path: str) -> Issue:
    """The one issue at `path`."""
    found = [i for i in issues if i.path == path]
    assert len(found) == 1, issues
    return found[0]
