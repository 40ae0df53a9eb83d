"""A new VPC's zones and subnet layout: a large private subnet per zone for nodes and pods, a small public one."""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from components.errors import ConfigError, Issue


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


MIN_ZONES = 2
"""EKS places its control plane in subnets of at least two zones."""

EKS_UNSUPPORTED_ZONE_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})
"""Zone ids where EKS cannot put a cluster's subnets (Amazon EKS user guide, "View Amazon EKS
networking requirements for VPC and subnets"). Ids, not names: names map to ids per account."""


def region_zones(region: str, offered: list[tuple[str, str]], pool_zones: list[str]) -> list[str]:
    """The zones of a new VPC when config names none: every zone (name, id) the region offers where
    EKS can run, in name order. All of them, not two: the cluster's subnets can only ever span the
    zones it was created with, so a pool added later in any zone needs no change to the cluster.

    Raises ConfigError when a pool's zone is not among them or the region offers too few.
    """
    zones = sorted(name for name, zone_id in offered if zone_id not in EKS_UNSUPPORTED_ZONE_IDS)
    issues = [
        Issue(
            "cluster.availabilityZones",
            f"pool zone {zone} is not a zone of {region} where EKS can run (offered: {', '.join(zones) or 'none'}); "
            "choose another zone for the pool",
        )
        for zone in dict.fromkeys(pool_zones)
        if zone not in zones
    ]
    if len(zones) < MIN_ZONES:
        issues.append(
            Issue(
                "cluster.availabilityZones",
                f"{region} offers {len(zones)} zone(s) where EKS can run, and EKS needs {MIN_ZONES}; "
                "use another region or an existing VPC (vpcId, subnetIds)",
            )
        )
    if issues:
        raise ConfigError(issues)
    return zones
