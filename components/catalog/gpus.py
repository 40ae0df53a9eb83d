"""GPU models' NVLink, from gpus.yaml: bandwidth per GPU and, on rack-scale systems, the nodes one domain joins."""

from __future__ import annotations

from components.catalog.datafile import HERE, GpuFile, read

_GPUS = read(HERE / "gpus.yaml", GpuFile).gpus
_NVLINK_GBS: dict[str, int] = {gpu.model: gpu.nvlink_gbs for gpu in _GPUS}
_NVLINK_DOMAIN_NODES: dict[str, int] = {gpu.model: gpu.nvlink_domain_nodes for gpu in _GPUS if gpu.nvlink_domain_nodes}


def nvlink_domain_nodes(gpu_model: str | None) -> int:
    """The most nodes one NVLink domain of a GPU model joins (18 for an NVL72 rack); 0 when NVLink stays
    inside the node or the model is unknown."""
    if not gpu_model:
        return 0
    known = [prefix for prefix in _NVLINK_DOMAIN_NODES if gpu_model.startswith(prefix)]
    return _NVLINK_DOMAIN_NODES[max(known, key=len)] if known else 0


def nvlink_gbs(gpu_model: str | None) -> int:
    """A GPU model's NVLink bandwidth per GPU, both directions together, in GB/s; 0 without NVLink or when the
    model is unknown."""
    if not gpu_model:
        return 0
    known = [prefix for prefix in _NVLINK_GBS if gpu_model.startswith(prefix)]
    return _NVLINK_GBS[max(known, key=len)] if known else 0
