"""The catalog's data files: the typed shape of their rows, and reading one with an error that names file, row and key.

Every family of machines (and every GPU model) cites the sources its figures were read from and the day they were
last compared with them; a row that adds figures of its own cites those too. A source is a URL, a reference key of
the file's `references` in brackets (`[KIT]`), or a repository path or issue (`owner/repo#123`).
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Self, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from components.catalog.kinds import Arch, GpuDirect

HERE = Path(__file__).resolve().parent
"""The folder the data files ship in, beside this module."""

_REFERENCE = re.compile(r"\[([A-Z][A-Z0-9]*)\]")
_CHECKABLE = re.compile(r"https?://\S|\[[A-Z][A-Z0-9]*\]|[\w.-]+/[\w.#@-]")
"""What a source must name to be checked against: a URL, a reference key, or a path (owner/repo#123, dir/file)."""


class CatalogError(ValueError):
    """A data file the catalog cannot take: the message names the file, the row and the key."""


Text = Annotated[str, Field(min_length=1)]
Count = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
Figure = Annotated[int | float, Field(ge=0)]
"""A bandwidth as the file states it: an int stays an int, so what render prints from it does not change."""


class _Row(BaseModel):
    # Only a whole file is ever validated: its schema, rows included, is built then, once, and no other.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


class _Cited(_Row):
    """Figures with their sources and the day they were last checked against them."""

    sources: list[Text] = []
    """Where the figures come from: a URL, a `[KEY]` of the file's references, or a repository path or issue, and
    which figures it gives."""
    checked: date | None = None
    """The day the figures were last compared with their sources."""
    unverified: list[Text] = []
    """Figures no source read confirms, each with what it rests on instead."""

    @model_validator(mode="after")
    def _cites_checkably(self) -> Self:
        if self.sources and self.checked is None:
            raise ValueError("key 'checked' is missing: sources come with the day they were last read")
        if self.checked is not None and not self.sources:
            raise ValueError("key 'sources' is missing: a day checked says when sources were read, and names none")
        for source in self.sources:
            if not _CHECKABLE.search(source):
                raise ValueError(f"key 'sources': {source!r} names no URL, [REFERENCE] or repository path to check")
        return self


class _Family(_Cited):
    """Machines that share a GPU: what they have in common, cited, and their rows."""

    family: Text
    gpu_model: Text
    gpu_memory_gib: Positive
    arch: Arch = "x86_64"

    @model_validator(mode="after")
    def _cited(self) -> Self:
        if not self.sources:
            raise ValueError("key 'sources' is missing: a family cites at least one source, and the day it was checked")
        return self


class _Machine(_Cited):
    """The figures of one machine type that its family does not give."""

    name: Text
    gpus: Positive
    vcpus: Positive
    memory_gib: Positive
    busbw_floor_gbs: Figure = 0
    busbw_floor_source: str = ""

    @model_validator(mode="after")
    def _floor_names_its_source(self) -> Self:
        if bool(self.busbw_floor_gbs) != bool(self.busbw_floor_source):
            raise ValueError("keys 'busbw_floor_gbs' and 'busbw_floor_source' come together: a floor names its source")
        return self


class AwsMachine(_Machine):
    """One AWS instance type (see MachineType for each figure)."""

    efa_interfaces: Count
    network_cards: Positive
    network_gbps: Figure
    local_storage_gb: Count
    efa_card_indices: list[Count] = []
    efa_gbps: Figure = 0
    ultraservers: dict[int, Text] = {}
    """The UltraServers the type is sold in, by instances per UltraServer."""


class AwsFamily(_Family):
    """An AWS instance family: `family.size` for each row."""

    gpudirect_rdma: bool
    machines: list[AwsMachine] = Field(min_length=1)


class GcpMachine(_Machine):
    """One GCP machine type (see MachineType for each figure)."""

    network_gbps: Figure = 0
    local_ssds: Count = 0
    local_ssd_gb: Positive | None = None
    """The size of one bundled local SSD, where it is not the usual 375 GB."""
    gpudirect: GpuDirect | None = None
    gpu_nics: Count = 0
    gpu_nic_gbps: Count = 0
    extra_gvnics: Count = 0
    gib_tuner_config: str = ""
    gke_least_versions: list[Annotated[str, Field(pattern=r"^1\.[0-9]+\.[0-9]+-gke\.[0-9]+$")]] = []
    bare_metal: bool = False

    @model_validator(mode="after")
    def _ssd_size_needs_ssds(self) -> Self:
        if self.local_ssd_gb is not None and not self.local_ssds:
            raise ValueError("key 'local_ssd_gb': the size of one of the row's local_ssds, and it has none")
        return self


class GcpFamily(_Family):
    """A GCP machine series (the part of the name before its size): `family-suffix` for each row."""

    accelerator_type: Text
    machines: list[GcpMachine] = Field(min_length=1)


class Gpu(_Cited):
    """A GPU model's NVLink, matched to a machine's GPU model by its longest known prefix."""

    model: Text
    nvlink_gbs: Positive
    """NVLink bandwidth per GPU, both directions together, in GB/s."""
    nvlink_domain_nodes: Count = 0
    """The most nodes one NVLink domain joins (a rack-scale system); 0 when NVLink stays inside the node."""

    @model_validator(mode="after")
    def _cited(self) -> Self:
        if not self.sources:
            raise ValueError(
                "key 'sources' is missing: a GPU model cites at least one source, and the day it was checked"
            )
        return self


class _File(_Row):
    references: dict[Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9]*$")], Text] = {}
    """Sources many rows cite, by key: a row's source cites one as `[KEY]`."""


class AwsFile(_File):
    """aws.yaml: the AWS instance families and their sizes."""

    families: list[AwsFamily] = Field(min_length=1)


class GcpFile(_File):
    """gcp.yaml: the GCP machine series and their machine types."""

    families: list[GcpFamily] = Field(min_length=1)


class GpuFile(_File):
    """gpus.yaml: the GPU models with NVLink."""

    gpus: list[Gpu] = Field(min_length=1)


F = TypeVar("F", bound=_File)
_FIELDS = {
    name
    for model in (AwsFile, AwsFamily, AwsMachine, GcpFile, GcpFamily, GcpMachine, GpuFile, Gpu)
    for name in model.model_fields
}
"""Every key a data file can hold: what an error's location names, beside list indexes and a union's member."""


class _UniqueKeys(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML's safe loader, refusing a key stated twice in one mapping (PyYAML would keep the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping, after checking no key repeats."""
        seen: dict[tuple[str, Any], int] = {}
        for key_node, _ in node.value:
            key = (key_node.tag, key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node))
            if key in seen:
                raise CatalogError(
                    f"key {key_node.value!r} stated twice in one mapping, lines {seen[key] + 1} and "
                    f"{key_node.start_mark.line + 1}"
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def read(path: Path, model: type[F]) -> F:
    """The data file at `path`, validated as `model`; a CatalogError naming the file, row and key if it is not one."""
    try:
        with path.open(encoding="utf-8") as stream:
            raw = yaml.load(stream, Loader=_UniqueKeys)
    except CatalogError as exc:
        raise CatalogError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: not YAML: {exc}") from None
    try:
        data = model.model_validate(raw)
    except ValidationError as exc:
        problems: dict[str, list[str]] = {}
        for error in exc.errors(include_url=False):
            at, problem = _describe(raw, error)
            problems.setdefault(at, []).append(problem)
        # A union's members each report the same key: one line, its members' complaints side by side.
        raise CatalogError("; ".join(f"{path}: {at}{' or '.join(p)}" for at, p in problems.items())) from None
    _check_references(path, raw, data)
    return data


def where(path: Path, raw: Any, loc: tuple[int | str, ...]) -> str:
    """`FILE: row NAME (families[3].machines[1])`: the row a location in a data file falls in, for an error."""
    return f"{path}: {_row(raw, loc)}"


def _row(raw: Any, loc: tuple[int | str, ...]) -> str:
    """`row NAME (families[3].machines[1])`: the innermost named row on the way to `loc`, and the way there."""
    row, dotted, node = "", "", raw
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            node = node[part]
            dotted += f"[{part}]"
            if isinstance(node, dict) and (label := node.get("name") or node.get("family") or node.get("model")):
                row = str(label)
        elif isinstance(node, dict) and part in node and isinstance(node[part], dict | list):
            node = node[part]
            dotted += f".{part}" if dotted else str(part)
        else:
            break
    return f"row {row or '(top level)'} ({dotted or 'the file'})"


def _describe(raw: Any, error: Any) -> tuple[str, str]:
    """One validation error: where (its row and key), and what is wrong with the value found."""
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{_row(raw, loc)}: key {loc[-1]!r}", " is not one this row takes (a typo?)"
    keys = [part for part in loc if isinstance(part, str) and part in _FIELDS]
    if kind == "missing":
        return f"{_row(raw, loc)}: key {keys[-1]!r}", " is missing"
    message = str(error["msg"]).removeprefix("Value error, ")
    if kind == "value_error" or not keys:
        return f"{_row(raw, loc)}: ", message
    return f"{_row(raw, loc)}: key {keys[-1]!r}: ", f"{message}, found {error.get('input')!r}"


def _check_references(path: Path, raw: Any, data: _File) -> None:
    """Every `[KEY]` a source cites is one of the file's references, and every reference is cited."""
    cited: set[str] = set()
    for loc, sources in _all_sources(data):
        for source in sources:
            for key in _REFERENCE.findall(source):
                if key not in data.references:
                    raise CatalogError(f"{where(path, raw, loc)}: key 'sources': [{key}] is not in the references")
                cited.add(key)
    if unused := sorted(set(data.references) - cited):
        raise CatalogError(f"{path}: references {unused} are cited by no row")


def _all_sources(data: _File) -> list[tuple[tuple[int | str, ...], list[str]]]:
    """(location, sources) of every cited row of a file."""
    found: list[tuple[tuple[int | str, ...], list[str]]] = []
    if isinstance(data, AwsFile | GcpFile):
        for i, family in enumerate(data.families):
            found.append((("families", i), family.sources))
            found.extend((("families", i, "machines", j), m.sources) for j, m in enumerate(family.machines))
    if isinstance(data, GpuFile):
        found.extend((("gpus", i), gpu.sources) for i, gpu in enumerate(data.gpus))
    return found
