"""AWS pools for tests: a spec and its resolved Pool."""

from __future__ import annotations

from typing import Any

from components.models import NetworkConfig, NodePoolSpec
from components.pool import Pool
from components.pools import resolve_pools


def aws_pool(**fields: Any) -> tuple[NodePoolSpec, Pool]:
    """A p5.48xlarge node group pool in us-east-1a unless told otherwise."""
    data: dict[str, Any] = {
        "name": "p5",
        "instanceType": "p5.48xlarge",
        "maxNodes": 4,
        "zone": "us-east-1a",
        "provisioner": "nodegroup",
    }
    data.update(fields)
    spec = NodePoolSpec.model_validate(data)
    pools, issues = resolve_pools([spec], "aws", "us-east-1", NetworkConfig())
    assert not issues, issues
    return spec, pools[spec.name]
