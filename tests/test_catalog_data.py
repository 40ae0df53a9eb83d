"""The catalog's data files: every row cites its sources and the day they were checked, a bad row is refused naming
its file, row and key, and the files ship with the package."""

from __future__ import annotations

import fnmatch
import tomllib
from datetime import date
from pathlib import Path

import pytest

from components import catalog
from components.catalog.clouds import load
from components.catalog.datafile import HERE, AwsFile, CatalogError, GcpFile, GpuFile, read

REPO = Path(__file__).resolve().parents[1]
FILES = {"aws.yaml": AwsFile, "gcp.yaml": GcpFile, "gpus.yaml": GpuFile}

# Figures no source read confirms, by row: each file says what they rest on (`unverified`). A new one is a decision
# a reviewer sees here, not a silent gap.
UNVERIFIED = {
    "aws.yaml": {"p5", "p5en", "p6-b200", "p6-b300", "p6e-gb200", "g7e"},
    "gcp.yaml": {"a2-ultragpu", "a4-highgpu", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal", "g2-standard"},
    "gpus.yaml": set(),
}


def cited_rows(data: AwsFile | GcpFile | GpuFile) -> list[tuple[str, list[str], date | None, list[str]]]:
    """(row name, sources, checked, unverified) of every family, machine and GPU model, each machine with its
    family's sources and date beside its own."""
    if isinstance(data, GpuFile):
        return [(gpu.model, gpu.sources, gpu.checked, gpu.unverified) for gpu in data.gpus]
    rows = []
    for family in data.families:
        rows.append((family.family, family.sources, family.checked, family.unverified))
        for machine in family.machines:
            sources = family.sources + machine.sources
            rows.append((machine.name, sources, machine.checked or family.checked, machine.unverified))
    return rows


@pytest.mark.parametrize("file", FILES)
def test_every_row_cites_a_source_and_the_day_it_was_checked(file: str) -> None:
    data = read(HERE / file, FILES[file])
    for name, sources, checked, _ in cited_rows(data):
        assert sources, f"{file}: {name} cites no source"
        assert all(source.strip() for source in sources), f"{file}: {name} has an empty source"
        assert checked is not None, f"{file}: {name} has no date checked"
        assert date(2026, 1, 1) <= checked <= date.today(), f"{file}: {name} checked {checked}"


@pytest.mark.parametrize("file", FILES)
def test_the_unverified_figures_are_the_known_ones(file: str) -> None:
    data = read(HERE / file, FILES[file])
    assert {name for name, _, _, unverified in cited_rows(data) if unverified} == UNVERIFIED[file]


def test_every_catalogued_machine_is_a_row_of_a_data_file() -> None:
    for provider in ("aws", "gcp"):
        data = read(HERE / f"{provider}.yaml", FILES[f"{provider}.yaml"])
        rows = {machine.name for family in data.families for machine in family.machines}
        assert rows == set(catalog.names(provider))


def test_the_catalog_is_read_once_per_process() -> None:
    assert catalog.lookup("aws", "p5.48xlarge") is catalog.lookup("aws", "p5.48xlarge")
    assert catalog.names("gcp") is catalog.names("gcp")


def _broken(tmp_path: Path, file: str, old: str, new: str) -> Path:
    text = (HERE / file).read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} is not in {file}"
    broken = tmp_path / file
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")
    return broken


# (file, text replaced, replacement, what the error names: the row, then the key or the complaint)
BAD_ROWS = [
    pytest.param(
        "aws.yaml",
        "{name: p4d.24xlarge, gpus: 8,",
        "{name: p4d.24xlarge, gpus: '8',",
        ["row p4d.24xlarge", "key 'gpus'", "valid integer", "'8'"],
        id="a string where a count goes",
    ),
    pytest.param(
        "aws.yaml",
        "{name: g5.xlarge, gpus: 1, vcpus: 4,",
        "{name: g5.xlarge, vcpus: 4,",
        ["row g5.xlarge", "key 'gpus' is missing"],
        id="a figure missing",
    ),
    pytest.param(
        "aws.yaml",
        "{name: g6.xlarge, gpus: 1,",
        "{name: g6.xlarge, gpu: 1, gpus: 1,",
        ["row g6.xlarge", "key 'gpu' is not one this row takes"],
        id="a key misspelt",
    ),
    pytest.param(
        "aws.yaml",
        "{name: g6.xlarge, gpus: 1,",
        "{name: g6.xlarge, gpus: 0,",
        ["row g6.xlarge", "key 'gpus'", "greater than or equal to 1"],
        id="no GPU",
    ),
    pytest.param(
        "aws.yaml",
        "network_cards: 4, network_gbps: 400, local_storage_gb: 8000}",
        "network_cards: 2, network_gbps: 400, local_storage_gb: 8000}",
        ["row p4d.24xlarge", "efa_interfaces (4) must be between 0 and network_cards (2)"],
        id="more EFA interfaces than cards",
    ),
    pytest.param(
        "aws.yaml",
        "{name: g6.xlarge,",
        "{name: g5.xlarge,",
        ["row g5.xlarge", "key 'name'", "not a machine of family 'g6'"],
        id="a row in the wrong family",
    ),
    pytest.param(
        "aws.yaml",
        "{name: g5.2xlarge,",
        "{name: g5.xlarge,",
        ["row g5.xlarge", "key 'name'", "listed twice"],
        id="a machine twice",
    ),
    pytest.param(
        "aws.yaml",
        '    sources:\n      - "[KIT]: every figure but the network cards (GPU memory 98304 MiB); EFA from 8xlarge up"\n'
        '      - "[VPC]: network cards"\n    checked: 2026-11-25\n',
        "",
        ["row g7e", "key 'sources' is missing"],
        id="a family citing nothing",
    ),
    pytest.param(
        "aws.yaml",
        "    checked: 2026-11-26\n",
        "",
        ["row p6e-gb200", "key 'checked' is missing"],
        id="sources without the day they were checked",
    ),
    pytest.param(
        "aws.yaml",
        "    checked: 2026-11-26\n",
        "    checked: '2026-11-26'\n",
        ["row p6e-gb200", "key 'checked'", "valid date"],
        id="a date as text",
    ),
    pytest.param(
        "aws.yaml",
        '"[VPC]: 16 network cards"',
        '"the vendor said so"',
        ["row p5en", "key 'sources'", "names no URL"],
        id="a source nobody can check",
    ),
    pytest.param(
        "aws.yaml",
        '"[BATCH]: the g6',
        '"[BATCH2]: the g6',
        ["row g6", "key 'sources'", "[BATCH2] is not in the references"],
        id="a reference that does not exist",
    ),
    pytest.param(
        "gcp.yaml",
        "        gpu_nic_gbps: 200\n        gke_least_versions: [1.27",
        "        gpu_nic_gbps: 200\n        gpu_nics: 2\n        gke_least_versions: [1.27",
        ["key 'gpu_nics' stated twice"],
        id="a key stated twice",
    ),
    pytest.param(
        "gcp.yaml",
        "gke_least_versions: [1.31.4-gke.1183000]",
        "gke_least_versions: [1.31]",
        ["row a3-ultragpu-8g", "key 'gke_least_versions'", "1.31"],
        id="a version YAML reads as a number",
    ),
    pytest.param(
        "gcp.yaml",
        "        gpudirect: tcpx\n",
        "        gpudirect: tcpz\n",
        ["row a3-highgpu-8g", "key 'gpudirect'", "'tcpz'"],
        id="a fabric GKE does not have",
    ),
    pytest.param(
        "gpus.yaml",
        "nvlink_gbs: 600",
        "nvlink_gbs: 600.5",
        ["row NVIDIA A100", "key 'nvlink_gbs'", "600.5"],
        id="a GPU figure of the wrong type",
    ),
]


@pytest.mark.parametrize(("file", "old", "new", "named"), BAD_ROWS)
def test_a_bad_row_is_refused_naming_its_file_row_and_key(
    tmp_path: Path, file: str, old: str, new: str, named: list[str]
) -> None:
    broken = _broken(tmp_path, file, old, new)
    with pytest.raises(CatalogError) as refused:
        if file == "gpus.yaml":
            read(broken, GpuFile)
        else:
            load("aws" if file == "aws.yaml" else "gcp", broken)
    message = str(refused.value)
    assert message.startswith(str(broken)), message
    for part in named:
        assert part in message, message


def test_a_file_that_is_not_yaml_is_refused_with_its_line(tmp_path: Path) -> None:
    broken = _broken(tmp_path, "gcp.yaml", "families:", "families: [")
    with pytest.raises(CatalogError, match=r"(?s)not YAML.*line \d+"):
        load("gcp", broken)


def test_the_data_files_ship_in_the_package() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["components.catalog"]
    shipped = {path.name for path in HERE.iterdir() if any(fnmatch.fnmatch(path.name, p) for p in patterns)}
    assert set(FILES) <= shipped
    assert not {path.name for path in HERE.iterdir() if path.suffix in (".yaml", ".yml", ".json", ".toml")} - shipped


def test_no_catalog_module_is_over_500_lines() -> None:
    lengths = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in HERE.glob("*.py")}
    assert {name: n for name, n in lengths.items() if n > 500} == {}
