"""Small builders of specs and pools for tests, with the defaults a typical job has."""

from __future__ import annotations

from typing import Any

from components import fabriccheck
from components.fabriccheck import FabricCheck
from components.manifests.plan import JobPlan, SchedulerKind, plan
from components.manifests.trainingruntime import runtime_names
from components.models import NetworkConfig, NodePoolSpec, TopologyLevelSpec, TrainingJobSpec
from components.models.nodepool import FabricCheckSpec
from components.pool import Pool
from components.pools import resolve_pools
from components.topology import provider_topology
from components.versions import TRAINER_MPI_IMAGE

ROCE_NETWORK = {
    "name": "roce-network",
    "namespace": "training",
    "type": "macvlan",
    "master": "enp94s0f0",
    "ipam": {"type": "whereabouts", "range": "192.168.10.0/24"},
    "interface": "net1",
}

IPOIB_NETWORK = {
    "name": "ib-network",
    "namespace": "training",
    "type": "ipoib",
    "master": "ibs1",
    "ipam": {"type": "whereabouts", "range": "192.168.40.0/24"},
    "interface": "net1",
}
"""An IPoIB network: InfiniBand's secondary interface beside the RDMA shared device plugin."""

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


GKE_MACHINES = {"tcpx": "a3-highgpu-8g", "tcpxo": "a3-megagpu-8g", "rdma": "a4-highgpu-8g"}
"""The GKE machine a test pool of each GPUDirect fabric runs on."""


def pool(fabric: str = "tcp", **overrides: Any) -> Pool:
    """A resolved pool: an existing-cluster 8-GPU pool, a p5.48xlarge pool for efa, a GKE pool of the
    fabric's machine for tcpx / tcpxo / rdma."""
    network = NetworkConfig.model_validate({"networks": [ROCE_NETWORK, IPOIB_NETWORK]})
    if fabric == "efa":
        spec = {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 4, "zone": "us-east-1a"}
        provider, region = "aws", "us-east-1"
    elif fabric in GKE_MACHINES:
        spec = {"name": "a3", "machineType": GKE_MACHINES[fabric], "maxNodes": 4, "zone": "us-central1-a"}
        provider, region = "gcp", "us-central1"
    else:
        spec = {
            "name": "h100",
            "gpusPerNode": 8,
            "maxNodes": 4,
            "fabric": fabric,
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        }
        if fabric in ("roce", "infiniband"):
            spec["networks"] = ["roce-network" if fabric == "roce" else "ib-network"]
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


def with_trainer(p: Pool) -> Pool:
    """The pool as a stack with Kubeflow Trainer on resolves it: with its ClusterTrainingRuntimes."""
    return p.model_copy(update={"runtimes": runtime_names(p), "mpi_image": TRAINER_MPI_IMAGE})


def with_topology(p: Pool, levels: list[dict[str, str]] | None = None) -> Pool:
    """The pool as a stack with scheduler.topology on resolves it (`levels` for an existing cluster)."""
    declared = [TopologyLevelSpec.model_validate(level) for level in levels or []]
    topology = provider_topology(p.provider, p.machine_type, declared, nvlink=p.nvlink_domain_nodes > 0)
    return p.model_copy(update={"topology": topology})


def gb200(**overrides: Any) -> Pool:
    """An existing cluster's GB200 NVL72 pool: 4 GPUs per node, NVLink domains of 18 nodes."""
    spec: dict[str, Any] = {
        "name": "gb200",
        "gpusPerNode": 4,
        "gpuModel": "NVIDIA GB200",
        "maxNodes": 36,
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"},
    }
    return pool("tcp", **{**spec, **overrides})


def checked(
    fabric: str = "efa", scheduler: SchedulerKind = "none", queue: str | None = None, **spec: Any
) -> FabricCheck:
    """The fabric check of a pool of the given fabric that keeps two nodes, with `spec` as its fabricCheck."""
    found, reason, issues = fabriccheck.resolve(
        FabricCheckSpec.model_validate(spec), pool(fabric, minNodes=2), scheduler, queue, path="nodePools[0]"
    )
    assert found is not None and not issues, (reason, issues)
    return found
