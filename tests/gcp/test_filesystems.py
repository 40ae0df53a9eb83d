"""Managed Lustre's capacities, names and addresses: what an instance the stack makes is sized and named, and how its
PersistentVolume finds it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.gcp.filesystems import (
    MANAGED_LUSTRE_TIERS,
    capacity_gib,
    default_filesystem,
    instance_id,
    mount_address,
    named_instance,
    network_name,
    valid_filesystem,
    volume_handle,
)


@pytest.mark.parametrize(
    ("size", "tier", "gib"),
    [
        ("1Ti", 1000, 9_000),  # the smallest instance of the tier
        ("9000Gi", 1000, 9_000),
        ("9001Gi", 1000, 18_000),
        ("18Ti", 1000, 27_000),  # 18,432 GiB
        ("18Ti", 500, 36_000),
        ("10Ti", 125, 72_000),
        ("1530000Gi", 1000, 1_530_000),  # the last capacity of the small step
        ("1530001Gi", 1000, 1_584_000),  # then multiples of 72,000
        ("10008000Gi", 1000, 10_008_000),
    ],
)
def test_a_size_is_rounded_up_to_the_tiers_next_capacity(size: str, tier: int, gib: int) -> None:
    assert capacity_gib(size, tier) == gib


def test_a_size_over_the_tiers_largest_instance_has_no_capacity() -> None:
    assert capacity_gib("10008001Gi", 1000) is None
    assert capacity_gib("10008001Gi", 500) == 10_080_000


@given(tier=st.sampled_from(sorted(MANAGED_LUSTRE_TIERS)), gib=st.integers(min_value=1, max_value=45_000_000))
def test_the_capacity_is_the_least_the_tier_allows_that_holds_the_size(tier: int, gib: int) -> None:
    limits = MANAGED_LUSTRE_TIERS[tier]
    found = capacity_gib(f"{gib}Gi", tier)
    if found is None:
        assert gib > limits.maximum
        return
    assert limits.minimum <= found <= limits.maximum and found >= gib
    step = limits.step if found <= limits.threshold else limits.large_step
    assert found % step == 0, "a capacity Managed Lustre accepts"
    below = found - step if found <= limits.threshold or found - step > limits.threshold else limits.threshold
    assert below < max(gib, limits.minimum), f"{below} GiB, a smaller capacity of the tier, holds {gib} GiB too"


@pytest.mark.parametrize(
    ("volume", "name"),
    [("checkpoints", "checkpoi"), ("llama-70b.ckpt", "llama70b"), ("7b-data", "bdata"), ("42", "lustre")],
)
def test_a_file_system_name_comes_from_the_volumes_name(volume: str, name: str) -> None:
    assert default_filesystem(volume) == name and valid_filesystem(name)


def test_an_instance_id_is_lower_case_and_fits_63_characters() -> None:
    assert instance_id("train", "training", "checkpoints") == "train-training-checkpoints"
    long = instance_id("Train-Cluster", "research-team-a", "a.very-long.volume-name-for-the-checkpoints-of-a-run")
    assert len(long) <= 63 and long == long.lower() and long[0].isalpha() and long[-1].isalnum() and "." not in long
    assert instance_id("7x", "ns", "v").startswith("l-"), "an id starts with a letter"


def test_the_network_is_named_in_full_and_an_existing_instance_by_id_or_full_name() -> None:
    assert network_name("ml-prod", "default") == "projects/ml-prod/global/networks/default"
    assert network_name("ml-prod", "projects/host/global/networks/shared") == "projects/host/global/networks/shared"
    link = "https://www.googleapis.com/compute/v1/projects/host/global/networks/shared"
    assert network_name("ml-prod", link) == "projects/host/global/networks/shared"
    assert named_instance("shared") == (None, None, "shared")
    assert named_instance("projects/p/locations/us-central1-a/instances/shared") == ("p", "us-central1-a", "shared")
    assert volume_handle("p", "us-central1-a", "shared") == "p/us-central1-a/shared"


def test_the_mount_point_gives_the_address_and_file_system_the_driver_mounts() -> None:
    assert mount_address("10.90.1.4@tcp:/training") == ("10.90.1.4", "training")
    for bad in ("", "10.90.1.4:/training", "10.90.1.4@tcp:/"):
        with pytest.raises(ValueError, match="is not <ip>@tcp:/<filesystem>"):
            mount_address(bad)
