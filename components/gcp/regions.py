"""Google Cloud regions, their zones, and the rule for project ids: pure data, standard library only.

Regions and zones: Google Cloud, "Regions and zones" (cloud.google.com/compute/docs/regions-zones), its table of
every region and its zones (a Compute Engine region has three zones, a few four; most are lettered a-c, a few b-d,
and us-central1 a, b, c, f). Written down on 2026-11-27 from that table as known, not machine-read: recheck it
against `gcloud compute zones list` when a region is added. AI zones and zones that appear after this list are not
in it: name one in `cluster.allowUnknown`.

Project ids: Google Cloud, "Creating and managing projects" (cloud.google.com/resource-manager/docs/
creating-managing-projects): 6 to 30 characters, lowercase letters, digits and hyphens, starting with a letter,
not ending with a hyphen, and containing no restricted string such as google, null, undefined or ssl. Projects of
the legacy domain-scoped kind carry their domain before a colon (example.com:my-project).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from components import unknown

AS_OF = "2026-11-27"
"""The day these lists were last checked."""

_ABC = "abc"
_ZONE_LETTERS: dict[str, str] = {
    "africa-south1": _ABC,
    "asia-east1": _ABC,
    "asia-east2": _ABC,
    "asia-northeast1": _ABC,
    "asia-northeast2": _ABC,
    "asia-northeast3": _ABC,
    "asia-south1": _ABC,
    "asia-south2": _ABC,
    "asia-southeast1": _ABC,
    "asia-southeast2": _ABC,
    "australia-southeast1": _ABC,
    "australia-southeast2": _ABC,
    "europe-central2": _ABC,
    "europe-north1": _ABC,
    "europe-north2": _ABC,
    "europe-southwest1": _ABC,
    "europe-west1": "bcd",
    "europe-west2": _ABC,
    "europe-west3": _ABC,
    "europe-west4": _ABC,
    "europe-west6": _ABC,
    "europe-west8": _ABC,
    "europe-west9": _ABC,
    "europe-west10": _ABC,
    "europe-west12": _ABC,
    "me-central1": _ABC,
    "me-central2": _ABC,
    "me-west1": _ABC,
    "northamerica-northeast1": _ABC,
    "northamerica-northeast2": _ABC,
    "northamerica-south1": _ABC,
    "southamerica-east1": _ABC,
    "southamerica-west1": _ABC,
    "us-central1": "abcf",
    "us-east1": "bcd",
    "us-east4": _ABC,
    "us-east5": _ABC,
    "us-south1": _ABC,
    "us-west1": _ABC,
    "us-west2": _ABC,
    "us-west3": _ABC,
    "us-west4": _ABC,
}
REGIONS: frozenset[str] = frozenset(_ZONE_LETTERS)
"""Every Google Cloud region name."""

_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+[0-9]+)-(?P<letter>[a-z])$")
_PROJECT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
RESTRICTED = ("google", "null", "undefined", "ssl")
"""Strings Google names as restricted in a project id."""


def zones(region: str) -> list[str]:
    """Every zone of a known region."""
    return [f"{region}-{letter}" for letter in _ZONE_LETTERS.get(region, "")]


def zone_problem(zone: str) -> str | None:
    """What is wrong with a zone name, in words, or None when Google has that zone."""
    found = _ZONE.match(zone)
    if found is None:
        return "is not a Google Cloud zone name (a region and a letter, e.g. us-central1-a)"
    if found["region"] not in REGIONS:
        return f"is not a zone of any Google Cloud region ({found['region']} is not a region)"
    if found["letter"] not in _ZONE_LETTERS[found["region"]]:
        return f"is not a zone of {found['region']}, whose zones are {', '.join(zones(found['region']))}"
    return None


def project_problem(project: str) -> str | None:
    """What breaks Google's rules for project ids, in words, or None."""
    own = project.rsplit(":", 1)[-1]  # a domain-scoped project's id follows its domain
    if not 6 <= len(own) <= 30:
        return f"has {len(own)} character{'s' if len(own) != 1 else ''}; a project id has 6 to 30"
    if not _PROJECT.match(own):
        return (
            "is not a project id: lowercase letters, digits and hyphens, starting with a letter and not ending "
            "with a hyphen"
        )
    restricted = [word for word in RESTRICTED if word in own]
    if restricted:
        return f"contains '{restricted[0]}', which Google does not allow in a project id"
    return None


def cluster_problem(project: str, region: str, zone: str | None, allowed: Iterable[str]) -> tuple[str, str] | None:
    """The first cluster key naming a project id, region or zone Google does not allow or have, with the error."""
    allowed = set(allowed)
    found = project_problem(project)
    if found:
        return "project", f"'{project}' {found} (Google's rules for project ids)"
    if region not in REGIONS and region not in allowed:
        return "region", unknown.message(region, "is not a Google Cloud region", REGIONS, "a region", AS_OF)
    vouched = zone is None or zone in allowed or region in allowed  # a new region's zones are its own
    problem = None if vouched else zone_problem(zone or "")
    if problem:
        close = [] if (zone or "").startswith(f"{region}-") else _all_zones()
        return "zone", unknown.message(zone or "", problem, close, "a zone", AS_OF)
    return None


def _all_zones() -> list[str]:
    return [zone for region in sorted(REGIONS) for zone in zones(region)]
