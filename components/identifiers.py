"""The cloud's names in a stack checked against what the cloud offers: pool zones and Kubernetes minors (errors),
and the warnings for what the stack vouches for in `cluster.allowUnknown` or runs on paid or newer-than-known
minors. The cluster's own region, zones and project id are checked where they are parsed
(components/models/cluster.py), with the same lists."""

from __future__ import annotations

from components import catalog, unknown
from components.aws import kubernetes_versions as eks
from components.aws import regions as aws_regions
from components.errors import Issue
from components.gcp import kubernetes_versions as gke
from components.gcp import regions as gcp_regions
from components.models import AwsClusterSpec, GcpClusterSpec, StackConfig
from components.models.cluster import DEFAULT_KUBERNETES_VERSION

VERSION_KEY = "cluster.kubernetesVersion"


def issues(config: StackConfig) -> list[Issue]:
    """What names a zone or Kubernetes minor the cloud does not have (and the stack does not vouch for)."""
    return [*_pool_zones(config), *_minor_issues(config)]


def warnings(config: StackConfig) -> list[Issue]:
    """What render accepts but the user should know: names taken on the stack's word, a paid EKS minor, a minor
    newer than this release knows."""
    cluster = config.cluster
    if not isinstance(cluster, AwsClusterSpec | GcpClusterSpec):
        return _near_misses(config)
    return [*_vouched(config, cluster), *_minor_warnings(cluster)]


def _near_misses(config: StackConfig) -> list[Issue]:
    """An existing cluster's pool may name any type (its nodes' own label), but one a letter from a catalogued type
    is most likely a typo, which costs the pool the catalog's cpu, memory and fabric."""
    found: list[Issue] = []
    for index, spec in enumerate(config.node_pools):
        for key, cloud in (("instanceType", "aws"), ("machineType", "gcp")):
            name = getattr(spec, "instance_type" if cloud == "aws" else "machine_type")
            if not name or catalog.lookup(cloud, name) is not None:  # type: ignore[arg-type]
                continue
            close = unknown.did_you_mean(name, catalog.names(cloud))  # type: ignore[arg-type]
            if close:
                found.append(
                    Issue(
                        f"nodePools[{index}].{key}",
                        f"{name} is not in the catalog{close} (as written, the pool gets no catalogued cpu, memory "
                        "or fabric)",
                    )
                )
    return found


def _vouched(config: StackConfig, cluster: AwsClusterSpec | GcpClusterSpec) -> list[Issue]:
    """What each allowUnknown entry lets through: a pool's type (and what render then cannot know), another name,
    or one the lists know, which need not be there."""
    found: list[Issue] = []
    cloud: catalog.Provider = cluster.provider
    for index, spec in enumerate(config.node_pools):
        name = spec.instance_type if cloud == "aws" else spec.machine_type
        if name and name in cluster.allow_unknown and catalog.lookup(cloud, name) is None:
            key = "instanceType" if cloud == "aws" else "machineType"
            found.append(
                Issue(
                    f"nodePools[{index}].{key}",
                    f"{name} is not in the catalog and taken on {unknown.ESCAPE_KEY}'s word: the pool runs "
                    f"{spec.fabric or 'tcp'}, and render checks its pods' cpu and memory only against allocatable "
                    "(unset: not at all); the cloud judges the type at deploy time",
                )
            )
    known = _known_names(cluster)
    pool_types = {spec.instance_type or spec.machine_type for spec in config.node_pools}
    service = "AWS" if cloud == "aws" else "Google Cloud"
    for index, name in enumerate(cluster.allow_unknown):
        if name in known:
            found.append(Issue(f"cluster.allowUnknown[{index}]", f"{name} is known to this release: drop it"))
        elif name not in pool_types:  # a pool's type has its own warning above
            found.append(
                Issue(
                    f"cluster.allowUnknown[{index}]",
                    f"{name} is not in this release's lists and is taken on the stack's word: {service} judges it "
                    "at deploy time",
                )
            )
    return found


def _minor_warnings(cluster: AwsClusterSpec | GcpClusterSpec) -> list[Issue]:
    """A minor in paid or Extended-channel support, or newer than the lists."""
    found: list[Issue] = []
    cloud = cluster.provider
    minor = _minor(cluster.kubernetes_version)
    if cloud == "aws":
        entry = next((m for m in eks.MINORS if m.version == minor), None)
        if entry is not None and entry.extended():
            found.append(
                Issue(
                    VERSION_KEY,
                    f"{minor} is in EKS extended support (charged per cluster hour) until {entry.extended_ends}, as "
                    f"of {eks.AS_OF}: plan the upgrade to {DEFAULT_KUBERNETES_VERSION}",
                )
            )
    if cloud == "gcp":
        entry_gke = next((m for m in gke.MINORS if m.version == minor), None)
        if entry_gke is not None and entry_gke.offered() and not entry_gke.standard():
            found.append(
                Issue(
                    VERSION_KEY,
                    f"{minor} left GKE's standard support on {entry_gke.standard_ends}: as of {gke.AS_OF} only the "
                    f"Extended channel offers it (until about {entry_gke.extended_ends}), and releaseChannel "
                    f"{cluster.release_channel} will not create it or will upgrade it: use "
                    f"{DEFAULT_KUBERNETES_VERSION}",
                )
            )
    newest = (eks.MINORS if cloud == "aws" else gke.MINORS)[-1].version
    if _numbers(minor) > _numbers(newest) and minor not in cluster.allow_unknown:
        service = "EKS" if cloud == "aws" else "GKE"
        found.append(
            Issue(
                VERSION_KEY,
                f"{minor} is newer than the minors this release knows {service} offers (up to {newest}, as of "
                f"{eks.AS_OF if cloud == 'aws' else gke.AS_OF}); {service} judges it at deploy time (list it in "
                f"{unknown.ESCAPE_KEY} to silence this)",
            )
        )
    return found


def _known_names(cluster: AwsClusterSpec | GcpClusterSpec) -> set[str]:
    """Every name of the cloud that this release's lists know, for allowUnknown entries that need not be there."""
    if isinstance(cluster, AwsClusterSpec):
        regions = aws_regions.REGIONS
        zones = {z for r in regions for z in aws_regions.zones(r)}
        minors = {m.version for m in eks.MINORS if m.offered()}
        return {*regions, *zones, *minors, *catalog.names("aws")}
    regions = gcp_regions.REGIONS
    zones = {z for r in regions for z in gcp_regions.zones(r)}
    minors = {m.version for m in gke.MINORS if m.standard()}
    return {*regions, *zones, *minors, *catalog.names("gcp")}


def _pool_zones(config: StackConfig) -> list[Issue]:
    """Each pool's zone is one its region has (a zone of another region is the pool's own error), and on AWS one
    the cluster has a subnet in."""
    cluster = config.cluster
    if not isinstance(cluster, AwsClusterSpec | GcpClusterSpec):
        return []
    allowed = set(cluster.allow_unknown)
    subnets = cluster.zones() if isinstance(cluster, AwsClusterSpec) else None
    found: list[Issue] = []
    for index, spec in enumerate(config.node_pools):
        zone = spec.zone
        if not zone:
            continue
        key = f"nodePools[{index}].zone"
        problem = None if zone in allowed or cluster.region in allowed else _zone_problem(cluster, zone)
        if problem:
            found.append(Issue(key, problem))
        elif subnets is not None and zone not in subnets:
            found.append(Issue(key, f"the cluster has no subnet in {zone} (its zones: {', '.join(subnets)})"))
    return found


def _zone_problem(cluster: AwsClusterSpec | GcpClusterSpec, zone: str) -> str | None:
    """Why a zone is not one of the cluster's region, with the closest names; None when it is."""
    if isinstance(cluster, AwsClusterSpec):
        problem = aws_regions.zone_problem(zone, cluster.region)
        known, what, as_of = aws_regions.zones(cluster.region), "an Availability Zone", aws_regions.AS_OF
    else:
        problem = gcp_regions.zone_problem(zone) if zone.startswith(f"{cluster.region}-") else None
        known, what, as_of = gcp_regions.zones(cluster.region), "a zone", gcp_regions.AS_OF
    if not problem:
        return None
    return unknown.message(zone, problem, [] if zone.startswith(cluster.region) else known, what, as_of)


def _minor_issues(config: StackConfig) -> list[Issue]:
    """A Kubernetes minor EKS or GKE no longer offers (or never did) is an error naming the minors it offers."""
    cluster = config.cluster
    if not isinstance(cluster, AwsClusterSpec | GcpClusterSpec):
        return []
    minor = _minor(cluster.kubernetes_version)  # an old minor is no name newer than the lists: allowUnknown keeps none
    if isinstance(cluster, AwsClusterSpec):
        entry = next((m for m in eks.MINORS if m.version == minor), None)
        offered = [m.version for m in eks.MINORS if m.offered()]
        if (entry is not None and entry.offered()) or _numbers(minor) > _numbers(eks.MINORS[-1].version):
            return []
        ended = f"since {entry.extended_ends} (the end of its extended support)" if entry else "for years"
        return [
            Issue(
                VERSION_KEY,
                f"EKS has not offered {minor} {ended}; it offers {', '.join(offered)} as of {eks.AS_OF} "
                f"(EKS user guide, Kubernetes versions): use {DEFAULT_KUBERNETES_VERSION}",
            )
        ]
    g = next((m for m in gke.MINORS if m.version == minor), None)
    standard = [m.version for m in gke.MINORS if m.standard()]
    if (g is not None and g.offered()) or _numbers(minor) > _numbers(gke.MINORS[-1].version):
        return []
    ended = f"since {g.extended_ends} (the end of its Extended channel support)" if g else "for years"
    return [
        Issue(
            VERSION_KEY,
            f"GKE has not offered {minor} {ended}; its release channels offer {', '.join(standard)} as of "
            f"{gke.AS_OF} (GKE release schedule): use {DEFAULT_KUBERNETES_VERSION}",
        )
    ]


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _numbers(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split(".") if part.isdigit())
