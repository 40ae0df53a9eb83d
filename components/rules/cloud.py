"""Rules over what the cloud side builds: GPU node pools and the storage that must outlive the stack."""

from __future__ import annotations

from collections.abc import Iterator

from components.rules.rule import Advice, Rule, Settings
from components.rules.subject import Subject

_BLOCKING = ("NoSchedule", "NoExecute", "NO_SCHEDULE", "NO_EXECUTE")


def gpu_pools_tainted(subject: Subject, _: list[Subject], __: Settings) -> Iterator[str]:
    """GPU node pools are tainted, so that only pods that asked for GPUs land there."""
    data = subject.data
    if data.get("existing"):
        return  # an existing cluster's pool: not built here
    if data.get("gpus") and not any(t.get("effect") in _BLOCKING for t in data.get("taints") or []):
        yield "a GPU pool without a NoSchedule taint fills its nodes with pods that need no GPU"


def efa_placement(subject: Subject, _: list[Subject], __: Settings) -> Iterator[str]:
    """EFA pools have a cluster placement group in one zone."""
    data = subject.data
    if not data.get("efa") or data.get("existing"):
        return
    if data.get("zones") != 1:
        yield "an EFA pool spans several zones; EFA traffic does not cross a zone"
    if not data.get("placement_group") and not data.get("reserved"):
        # A reservation or Capacity Block brings its own placement, and a placement group on top of it fails.
        yield "an EFA pool without a cluster placement group (fine on a reservation that brings its own placement)"


def rdma_rails(subject: Subject, _: list[Subject], __: Settings) -> Iterator[str]:
    """RoCE / InfiniBand pools give every GPU a rail of its own and name their HCAs exactly."""
    yield from subject.data.get("rdma_advice") or ()


def gpu_pool_repaired(subject: Subject, _: list[Subject], __: Settings) -> Iterator[str]:
    """GPU pools have a health agent that finds GPU and NIC faults while they run, and something that acts on them."""
    data = subject.data
    if not data.get("gpus") or "repair" not in data:
        return  # not a GPU pool, or where it comes from says nothing about repair (a bare Karpenter NodePool)
    if not data["repair"]:
        yield (
            "a GPU pool without a health agent: a failing GPU, an XID storm or a flapping NIC is found by the "
            "training job that crashes on it, and the node keeps taking work"
        )


def storage_retained(subject: Subject, _: list[Subject], __: Settings) -> Iterator[str]:
    """Checkpoint and dataset storage is retained when deleted: the stack's file systems and claims protected
    (a defect), volumes and classes Retain (advice: whether data outlives its claim is the team's call)."""
    data = subject.data
    kind = subject.kind
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    if kind == "PersistentVolume":
        if spec.get("persistentVolumeReclaimPolicy", "Retain") != "Retain":
            yield Advice("the volume's data is deleted with its claim (persistentVolumeReclaimPolicy is not Retain)")
    elif kind == "StorageClass":
        if data.get("reclaimPolicy", "Delete") != "Retain":
            yield Advice("volumes of this class are deleted with their claims (reclaimPolicy defaults to Delete)")
    elif kind == "FileSystem" and data.get("protected") is False:
        yield f"{data.get('type', 'the file system')} can be deleted by the stack (not protected)"


RULES: tuple[Rule, ...] = (
    Rule(
        "gpu-pool-taints",
        "high",
        "mandatory",
        (gpu_pools_tainted.__doc__ or "").strip(),
        "taint GPU pools nvidia.com/gpu=true:NoSchedule (the default of every pool)",
        ("NodePool",),
        gpu_pools_tainted,
        gpu_only=False,
    ),
    Rule(
        "efa-placement",
        "medium",
        "advisory",
        (efa_placement.__doc__ or "").strip(),
        "give the pool a zone and placement: cluster",
        ("NodePool",),
        efa_placement,
        gpu_only=False,
    ),
    Rule(
        "rdma-rails",
        "high",
        "advisory",
        (rdma_rails.__doc__ or "").strip(),
        "declare the pool's `rails` (one network per rail, NCCL_IB_HCA from their devices)",
        ("NodePool",),
        rdma_rails,
        gpu_only=False,
    ),
    Rule(
        "gpu-pool-health-agent",
        "high",
        "advisory",
        (gpu_pool_repaired.__doc__ or "").strip(),
        "keep gpu-training:health repair on (the default): the EKS node monitoring agent with node auto repair and "
        "Karpenter's node repair, GKE auto-repair, or NVSentinel",
        ("NodePool",),
        gpu_pool_repaired,
        gpu_only=False,
    ),
    Rule(
        "storage-retained",
        "critical",
        "mandatory",
        (storage_retained.__doc__ or "").strip(),
        "set reclaimPolicy / persistentVolumeReclaimPolicy Retain and protect file systems and claims",
        ("PersistentVolume", "StorageClass", "FileSystem"),
        storage_retained,
        gpu_only=False,
    ),
)
