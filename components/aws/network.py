"""The subnet layout of a new VPC: a large private subnet per zone for nodes and pods, a small public one."""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ZoneSubnets:
    """The CIDRs of one zone's subnets."""

    zone: str
    private: str
    public: str


def subnet_layout(cidr: str, zones: list[str]) -> list[ZoneSubnets]:
    """Split the VPC CIDR: one equal private block per zone (the VPC CNI gives every pod a VPC address,
    so nodes get most of the space), and the public subnets share one block of that size."""
    network = ipaddress.ip_network(cidr, strict=False)
    blocks = list(network.subnets(prefixlen_diff=math.ceil(math.log2(len(zones) + 1))))
    publics = list(blocks[len(zones)].subnets(prefixlen_diff=math.ceil(math.log2(len(zones))) or 1))
    return [ZoneSubnets(zone, str(blocks[i]), str(publics[i])) for i, zone in enumerate(zones)]
