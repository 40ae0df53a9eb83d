"""Names the catalog does not know: "did you mean", and the escape hatch for names newer than the release.

A region, zone, Kubernetes version or machine type that a cloud adds after this release is not in its lists. Such a
name is an error, since a typo is far likelier, unless the stack vouches for it by listing it, exactly as written,
in `cluster.allowUnknown`; render then accepts it with a warning, and the cloud judges it at deploy time.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from components import catalog
from components.errors import Issue

ESCAPE_KEY = "cluster.allowUnknown"
"""The stack key that lists the names the catalog does not know and the stack vouches for."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """ "; did you mean 'x'?" for the closest known names, or ""."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


def escape(name: str, what: str, as_of: str) -> str:
    """The fix for a name newer than the lists: say it in `cluster.allowUnknown`."""
    return f"if {name} is {what} newer than this release's list ({as_of}), add it to {ESCAPE_KEY}: [{name}]"


def message(name: str, problem: str, known: Iterable[str], what: str, as_of: str) -> str:
    """The whole error: the name and its problem, the closest known names, and the escape hatch."""
    return f"'{name}' {problem}{did_you_mean(name, known)}; {escape(name, what, as_of)}"


def machine_type(provider: str, name: str, path: str, allowed: Iterable[str]) -> Issue | None:
    """The error for an AWS instance type or GCP machine type the catalog does not know and the stack does not
    vouch for: the first a user reads, since every other fact of the pool (GPUs, fabric, cpu, memory) is the
    catalog's."""
    if provider not in ("aws", "gcp") or name in allowed:
        return None
    cloud: catalog.Provider = "aws" if provider == "aws" else "gcp"
    if catalog.lookup(cloud, name) is not None:
        return None
    key, noun = ("instanceType", "instance type") if cloud == "aws" else ("machineType", "machine type")
    what = "an EC2 instance type" if cloud == "aws" else "a Compute Engine machine type"
    return Issue(
        f"{path}.{key}",
        f"'{name}' is not a GPU {noun} in the catalog{did_you_mean(name, catalog.names(cloud))}; "
        f"{escape(name, what, catalog.AS_OF)} and state gpusPerNode (the pool then runs tcp, and render knows its "
        "nodes' cpu and memory only from allocatable)",
    )
