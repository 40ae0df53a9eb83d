"""The subnet layout of a new VPC."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from components.aws.network import subnet_layout


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
