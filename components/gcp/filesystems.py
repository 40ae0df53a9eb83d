"""Sizes, names and addresses of Google Cloud Managed Lustre instances behind managed-lustre volumes.

Pure: no Pulumi import. The capacities are Managed Lustre's "Performance tiers" table (Managed Lustre docs,
performance-tiers; the same figures in "Increase the capacity of a Managed Lustre instance"); pulumi-gcp 10.2.0's
`lustre.Instance.capacity_gib` docstring still gives the older 9,000 to 7,632,000 GiB range of the first release.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from components import quantity

MANAGED_LUSTRE_DEFAULT_TIER = 1000
"""The default throughput tier, MB/s per TiB: the tier Google recommends for AI/ML training, the default of the
Managed Lustre CSI driver's classes (Managed Lustre CSI driver reference, perUnitStorageThroughput), and the one
with the smallest instance (9,000 GiB, 8.8 GB/s)."""
MANAGED_LUSTRE_GKE_VERSION = "1.33.2-gke.4655000"
"""The least GKE node version that mounts an instance on Lustre's own port, 988 (GKE API, LustreCsiDriverConfig.
enable_legacy_lustre_port: older nodes need the legacy port 6988, and instances made with gke_support_enabled).
The add-on itself needs 1.33.2-gke.1111000 ("About the Managed Lustre CSI driver", requirements)."""


@dataclass(frozen=True, slots=True)
class Tier:
    """The capacities a throughput tier allows, in GiB: multiples of `step` from `minimum` up to `threshold`, then
    multiples of `large_step` up to `maximum`."""

    minimum: int
    step: int
    threshold: int
    large_step: int
    maximum: int


# The larger step's capacities are its multiples (each tier's maximum is 139 of them); an instance made at or
# below the threshold grows only up to it ("Increase the capacity", limitations).
MANAGED_LUSTRE_TIERS: dict[int, Tier] = {
    1000: Tier(9_000, 9_000, 1_530_000, 72_000, 10_008_000),
    500: Tier(18_000, 18_000, 3_060_000, 144_000, 20_016_000),
    250: Tier(36_000, 36_000, 6_120_000, 288_000, 40_032_000),
    125: Tier(72_000, 72_000, 12_240_000, 72_000, 12_240_000),
}
"""Per tier (MB/s per TiB): minimum, step, the capacity up to which that step holds, the larger step, maximum."""
_FILESYSTEM = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,7}$")
_INSTANCE = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")
_INSTANCE_NAME = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<zone>[^/]+)/instances/(?P<name>[^/]+)$")
_NETWORK = re.compile(r"projects/[^/]+/global/networks/[^/]+$")


def capacity_gib(size: str, tier: int) -> int | None:
    """The smallest capacity of `tier` that holds `size`, in GiB; None when the tier's largest does not."""
    limits = MANAGED_LUSTRE_TIERS[tier]
    wanted = max(math.ceil(quantity.parse(size) / 2**30), limits.minimum)
    step = limits.step if wanted <= limits.threshold else limits.large_step
    found = math.ceil(wanted / step) * step
    return found if found <= limits.maximum else None


def valid_filesystem(name: str) -> bool:
    """Whether Managed Lustre takes `name` as a file system name: 1-8 letters and digits, starting with a letter."""
    return bool(_FILESYSTEM.match(name))


def default_filesystem(volume_name: str) -> str:
    """The file system name of a volume that states none: the letters and digits of its name, from its first
    letter, at most 8 (`training-checkpoints` -> `training`); `lustre` when it has no letter."""
    letters = re.sub(r"[^A-Za-z0-9]", "", volume_name).lstrip("0123456789")
    return letters[:8] or "lustre"


def instance_id(cluster: str, namespace: str, volume: str) -> str:
    """The id of an instance the stack makes: cluster, namespace and volume, at most 63 lower-case letters, digits
    and hyphens, starting with a letter and ending with a letter or digit (unique in its project and zone)."""
    stem = re.sub(r"[^a-z0-9-]+", "-", f"{cluster}-{namespace}-{volume}".lower()).strip("-")
    stem = "l-" + stem if not stem[:1].isalpha() else stem
    return stem[:63].rstrip("-")


def named_instance(file_system_id: str) -> tuple[str | None, str | None, str]:
    """An existing instance as `fileSystemId` names it: (project, zone, id) of a full name
    `projects/<project>/locations/<zone>/instances/<id>`, or (None, None, id) of a bare id."""
    found = _INSTANCE_NAME.match(file_system_id)
    if found:
        return found["project"], found["zone"], found["name"]
    return None, None, file_system_id


def valid_instance_reference(file_system_id: str) -> bool:
    """Whether `fileSystemId` names an instance: its id, or its full name."""
    _, _, name = named_instance(file_system_id)
    return bool(_INSTANCE.match(name))


def network_name(project: str, network: str) -> str:
    """The VPC an instance joins, as Managed Lustre takes it: `projects/<project>/global/networks/<name>` (a bare
    name is the network of `project`; a self link is cut to that form)."""
    found = _NETWORK.search(network)
    if found:
        return found.group(0)
    return f"projects/{project}/global/networks/{network}"


def volume_handle(project: str, zone: str, instance: str) -> str:
    """The CSI volume handle of an instance: `<project>/<zone>/<instance id>` (lustre-csi-driver pkg/csi_driver/
    volume.go, instanceToVolumeID)."""
    return f"{project}/{zone}/{instance}"


def mount_address(mount_point: str) -> tuple[str, str]:
    """(IP address, file system name) of an instance's mount point, `<ip>@tcp:/<fsname>` (the API's mountPoint);
    ValueError on any other shape, rather than a volume that cannot mount."""
    found = re.fullmatch(r"(?P<ip>[^@\s]+)@tcp:/(?P<fs>[A-Za-z0-9]+)", mount_point or "")
    if not found:
        raise ValueError(f"Managed Lustre mount point {mount_point!r} is not <ip>@tcp:/<filesystem>")
    return found["ip"], found["fs"]
