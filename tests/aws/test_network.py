"""The subnet layout of a new VPC."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.aws.network import region_zones, subnet_layout
from components.errors import ConfigError


def test_three_zones_in_a_slash_16() -> None:
    layout = subnet_layout("10.0.0.0/16", ["us-east-1a", "us-east-1b", "us-east-1c"])
    assert [z.private for z in layout] == ["10.0.0.0/18", "10.0.64.0/18", "10.0.128.0/18"]
    assert [z.public for z in layout] == ["10.0.192.0/20", "10.0.208.0/20", "10.0.224.0/20"]


@given(st.integers(min_value=2, max_value=6), st.sampled_from(["10.0.0.0/16", "172.16.0.0/12", "10.8.0.0/20"]))
def test_subnets_lie_in_the_vpc_and_never_overlap(zones: int, cidr: str) -> None:
    layout = subnet_layout(cidr, [f"us-east-1{chr(97 + i)}" for i in range(zones)])
    vpc = ipaddress.ip_network(cidr)
    networks = [ipaddress.ip_network(n) for z in layout for n in (z.private, z.public)]
    assert all(n.subnet_of(vpc) for n in networks)
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1 :])
    assert all(
        ipaddress.ip_network(z.private).num_addresses > ipaddress.ip_network(z.public).num_addresses for z in layout
    )


OFFERED = [
    ("us-east-1a", "use1-az1"),
    ("us-east-1b", "use1-az2"),
    ("us-east-1c", "use1-az3"),
    ("us-east-1d", "use1-az4"),
]


def test_a_new_vpc_takes_every_zone_of_the_region_where_eks_runs_in_name_order() -> None:
    offered = list(reversed(OFFERED))
    assert region_zones("us-east-1", offered, ["us-east-1d"]) == ["us-east-1a", "us-east-1b", "us-east-1d"]


def test_the_chosen_zones_do_not_depend_on_the_pools() -> None:
    assert region_zones("us-east-1", OFFERED, []) == region_zones("us-east-1", OFFERED, ["us-east-1b", "us-east-1a"])


def test_a_pool_in_a_zone_eks_cannot_use_or_the_region_lacks_is_named() -> None:
    with pytest.raises(ConfigError) as caught:
        region_zones("us-east-1", OFFERED, ["us-east-1c", "us-east-1z"])
    assert [i.path for i in caught.value.issues] == ["cluster.availabilityZones"] * 2
    assert "pool zone us-east-1c is not a zone of us-east-1 where EKS can run" in str(caught.value)


def test_a_region_with_one_usable_zone_is_refused() -> None:
    with pytest.raises(ConfigError, match="offers 1 zone"):
        region_zones("ca-central-1", [("ca-central-1a", "cac1-az1"), ("ca-central-1c", "cac1-az3")], [])
