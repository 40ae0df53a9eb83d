"""Tests for the GPU machine type catalog."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.catalog import MachineType, Provider, lookup, names, ultraservers

PROVIDERS: tuple[Provider, ...] = ("aws", "gcp")

# The types the catalog promises to carry; other code sizes jobs and pools from them.
REQUIRED_AWS = {
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.4xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    *(
        f"{family}.{size}"
        for family in ("g5", "g6", "g6e")
        for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")
    ),
}
REQUIRED_GCP = {
    *(f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)),
    "a2-megagpu-16g",
    *(f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)),
    *(f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)),
    "a3-megagpu-8g",
    "a3-ultragpu-8g",
    "a4-highgpu-8g",
    "a4x-highgpu-4g",
    "a4x-maxgpu-4g-metal",
    *(f"g2-standard-{n}" for n in (4, 8, 12, 16, 24, 32, 48, 96)),
    *(f"g4-standard-{n}" for n in (48, 96, 192, 384)),
}

# P instances whose EFA does GPUDirect RDMA; no other catalogued type does.
RDMA_FAMILIES = {"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200"}


def all_entries() -> list[MachineType]:
    """Every catalogued machine type of every provider."""
    return [entry for provider in PROVIDERS for name in names(provider) if (entry := lookup(provider, name))]


def aws_family(name: str) -> str:
    """`p5.48xlarge` -> `p5`."""
    return name.split(".", 1)[0]


def test_p5_48xlarge_has_8_gpus_and_32_efa_on_32_cards() -> None:
    p5 = lookup("aws", "p5.48xlarge")
    assert p5 is not None
    assert (p5.gpus, p5.efa_interfaces, p5.network_cards) == (8, 32, 32)
    assert p5.gpu_model == "NVIDIA H100 80GB"
    assert (p5.vcpus, p5.memory_gib, p5.gpu_memory_gib) == (192, 2048, 80)
    assert p5.has_efa
    assert p5.gpudirect_rdma


def test_a3_highgpu_8g_is_8_h100s() -> None:
    a3 = lookup("gcp", "a3-highgpu-8g")
    assert a3 is not None
    assert a3.accelerator_type == "nvidia-h100-80gb"
    assert a3.gpus == 8
    assert (a3.vcpus, a3.memory_gib) == (208, 1872)


@pytest.mark.parametrize(
    ("name", "gpus", "gpu_model", "efa", "cards"),
    [
        ("p4d.24xlarge", 8, "NVIDIA A100 40GB", 4, 4),
        ("p4de.24xlarge", 8, "NVIDIA A100 80GB", 4, 4),
        ("p5.4xlarge", 1, "NVIDIA H100 80GB", 1, 1),
        ("p5e.48xlarge", 8, "NVIDIA H200 141GB", 32, 32),
        ("p5en.48xlarge", 8, "NVIDIA H200 141GB", 16, 16),
        ("p6-b200.48xlarge", 8, "NVIDIA B200", 8, 8),
        ("g5.xlarge", 1, "NVIDIA A10G", 0, 1),
        ("g5.48xlarge", 8, "NVIDIA A10G", 1, 1),
        ("g6.12xlarge", 4, "NVIDIA L4", 1, 1),
        ("g6e.24xlarge", 4, "NVIDIA L40S", 2, 2),
        ("g6e.48xlarge", 8, "NVIDIA L40S", 4, 4),
    ],
)
def test_aws_key_figures(name: str, gpus: int, gpu_model: str, efa: int, cards: int) -> None:
    entry = lookup("aws", name)
    assert entry is not None
    assert (entry.gpus, entry.gpu_model, entry.efa_interfaces, entry.network_cards) == (gpus, gpu_model, efa, cards)


@pytest.mark.parametrize(
    ("name", "gpus", "accelerator_type"),
    [
        ("a2-highgpu-1g", 1, "nvidia-tesla-a100"),
        ("a2-megagpu-16g", 16, "nvidia-tesla-a100"),
        ("a2-ultragpu-8g", 8, "nvidia-a100-80gb"),
        ("a3-megagpu-8g", 8, "nvidia-h100-mega-80gb"),
        ("a3-ultragpu-8g", 8, "nvidia-h200-141gb"),
        ("a4-highgpu-8g", 8, "nvidia-b200"),
        ("g2-standard-4", 1, "nvidia-l4"),
        ("g2-standard-24", 2, "nvidia-l4"),
        ("g2-standard-32", 1, "nvidia-l4"),
        ("g2-standard-96", 8, "nvidia-l4"),
    ],
)
def test_gcp_key_figures(name: str, gpus: int, accelerator_type: str) -> None:
    entry = lookup("gcp", name)
    assert entry is not None
    assert (entry.gpus, entry.accelerator_type) == (gpus, accelerator_type)


@pytest.mark.parametrize("name", ["p5.96xlarge", "P5.48XLARGE", " p5.48xlarge", "", "a3-highgpu-8g"])
def test_unknown_aws_name_gives_none(name: str) -> None:
    assert lookup("aws", name) is None


@pytest.mark.parametrize("name", ["a3-highgpu-16g", "g2-standard-2", "p5.48xlarge", ""])
def test_unknown_gcp_name_gives_none(name: str) -> None:
    assert lookup("gcp", name) is None


@given(st.text(max_size=40))
def test_lookup_finds_exactly_the_listed_names(name: str) -> None:
    for provider in PROVIDERS:
        entry = lookup(provider, name)
        assert (entry is not None) == (name in names(provider))


def test_lookup_with_an_unknown_provider_is_an_error() -> None:
    with pytest.raises(ValueError, match="azure"):
        lookup("azure", "p5.48xlarge")  # type: ignore[arg-type]


def test_names_of_an_unknown_provider_is_an_error() -> None:
    with pytest.raises(ValueError, match="azure"):
        names("azure")  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_names_are_sorted_unique_and_each_looks_up_to_itself(provider: Provider) -> None:
    listed = names(provider)
    assert list(listed) == sorted(set(listed))
    for name in listed:
        entry = lookup(provider, name)
        assert entry is not None
        assert (entry.name, entry.provider) == (name, provider)


def test_names_cover_every_required_type() -> None:
    assert set(names("aws")) >= REQUIRED_AWS
    assert set(names("gcp")) >= REQUIRED_GCP


def test_no_name_is_catalogued_under_both_providers() -> None:
    assert not set(names("aws")) & set(names("gcp"))


def test_every_gcp_entry_has_an_accelerator_type_and_no_aws_fabric() -> None:
    for entry in all_entries():
        if entry.provider == "gcp":
            assert entry.accelerator_type, entry.name
            assert entry.accelerator_type.startswith("nvidia-"), entry.name
            assert (entry.efa_interfaces, entry.network_cards, entry.gpudirect_rdma) == (0, 1, False), entry.name


def test_no_aws_entry_has_an_accelerator_type() -> None:
    for entry in all_entries():
        if entry.provider == "aws":
            assert entry.accelerator_type is None, entry.name


def test_aws_efa_interfaces_fit_on_the_network_cards() -> None:
    for entry in all_entries():
        if entry.provider == "aws":
            assert 0 <= entry.efa_interfaces <= entry.network_cards, entry.name


def test_has_efa_matches_interface_count() -> None:
    for entry in all_entries():
        assert entry.has_efa == (entry.efa_interfaces > 0), entry.name


def test_gpudirect_rdma_is_exactly_the_p4d_and_newer_p_families() -> None:
    rdma = {aws_family(e.name) for e in all_entries() if e.gpudirect_rdma}
    assert rdma == RDMA_FAMILIES
    for entry in all_entries():
        if entry.provider == "aws" and aws_family(entry.name) in RDMA_FAMILIES:
            assert entry.gpudirect_rdma, entry.name
            assert entry.has_efa, entry.name


def test_multi_card_aws_types_have_one_efa_per_card_but_card_0_of_the_2026_machines() -> None:
    # p6-b300 and p6e-gb200: 17 cards, and card 0 carries ENA only (aws-parallelcluster#7143); p6e-gb200 takes one
    # EFA per GPU on the cards AWS names (EC2 User Guide, "EFA configuration for P6e-GB200 instances").
    for entry in all_entries():
        if entry.provider == "aws" and entry.network_cards > 1 and not entry.efa_card_indices:
            assert entry.efa_interfaces == entry.network_cards - entry.first_efa_card, entry.name
            assert entry.efa_cards == tuple(range(entry.first_efa_card, entry.network_cards)), entry.name
    assert [n for n in names("aws") if lookup("aws", n).efa_card_indices] == ["p6e-gb200.36xlarge"]
    assert [n for n in names("aws") if lookup("aws", n).first_efa_card] == ["p6-b300.48xlarge", "p6e-gb200.36xlarge"]


def test_p6_b300_has_8_b300s_16_efa_on_17_cards_and_6400_gbps() -> None:
    b300 = lookup("aws", "p6-b300.48xlarge")
    assert (b300.gpus, b300.gpu_model, b300.gpu_memory_gib, b300.vcpus, b300.memory_gib) == (
        8,
        "NVIDIA B300",
        268,
        192,
        4096,
    )
    assert (b300.efa_interfaces, b300.network_cards, b300.first_efa_card) == (16, 17, 1)
    assert (b300.network_gbps, b300.fabric_gbps, b300.fabric) == (6400, 6400, "efa")
    assert (b300.local_storage_gb, b300.arch, b300.nvlink_domain_nodes) == (30400, "x86_64", 0)
    assert b300.gpudirect_rdma and not b300.busbw_floor_gbs, "no published floor: the fabric check derives it"


def test_p6e_gb200_is_a_4_gpu_grace_machine_in_an_18_node_nvlink_domain_sold_as_ultraservers() -> None:
    gb200 = lookup("aws", "p6e-gb200.36xlarge")
    assert (gb200.gpus, gb200.gpu_model, gb200.vcpus, gb200.memory_gib, gb200.arch) == (
        4,
        "NVIDIA GB200",
        144,
        960,
        "arm64",
    )
    assert (gb200.efa_interfaces, gb200.network_cards, gb200.efa_cards) == (4, 17, (1, 5, 9, 13))
    # 8 physical 400 Gbps NICs in all, of which each GPU sends 400 Gbps over EFA.
    assert (gb200.network_gbps, gb200.fabric_gbps) == (3200, 1600)
    assert gb200.nvlink_domain_nodes == 18
    assert ultraservers("p6e-gb200.36xlarge") == {9: "u-p6e-gb200x36", 18: "u-p6e-gb200x72"}
    assert ultraservers("p6-b300.48xlarge") == {}


@pytest.mark.parametrize(
    ("size", "gpus", "efa", "cards", "gbps"),
    [
        ("2xlarge", 1, 0, 1, 50),
        ("4xlarge", 1, 0, 1, 50),
        ("8xlarge", 1, 1, 1, 100),
        ("12xlarge", 2, 1, 1, 400),
        ("24xlarge", 4, 2, 2, 800),
        ("48xlarge", 8, 4, 4, 1600),
    ],
)
def test_g7e_sizes(size: str, gpus: int, efa: int, cards: int, gbps: float) -> None:
    g7e = lookup("aws", f"g7e.{size}")
    assert (g7e.gpus, g7e.gpu_memory_gib, g7e.efa_interfaces, g7e.network_cards, g7e.network_gbps) == (
        gpus,
        96,
        efa,
        cards,
        gbps,
    )
    assert g7e.fabric == ("efa" if efa else "tcp") and not g7e.gpudirect_rdma


def test_small_g_sizes_have_no_efa_and_8xlarge_up_do() -> None:
    for family in ("g5", "g6", "g6e"):
        for size, efa in [
            ("xlarge", False),
            ("2xlarge", False),
            ("4xlarge", False),
            ("8xlarge", True),
            ("12xlarge", True),
            ("16xlarge", True),
            ("24xlarge", True),
            ("48xlarge", True),
        ]:
            entry = lookup("aws", f"{family}.{size}")
            assert entry is not None, f"{family}.{size}"
            assert entry.has_efa == efa, f"{family}.{size}"


def test_gpu_counts_are_powers_of_two() -> None:
    for entry in all_entries():
        assert entry.gpus & (entry.gpus - 1) == 0, entry.name


def test_gcp_gpu_count_matches_the_ng_suffix() -> None:
    for name in names("gcp"):
        match = re.fullmatch(r"a\d-\w+-(\d+)g", name)
        if match:
            entry = lookup("gcp", name)
            assert entry is not None, name
            assert entry.gpus == int(match.group(1)), name


def test_aws_vcpus_are_four_per_xlarge_unit() -> None:
    for entry in all_entries():
        if entry.provider == "aws":
            size = entry.name.split(".", 1)[1]
            units = int(size.removesuffix("xlarge") or "1")
            assert entry.vcpus == 4 * units, entry.name


def test_g2_standard_vcpus_and_memory_follow_the_name() -> None:
    for name in names("gcp"):
        if name.startswith("g2-standard-"):
            entry = lookup("gcp", name)
            n = int(name.removeprefix("g2-standard-"))
            assert entry is not None, name
            assert (entry.vcpus, entry.memory_gib) == (n, 4 * n), name


def test_gpu_model_and_memory_are_the_same_across_a_family() -> None:
    families: dict[str, set[tuple[str, int]]] = {}
    for entry in all_entries():
        family = aws_family(entry.name) if entry.provider == "aws" else entry.name.rsplit("-", 1)[0]
        families.setdefault(family, set()).add((entry.gpu_model, entry.gpu_memory_gib))
    assert {family: len(models) for family, models in families.items() if len(models) != 1} == {}


def test_same_accelerator_means_same_gpu_model() -> None:
    by_accelerator: dict[str, set[str]] = {}
    for entry in all_entries():
        if entry.accelerator_type:
            by_accelerator.setdefault(entry.accelerator_type, set()).add(entry.gpu_model)
    assert all(len(models) == 1 for models in by_accelerator.values()), by_accelerator


def test_entries_are_frozen() -> None:
    entry = lookup("aws", "p5.48xlarge")
    assert entry is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.gpus = 4  # type: ignore[misc]


def _machine(**overrides: object) -> MachineType:
    fields: dict[str, object] = {
        "name": "x.large",
        "provider": "aws",
        "gpus": 1,
        "gpu_model": "NVIDIA L4",
        "gpu_memory_gib": 24,
        "vcpus": 4,
        "memory_gib": 16,
    }
    return MachineType(**{**fields, **overrides})  # type: ignore[arg-type]


def test_defaults_mean_no_fabric() -> None:
    entry = _machine()
    assert (entry.efa_interfaces, entry.network_cards, entry.gpudirect_rdma, entry.accelerator_type) == (
        0,
        1,
        False,
        None,
    )
    assert not entry.has_efa


@pytest.mark.parametrize(
    "overrides",
    [
        {"gpus": 0},
        {"vcpus": 0},
        {"memory_gib": 0},
        {"gpu_memory_gib": 0},
        {"network_cards": 0},
        {"efa_interfaces": -1},
        {"efa_interfaces": 2, "network_cards": 1},
        {"gpudirect_rdma": True},
        {"provider": "gcp", "gpudirect": "tcpxo", "gpu_nics": 8, "gpu_nic_gbps": 200, "network_gbps": 1000},
    ],
)
def test_impossible_figures_are_rejected(overrides: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"x\.large"):
        _machine(**overrides)


# GPUDirect machines whose gIB tuner profile or least GKE version no source read names (components/catalog/gcp.yaml
# lists them as unverified): A4X and A4X Max run gIB's own default tuning; A4X has no least version enforced.
UNSOURCED_TUNER = {"a4x-highgpu-4g", "a4x-maxgpu-4g-metal"}
UNSOURCED_LEAST = {"a4x-highgpu-4g"}


def test_every_gib_machine_names_its_tuner_profile_and_no_other_does() -> None:
    # A new RDMA machine without a tuner profile would run NCCL untuned on gIB.
    for name in names("gcp"):
        machine = lookup("gcp", name)
        assert machine is not None
        sourced = machine.gpudirect == "rdma" and name not in UNSOURCED_TUNER
        assert bool(machine.gib_tuner_config) == sourced, name
        assert re.fullmatch(r"tuner_config[a-z0-9_]*\.txtpb", machine.gib_tuner_config or "tuner_config.txtpb"), name


@pytest.mark.parametrize(
    ("name", "gpu_fabric", "total", "gvnics"),
    [
        # Google Cloud, "Networking and GPU machines": "Max total bandwidth" counts the gVNICs (A3 Mega: 8+1).
        ("a3-highgpu-8g", 800, 1000, 1),
        ("a3-megagpu-8g", 1600, 1800, 1),
        ("a3-ultragpu-8g", 3200, 3600, 2),
        ("a4-highgpu-8g", 3200, 3600, 2),
        # A4X: 4 CX-7 beside 2 Titanium NICs; A4X Max: 8 rail-aligned 400 Gbps CX-8 ports beside the host NICs.
        ("a4x-highgpu-4g", 1600, 2000, 2),
        ("a4x-maxgpu-4g-metal", 3200, 3600, 2),
    ],
)
def test_a_gcp_gpudirect_machine_is_its_gpu_nics_beside_googles_total(
    name: str, gpu_fabric: int, total: int, gvnics: int
) -> None:
    machine = lookup("gcp", name)
    assert machine is not None
    assert machine.fabric_gbps == machine.gpu_nics * machine.gpu_nic_gbps == gpu_fabric, "the GPU fabric alone"
    assert machine.network_gbps == total and machine.gvnic_gbps == total - gpu_fabric
    assert 1 + machine.extra_gvnics == gvnics and machine.gvnic_gbps == 200 * gvnics, "a 200 Gbps gVNIC each"


def test_every_gpudirect_machine_names_its_least_gke_versions_one_per_minor_oldest_first() -> None:
    # A new GPUDirect machine without them would let a cluster version its fabric cannot run on through.
    for name in names("gcp"):
        machine = lookup("gcp", name)
        assert machine is not None
        least = machine.gke_least_versions
        assert bool(least) == (bool(machine.gpudirect) and name not in UNSOURCED_LEAST), name
        assert all(re.fullmatch(r"1\.[0-9]{2}\.[0-9]+-gke\.[0-9]+", v) for v in least), name
        minors = [tuple(int(p) for p in v.split("-")[0].split(".")[:2]) for v in least]
        assert minors == sorted(set(minors)), f"{name}: one per minor, oldest first"


@pytest.mark.parametrize(
    ("name", "accelerator", "gpu_model", "vcpus", "memory", "gpu_memory"),
    [
        # Google Cloud, "Accelerator-optimized machine family": A4X and A4X Max tables.
        ("a4x-highgpu-4g", "nvidia-gb200", "NVIDIA GB200", 140, 884, 186),
        ("a4x-maxgpu-4g-metal", "nvidia-gb300", "NVIDIA GB300", 144, 960, 279),
    ],
)
def test_a4x_and_a4x_max_are_four_grace_blackwell_gpus_on_arm64_in_an_nvl72_rack(
    name: str, accelerator: str, gpu_model: str, vcpus: int, memory: int, gpu_memory: int
) -> None:
    machine = lookup("gcp", name)
    assert machine is not None
    assert (machine.gpus, machine.accelerator_type, machine.gpu_model) == (4, accelerator, gpu_model)
    assert (machine.vcpus, machine.memory_gib, machine.gpu_memory_gib) == (vcpus, memory, gpu_memory)
    assert machine.arch == "arm64", "Grace: images and plugin installers must be arm64"
    assert machine.nvlink_domain_nodes == 18, "18 machines of 4 GPUs: one NVL72 rack, one 1x72 sub-block"
    assert machine.fabric == "rdma"
    assert (machine.local_ssds, machine.local_storage_gb) == (4, 12000), "4 Titanium SSDs, 12,000 GiB"


def test_only_a4x_max_is_bare_metal_and_it_needs_gke_1_34_3() -> None:
    metal = [n for n in names("gcp") if (m := lookup("gcp", n)) and m.bare_metal]
    assert metal == ["a4x-maxgpu-4g-metal"]
    a4x_max = lookup("gcp", "a4x-maxgpu-4g-metal")
    assert a4x_max is not None and a4x_max.gke_least_versions == ("1.34.3-gke.1318000",)
    assert (a4x_max.gpu_nics, a4x_max.gpu_nic_gbps) == (8, 400), "8 MRDMA ports, claimed as 8 DRA devices"


@pytest.mark.parametrize(("size", "gpus", "gbps"), [(48, 1, 50), (96, 2, 100), (192, 4, 200), (384, 8, 400)])
def test_g4_is_rtx_pro_6000_on_tcp_at_its_network_bandwidth(size: int, gpus: int, gbps: int) -> None:
    g4 = lookup("gcp", f"g4-standard-{size}")
    assert g4 is not None
    assert (g4.gpus, g4.accelerator_type, g4.gpu_memory_gib) == (gpus, "nvidia-rtx-pro-6000", 96)
    assert (g4.vcpus, g4.memory_gib) == (48 * gpus, 180 * gpus)
    assert g4.fabric == "tcp", "no GPUDirect on G4"
    assert g4.fabric_gbps == g4.network_gbps == gbps and g4.gvnic_gbps == 0
    assert g4.local_ssds == 0, "Titanium SSD is optional on G4, not bundled"
