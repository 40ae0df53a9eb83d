"""Small builders of specs and pools for tests, with the defaults a typical job has."""

from __future__ import annotations

from typing import Any

from components.manifests.plan import JobPlan, SchedulerKind, plan
from components.models import NetworkConfig, NodePoolSpec, TrainingJobSpec
from components.pool import Pool, resolve_pools

ROCE_NETWORK = {
    "name": "roce-network",
    "namespace": "training",
    "type": "macvlan",
    "master": "enp94s0f0",
    "ipam": {"type": "whereabouts", "range": "192.168.10.0/24"},
    "interface": "net1",
}


EFA_RESOURCES = {"memory": "1800Gi"}
"""What an EFA worker on p5.48xlarge states: huge pages need a memory request beside them."""

SRIOV_NETWORK = {
    "name": "sriov-net",
    "namespace": "training",
    "type": "sriov",
    "resourceName": "nvidia.com/sriov_rdma_vf",
    "ipam": {"type": "whereabouts", "range": "192.168.20.0/24"},
}
"""An SR-IOV network whose pods request a VF resource."""


def pool(fabric: str = "tcp", **overrides: Any) -> Pool:
    """A resolved pool: an existing-cluster 8-GPU pool, or a p5.48xlarge pool for efa."""
    network = NetworkConfig.model_validate({"networks": [ROCE_NETWORK]})
    if fabric == "efa":
        spec = {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 4, "zone": "us-east-1a"}
        provider, region = "aws", "us-east-1"
    else:
        spec = {
            "name": "h100",
            "gpusPerNode": 8,
            "maxNodes": 4,
            "fabric": fabric,
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        }
        if fabric in ("roce", "infiniband"):
            spec["networks"] = ["roce-network"]
        provider, region = "existing", None
    spec.update(overrides)
    pools, issues = resolve_pools([NodePoolSpec.model_validate(spec)], provider, region, network)
    assert not issues, issues
    return next(iter(pools.values()))


def job(**fields: Any) -> TrainingJobSpec:
    """A TrainingJobSpec: a 2-node pytorch job unless told otherwise."""
    data: dict[str, Any] = {
        "name": "train",
        "image": "registry.example.com/training:v1",
        "command": ["train.py", "--epochs=1"],
        "nodes": 2,
    }
    data.update(fields)
    return TrainingJobSpec.model_validate(data)


def planned(fabric: str = "tcp", scheduler: SchedulerKind = "none", queue: str | None = None, **fields: Any) -> JobPlan:
    """A job planned on a pool of the given fabric (EFA workers get the memory request huge pages need)."""
    if fabric == "efa":
        fields.setdefault("resources", EFA_RESOURCES)
    return plan(job(**fields), pool(fabric), scheduler, queue)
