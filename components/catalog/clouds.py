"""Each cloud's machine types, read from its data file (aws.yaml, gcp.yaml) and checked row by row."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.catalog.datafile import HERE, AwsFile, CatalogError, GcpFile, read, where
from components.catalog.kinds import Provider
from components.catalog.machine import MachineType

Loc = tuple[int | str, ...]
GCP_LOCAL_SSD_GB = 375
"""The size of one GCP local SSD."""


@dataclass(frozen=True, slots=True)
class Cloud:
    """One cloud's catalog: its machine types by name, and (AWS) the UltraServers each type is sold in."""

    machines: dict[str, MachineType]
    ultraservers: dict[str, dict[int, str]]


def load(provider: Provider, path: Path | None = None) -> Cloud:
    """The catalog of one cloud, from its data file (the one shipped beside this module unless `path` says);
    a CatalogError naming the file, row and key when a row is not a machine the catalog can take."""
    path = path or HERE / f"{provider}.yaml"
    if provider == "aws":
        return _aws(path, read(path, AwsFile))
    return _gcp(path, read(path, GcpFile))


def _aws(path: Path, data: AwsFile) -> Cloud:
    """AWS rows as machine types: `family.size`, each size with its family's GPU."""
    machines: dict[str, MachineType] = {}
    ultraservers: dict[str, dict[int, str]] = {}
    for loc, family, row in _rows(path, data, "."):
        with _naming(path, data, loc):
            machines[row.name] = MachineType(
                name=row.name,
                provider="aws",
                gpus=row.gpus,
                gpu_model=family.gpu_model,
                gpu_memory_gib=family.gpu_memory_gib,
                vcpus=row.vcpus,
                memory_gib=row.memory_gib,
                efa_interfaces=row.efa_interfaces,
                network_cards=row.network_cards,
                efa_card_indices=tuple(row.efa_card_indices),
                efa_gbps=row.efa_gbps,
                gpudirect_rdma=family.gpudirect_rdma,
                local_storage_gb=row.local_storage_gb,
                network_gbps=row.network_gbps,
                busbw_floor_gbs=row.busbw_floor_gbs,
                busbw_floor_source=row.busbw_floor_source,
                arch=family.arch,
            )
        if row.ultraservers:
            ultraservers[row.name] = dict(row.ultraservers)
    return Cloud(machines, ultraservers)


def _gcp(path: Path, data: GcpFile) -> Cloud:
    """GCP rows as machine types: `series-suffix`, each with its series' GPU and accelerator type."""
    machines: dict[str, MachineType] = {}
    for loc, family, row in _rows(path, data, "-"):
        with _naming(path, data, loc):
            machines[row.name] = MachineType(
                name=row.name,
                provider="gcp",
                gpus=row.gpus,
                gpu_model=family.gpu_model,
                gpu_memory_gib=family.gpu_memory_gib,
                vcpus=row.vcpus,
                memory_gib=row.memory_gib,
                accelerator_type=family.accelerator_type,
                local_storage_gb=row.local_ssds * (row.local_ssd_gb or GCP_LOCAL_SSD_GB),
                local_ssds=row.local_ssds,
                network_gbps=row.network_gbps,
                gpudirect=row.gpudirect,
                gpu_nics=row.gpu_nics,
                gpu_nic_gbps=row.gpu_nic_gbps,
                extra_gvnics=row.extra_gvnics,
                gib_tuner_config=row.gib_tuner_config,
                gke_least_versions=tuple(row.gke_least_versions),
                busbw_floor_gbs=row.busbw_floor_gbs,
                busbw_floor_source=row.busbw_floor_source,
                arch=family.arch,
                bare_metal=row.bare_metal,
            )
    return Cloud(machines, {})


def _rows(path: Path, data: AwsFile | GcpFile, separator: str) -> Iterator[tuple[Loc, Any, Any]]:
    """(location, family, row) of every row, each named inside its family and once in the file."""
    seen: set[str] = set()
    for i, family in enumerate(data.families):
        for j, row in enumerate(family.machines):
            loc: Loc = ("families", i, "machines", j)
            prefix = family.family + separator
            if not row.name.startswith(prefix) or len(row.name) == len(prefix):
                raise CatalogError(f"{_where(path, data, loc)}: key 'name': not a machine of family {family.family!r}")
            if row.name in seen:
                raise CatalogError(f"{_where(path, data, loc)}: key 'name': {row.name!r} is listed twice")
            seen.add(row.name)
            yield loc, family, row


@contextmanager
def _naming(path: Path, data: AwsFile | GcpFile, loc: Loc) -> Iterator[None]:
    """Figures of a row that contradict each other (MachineType refuses them) as a CatalogError naming the row."""
    try:
        yield
    except ValueError as exc:
        raise CatalogError(f"{_where(path, data, loc)}: {exc}") from None


def _where(path: Path, data: AwsFile | GcpFile, loc: Loc) -> str:
    """`where` for a file already validated."""
    return where(path, data.model_dump(include={"families"}), loc)
