"""How fast a volume takes a checkpoint: each backend's bounds, a node's network, and the estimate render prints."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.models import VolumeSpec
from components.throughput import estimate, node_network, write_rate

P5 = catalog.lookup("aws", "p5.48xlarge")
A3_MEGA = catalog.lookup("gcp", "a3-megagpu-8g")
A3_ULTRA = catalog.lookup("gcp", "a3-ultragpu-8g")


def volume(**fields: Any) -> VolumeSpec:
    return VolumeSpec.model_validate({"name": "checkpoints", **fields})


def test_a_node_reaches_storage_through_its_front_end_network() -> None:
    assert node_network(P5) == (12500.0, "100 Gbps: a network card's share"), "3,200 Gbps over 32 cards"
    assert node_network(A3_MEGA) == (25000.0, "200 Gbps: eth0, beside the GPU NICs"), "1,800 less 1,600 of GPU NICs"
    assert node_network(A3_ULTRA)[0] == 25000.0, "400 Gbps over eth0 and its second gVNIC"
    assert node_network(None)[0] is None


def test_fsx_for_lustre_writes_at_its_capacity_times_its_tier() -> None:
    rate = write_rate(volume(backend="fsx-lustre", size="24Ti"), P5)
    assert rate.volume == pytest.approx(26400 / 1024 * 500), "24 TiB rounds up to 26,400 GiB"
    faster = write_rate(volume(backend="fsx-lustre", size="24Ti", throughputPerTiB=1000), P5)
    assert faster.volume == pytest.approx(2 * rate.volume)
    named = write_rate(volume(backend="fsx-lustre", size="24Ti", fileSystemId="fs-0123"), P5)
    assert not named.known


def test_managed_lustre_writes_at_its_capacity_as_the_tier_rounds_it_times_the_tier() -> None:
    rate = write_rate(volume(backend="managed-lustre", size="18Ti"), A3_MEGA)
    assert rate.volume == pytest.approx(27000 / 1024 * 1000), "18 TiB rounds up to 27,000 GiB in 9,000 GiB steps"
    assert rate.volume_basis == "27000 GiB x 1000 MB/s/TiB"
    assert rate.node == 25000.0, "each node through eth0"
    slower = write_rate(volume(backend="managed-lustre", size="18Ti", throughputPerTiB=250), A3_MEGA)
    assert slower.volume == pytest.approx(36000 / 1024 * 250), "the 250 tier's smallest instance is 36,000 GiB"
    named = write_rate(volume(backend="managed-lustre", size="18Ti", fileSystemId="shared"), A3_MEGA)
    assert not named.known and "an instance named by fileSystemId" in named.volume_basis


def test_efs_writes_at_most_a_gibibyte_a_second_and_a_client_1500_mib() -> None:
    rate = write_rate(volume(backend="efs", size="1Ti"), P5)
    assert rate.volume == pytest.approx(2**30 / 1e6)
    assert rate.node == pytest.approx(1500 * 2**20 / 1e6) and "per client" in rate.node_basis


@pytest.mark.parametrize(
    ("tier", "size", "mib_per_s"),
    [
        ("BASIC_HDD", "2Ti", 100),
        ("BASIC_HDD", "20Ti", 120),
        ("BASIC_SSD", "1Ti", 350),
        ("ZONAL", "10Ti", 880),
        ("ZONAL", "100Ti", 8800),
        ("REGIONAL", "5Ti", 500),
        ("REGIONAL", "10Ti", 880),
        ("ENTERPRISE", "10Ti", 1000),
    ],
)
def test_filestore_writes_by_tier_and_capacity(tier: str, size: str, mib_per_s: int) -> None:
    rate = write_rate(volume(backend="filestore", tier=tier, size=size), A3_MEGA)
    assert rate.volume == pytest.approx(mib_per_s * 2**20 / 1e6)


def test_a_bucket_is_bounded_by_the_nodes_and_s3_by_one_prefixs_request_rate() -> None:
    s3 = write_rate(volume(backend="s3"), P5)
    assert s3.volume == pytest.approx(3500 * 8 * 2**20 / 1e6)
    assert s3.aggregate(1) == 12500.0 and s3.aggregate(64) == s3.volume
    gcs = write_rate(volume(backend="gcs"), A3_MEGA)
    assert gcs.volume is None and gcs.aggregate(4) == 100000.0


def test_what_is_not_known_is_said_so() -> None:
    found = estimate(volume(backend="nfs", server="nfs", share="/x", size="1Ti"), 4, P5, "1T", 300)
    assert found.seconds is None and not found.over
    assert found.describe() == (
        "1T to training/checkpoints (nfs): throughput unknown (an NFS server's throughput is not known here)"
    )
    unsized = estimate(volume(backend="s3"), 2, P5, None, 300)
    assert unsized.describe().endswith("checkpoint.size not stated, so no time")
    anywhere = estimate(volume(backend="gcs"), 2, None, "1T", 300)
    assert anywhere.throughput is None and "the pool's machine bandwidth is not catalogued" in anywhere.describe()


def test_the_estimate_states_the_time_and_whether_it_is_over_the_budget() -> None:
    fsx = estimate(volume(backend="fsx-lustre", size="24Ti"), 8, P5, "1.1T", 300)
    assert fsx.describe() == (
        "1.1T to training/checkpoints (fsx-lustre): 12.9 GB/s (volume 12.9 GB/s (26400 GiB x 500 MB/s/TiB); "
        "8 nodes x 12.5 GB/s (100 Gbps: a network card's share)) -> at least 86 s (budget 300 s)"
    )
    efs = estimate(volume(backend="efs", size="1Ti"), 8, P5, "1.1T", 300)
    assert efs.over and not efs.node_bound and efs.describe().endswith("-> at least 1025 s, over its 300 s budget")
    one_node = estimate(volume(backend="s3"), 1, P5, "1.1T", 60)
    assert one_node.over and one_node.node_bound


@given(
    backend=st.sampled_from(["fsx-lustre", "efs", "filestore", "s3", "gcs"]),
    writers=st.integers(1, 512),
    gigabytes=st.integers(1, 20_000),
    machine=st.sampled_from([P5, A3_MEGA, A3_ULTRA]),
)
def test_more_writers_never_slow_a_checkpoint_and_none_beats_the_volume(
    backend: str, writers: int, gigabytes: int, machine: catalog.MachineType
) -> None:
    spec = volume(backend=backend, size=None if backend in ("s3", "gcs") else "12Ti")
    one, more = (
        estimate(spec, writers, machine, f"{gigabytes}G", 300),
        estimate(spec, writers + 1, machine, f"{gigabytes}G", 300),
    )
    assert one.seconds is not None and more.seconds is not None
    assert more.seconds <= one.seconds
    if one.rate.volume is not None:
        assert one.throughput is not None and one.throughput <= one.rate.volume
    assert one.seconds == pytest.approx(gigabytes * 1e9 / (one.throughput * 1e6))
