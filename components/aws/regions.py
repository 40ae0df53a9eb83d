"""AWS regions and the letters of their Availability Zones: pure data, standard library only.

Regions: botocore @0e6e2404 (2026-08-07), botocore/data/partitions.json, every region of the partitions aws,
aws-cn, aws-us-gov, aws-eusc and the ISO partitions (the `*-global` pseudo-regions left out).

Zone letters: AWS, "AZ IDs" (docs.aws.amazon.com/global-infrastructure/latest/regions/az-ids.html): every region
introduced after November 2012 maps its Availability Zones to the codes a, b, c ... in the same way for every
account, and AWS plans at least three per region, so such a region's zones are a-c unless `_LETTERS` lists more
(the counts as known on 2026-11-27, not machine-read: recheck with `aws ec2 describe-availability-zones`).
The older regions map zones to letters per account, so the letters below are every letter an account may see:
us-east-1 a-f (six zones), us-west-2 a-d, us-west-1 a-c (two zones per account, three letters across accounts),
ap-northeast-1 a-d (a, c, d today; b on older accounts), ap-northeast-2 a-d, ca-central-1 a-d (a, b, d) and
cn-north-1 a-d (a, b, d). Local Zones and Wavelength Zones (us-east-1-bos-1a) are not listed: name one in
`cluster.allowUnknown`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from components import unknown

AS_OF = "2026-11-27"
"""The day these lists were last checked."""

REGIONS: frozenset[str] = frozenset(
    {
        "af-south-1",
        "ap-east-1",
        "ap-east-2",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "ap-south-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "ap-southeast-5",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-central-1",
        "ca-west-1",
        "eu-central-1",
        "eu-central-2",
        "eu-north-1",
        "eu-south-1",
        "eu-south-2",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
        "il-central-1",
        "me-central-1",
        "me-south-1",
        "mx-central-1",
        "sa-east-1",
        "us-east-1",
        "us-east-2",
        "us-west-1",
        "us-west-2",
        "cn-north-1",
        "cn-northwest-1",
        "us-gov-east-1",
        "us-gov-west-1",
        "eusc-de-east-1",
        "us-iso-east-1",
        "us-iso-west-1",
        "us-isob-east-1",
        "us-isob-west-1",
        "us-isof-east-1",
        "us-isof-south-1",
        "eu-isoe-west-1",
    }
)
"""Every AWS region name."""

_DEFAULT_LETTERS = "abc"
_LETTERS: dict[str, str] = {
    "us-east-1": "abcdef",
    "us-west-1": "abc",
    "us-west-2": "abcd",
    "ap-northeast-1": "abcd",
    "ap-northeast-2": "abcd",
    "ca-central-1": "abcd",
    "cn-north-1": "abcd",
}
_ZONE = re.compile(r"^(?P<region>[a-z]+(-[a-z]+)+-[0-9]+)(?P<letter>[a-z])$")


def zone_letters(region: str) -> str:
    """The letters a zone of `region` may end in, for any account."""
    return _LETTERS.get(region, _DEFAULT_LETTERS)


def zones(region: str) -> list[str]:
    """Every zone name of a known region."""
    return [f"{region}{letter}" for letter in zone_letters(region)]


def zone_problem(zone: str, region: str | None) -> str | None:
    """What is wrong with an Availability Zone name, in words, or None when the region has it."""
    found = _ZONE.match(zone)
    if found is None:
        return "is not an AWS Availability Zone name (a region and a letter, e.g. us-east-1a)"
    if found["region"] not in REGIONS:
        return f"is not a zone of any AWS region ({found['region']} is not a region)"
    if region is not None and found["region"] != region:
        return None  # the zone's region differs from the cluster's: the caller's own error says so
    if found["letter"] not in zone_letters(found["region"]):
        return f"is not a zone of {found['region']}, whose zones are {', '.join(zones(found['region']))}"
    return None


def region_problem(region: str, allowed: Iterable[str] = ()) -> str | None:
    """The error for a region AWS does not have (with the closest names and the escape hatch), or None."""
    if region in REGIONS or region in allowed:
        return None
    return unknown.message(region, "is not an AWS region", REGIONS, "an AWS region", AS_OF)


def cluster_problem(region: str, zones_named: dict[str, list[str]], allowed: Iterable[str]) -> tuple[str, str] | None:
    """The first cluster key naming a region or zone AWS does not have, with the error; `zones_named` is each
    key's zones (availabilityZones, subnetIds)."""
    allowed = set(allowed)
    found = region_problem(region, allowed)
    if found:
        return "region", found
    for key, named in zones_named.items():
        for index, zone in enumerate(named):
            vouched = zone in allowed or (region in allowed and zone.startswith(region))  # a new region's zones
            problem = None if vouched else zone_problem(zone, region)
            if problem:
                # A zone of a known region gets the region's zones in the problem; another, the closest names.
                close = [] if zone.startswith(region) else [z for r in sorted(REGIONS) for z in zones(r)]
                where = f"{key}.{zone}" if key == "subnetIds" else f"{key}[{index}]"
                return where, unknown.message(zone, problem, close, "an Availability Zone", AS_OF)
    return None
