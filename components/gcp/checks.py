"""What only GKE asks of a whole stack: Managed Lustre's zone and version, its own GPU driver, the RoCE VPC's zone."""

from __future__ import annotations

from components.errors import Issue
from components.gcp import filesystems
from components.gcp.filesystems import MANAGED_LUSTRE_GKE_VERSION
from components.gcp.gpunetworks import first_zone, pool_zone, roce_pools
from components.gcp.pools import gke_at_least
from components.models import GcpClusterSpec, StackConfig
from components.pool import Pool


def managed_lustre(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
    """A managed-lustre volume has a zone in the cluster's region, distinct file system names, and a GKE version whose
    nodes mount Managed Lustre on its own port."""
    cluster = config.cluster
    volumes = [(i, v) for i, v in enumerate(config.storage.volumes) if v.backend == "managed-lustre"]
    if not isinstance(cluster, GcpClusterSpec) or not volumes:
        return []
    issues: list[Issue] = []
    if not gke_at_least(cluster.kubernetes_version, MANAGED_LUSTRE_GKE_VERSION):
        issues.append(
            Issue(
                "cluster.kubernetesVersion",
                f"managed-lustre volumes (storage.volumes[{volumes[0][0]}]) need GKE nodes of "
                f"{MANAGED_LUSTRE_GKE_VERSION} or later, which mount Managed Lustre on its own port: use 1.33 or later",
            )
        )
    default = first_zone(pools.values(), cluster.zone)
    names: dict[str, int] = {}
    for index, volume in volumes:
        path = f"storage.volumes[{index}]"
        named_zone = filesystems.named_instance(volume.file_system_id)[1] if volume.file_system_id else None
        stated = named_zone or volume.zone
        if stated is None and default is None:
            issues.append(
                Issue(
                    f"{path}.zone",
                    "a Managed Lustre instance lives in one zone, and no GPU pool names one (the cluster is regional): "
                    "set `zone` to the zone of the GPU nodes that mount it",
                )
            )
        elif stated is not None and not stated.startswith(f"{cluster.region}-"):
            # A pool's zone outside the region is the pool's error (nodePools[i].zone).
            where = f"{path}.fileSystemId" if named_zone else f"{path}.zone"
            issues.append(Issue(where, f"zone '{stated}' is not in the cluster's region '{cluster.region}'"))
        if volume.file_system_id is None:
            fsname = volume.lustre_filesystem
            if fsname in names:
                issues.append(
                    Issue(
                        f"{path}.filesystem",
                        f"file system name '{fsname}' is storage.volumes[{names[fsname]}]'s too: a node cannot mount "
                        "two Managed Lustre file systems of one name (the CSI driver refuses the second); set "
                        "`filesystem` to another name of 1-8 letters and digits",
                    )
                )
            names.setdefault(fsname, index)
    return issues


def gpu_operator(config: StackConfig) -> list[Issue]:
    """GKE installs its own driver and device plugin on pools with managed drivers; the GPU Operator
    would run a second device plugin there."""
    if config.cluster.provider != "gcp" or not config.gpu_operator.enabled:
        return []
    return [
        Issue(
            f"nodePools[{i}].gpuDriverVersion",
            "GKE installs the driver and device plugin of this pool, and gpuOperator.enabled would add a second: "
            "set gpuDriverVersion: INSTALLATION_DISABLED, or leave gpuOperator.enabled unset on GKE",
        )
        for i, pool in enumerate(config.node_pools)
        if pool.gpu_driver_version != "INSTALLATION_DISABLED"
    ]


def roce_zone(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
    """The RoCE VPC of GKE rdma pools has a zonal network profile, and the cluster makes one: every pool
    attaching it lives in one zone, the same for all (GKE makes the networks of DRANET pools itself)."""
    cluster = config.cluster
    if not isinstance(cluster, GcpClusterSpec):
        return []
    issues: list[Issue] = []
    first: tuple[str, str] | None = None
    attaching = {p.name for p in roce_pools(pools.values())}
    for index, spec in enumerate(config.node_pools):
        pool = pools.get(spec.name)
        if pool is None or pool.name not in attaching:
            continue
        zone = pool_zone(pool, cluster.zone)
        if zone is None:
            issues.append(
                Issue(
                    f"nodePools[{index}].zone",
                    f"pool '{pool.name}' runs rdma over a RoCE VPC, whose network profile is zonal: "
                    + (
                        "set `zone` or make the cluster zonal (cluster.zone)"
                        if pool.roce_metal
                        else "set `zone`, make the cluster zonal (cluster.zone), or let GKE make the networks "
                        "(acceleratorNetworkProfile: auto)"
                    ),
                )
            )
        elif first is None:
            first = (pool.name, zone)
        elif zone != first[1]:
            issues.append(
                Issue(
                    f"nodePools[{index}].zone",
                    f"the cluster's rdma pools share one RoCE VPC, which is zonal: put pool '{pool.name}' in "
                    f"{first[1]} with pool '{first[0]}', or use fabric tcp",
                )
            )
    return issues
