"""GKE node pool arguments, as plain dicts keyed like pulumi_gcp.container.NodePool's arguments.

Pure: no Pulumi import. The component passes these dicts to `container.NodePool` as they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from components import catalog, provisioning
from components.gcp.gpunetworks import NetworkRef, node_network_config
from components.gcp.pools import GKE_ARM_TAINT
from components.models.cluster import SystemPoolSpec
from components.models.nodepool import NodePoolSpec
from components.pool import SYSTEM_POOL, Pool

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"
SYSTEM_MACHINE_TYPE = "e2-standard-8"

REGIONAL_ZONES = 3
"""How many zones GKE spreads a regional cluster's node pools over when none are named."""

ACCELERATOR_TOPOLOGY = "1x72"
"""The accelerator topology of a rack-scale pool's workload policy: 72 GPUs, one NVL72 rack (GKE's sub-block)."""

TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
"""Kubernetes taint effects as the GKE API spells them."""

# A3 Ultra (H200), A4 (B200) and A4X (GB200) boot only from Hyperdisk; Persistent Disk is not offered there.
HYPERDISK_ONLY_PREFIXES = ("a3-ultragpu-", "a4-", "a4x-")


def boot_disk_type(machine_type: str) -> str:
    """The boot disk type for a GPU node of this machine type: pd-ssd, or Hyperdisk where PD is not offered."""
    return "hyperdisk-balanced" if machine_type.startswith(HYPERDISK_ONLY_PREFIXES) else "pd-ssd"


METAL_HUGEPAGES_2M = 4096
"""2 MiB hugepages on a bare-metal RDMA node (cluster-toolkit v1.95.0 examples/gke-a4x-max-bm)."""


def taints(pool: Pool) -> list[dict[str, str]]:
    """The pool's taints in the GKE API's form, the node check's startup taint included (GKE puts a node pool's
    taints on each node when it registers; the check removes its own). GKE's Arm and queued-provisioning taints are
    left to GKE, which puts them on every Arm node and every node of a queued pool itself."""
    own = (GKE_ARM_TAINT, provisioning.GKE_QUEUED_TAINT)
    every = [t for t in (*pool.taints, *pool.startup_taints) if t not in own]
    return [{"key": t.key, "value": t.value, "effect": TAINT_EFFECTS[t.effect]} for t in every]


def workload_policy_args(pool: Pool, *, project: str, region: str) -> dict[str, Any] | None:
    """The `compute.ResourcePolicy` arguments but `name` of a rack-scale pool's workload policy: high throughput in
    one "1x72" sub-block (an NVL72 rack), which its compact placement names; None for other pools."""
    if not (pool.nvlink_domain_nodes and pool.placement == "compact"):
        return None
    # cluster-toolkit v1.95.0 examples/gke-a4x and gke-a4x-max-bm: modules/compute/resource-policy with
    # workload_policy {type: HIGH_THROUGHPUT, accelerator_topology: "1x72"}, in the cluster's region.
    return {
        "project": project,
        "region": region,
        "workload_policy": {"type": "HIGH_THROUGHPUT", "accelerator_topology": ACCELERATOR_TOPOLOGY},
    }


def placement_policy(pool: Pool, workload_policy: Any = None) -> dict[str, Any] | None:
    """The node pool's `placement_policy`: compact, naming the pool's workload policy when it has one
    (`workload_policy` is that policy's name); None for a pool without placement."""
    if pool.placement != "compact":
        return None
    # cluster-toolkit's resource-policy module hands gke-node-pool {type: COMPACT, name: <policy>}, which it passes
    # as placement_policy {type, policy_name} (modules/compute/resource-policy/outputs.tf; gke-node-pool/main.tf).
    return {"type": "COMPACT", "policy_name": workload_policy} if workload_policy is not None else {"type": "COMPACT"}


def reservation_affinity(spec: NodePoolSpec, pool: Pool) -> dict[str, Any] | None:
    """Which reservations the pool's nodes consume, by capacity type (the pool's: a queued pool's is flex-start
    unless stated); None leaves GKE's default."""
    if pool.capacity == "reservation":
        return {
            "consume_reservation_type": "SPECIFIC_RESERVATION",
            "key": RESERVATION_NAME_KEY,
            "values": [spec.capacity.reservation_id],
        }
    if pool.capacity == "flex-start":
        # Flex-start capacity comes from Dynamic Workload Scheduler, never from a reservation.
        return {"consume_reservation_type": "NO_RESERVATION"}
    if pool.capacity == "on-demand":
        # Compute Engine's own default, stated so a preview shows it: matching automatic reservations
        # (already paid for) are used first, then on-demand capacity.
        return {"consume_reservation_type": "ANY_RESERVATION"}
    return None


def node_config(spec: NodePoolSpec, pool: Pool) -> dict[str, Any]:
    """The pool's `node_config`: machine, GPUs with the GKE-managed driver, taints, labels, disk, capacity."""
    machine_type = spec.machine_type or pool.machine_type or ""
    config: dict[str, Any] = {
        "machine_type": machine_type,
        "guest_accelerators": [
            {
                "type": pool.accelerator_type,
                "count": pool.gpus_per_node,
                "gpu_driver_installation_config": {"gpu_driver_version": spec.gpu_driver_version},
            }
        ],
        "labels": dict(pool.labels),
        "taints": taints(pool),
        # gVNIC is required by A3 and newer and is the faster NIC on every GPU series.
        "gvnic": {"enabled": True},
        "disk_size_gb": spec.disk_size_gb,
        "disk_type": boot_disk_type(machine_type),
        # Workload Identity: pods get their Google identity from the GKE metadata server.
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
        # Image streaming: containers start while their (often tens of GB) training images stream in.
        "gcfs_config": {"enabled": True},
    }
    if pool.roce_metal:
        # 2 MiB hugepages on bare-metal RDMA nodes, 4,096 of them, as cluster-toolkit v1.95.0
        # examples/gke-a4x-max-bm sets (linux_node_config.hugepages_config.hugepage_size_2m).
        config["linux_node_config"] = {"hugepages_config": {"hugepage_size2m": METAL_HUGEPAGES_2M}}
    machine = catalog.lookup("gcp", machine_type)
    if pool.local_storage and machine is not None and machine.local_ssds:
        # GKE puts the machine's local SSDs in one array for ephemeral storage: images, emptyDirs, logs.
        config["ephemeral_storage_local_ssd_config"] = {"local_ssd_count": machine.local_ssds}
    if pool.capacity == "spot":
        config["spot"] = True
    if pool.capacity == "flex-start":
        config["flex_start"] = True
    affinity = reservation_affinity(spec, pool)
    if affinity is not None:
        config["reservation_affinity"] = affinity
    return config


def autoscaling(
    min_nodes: int, max_nodes: int, *, single_zone: bool, location_policy: str | None = None
) -> dict[str, Any]:
    """Autoscaling limits that mean the whole pool: per-zone limits in one zone, total limits across zones."""
    # min/max_node_count are per zone: a pool over three zones with max 4 would grow to 12 nodes.
    # The total limits keep maxNodes what jobs are checked against, however many zones there are.
    limits = (
        {"min_node_count": min_nodes, "max_node_count": max_nodes}
        if single_zone
        else {"total_min_node_count": min_nodes, "total_max_node_count": max_nodes}
    )
    return {**limits, "location_policy": location_policy} if location_policy else limits


def initial_node_count(min_nodes: int, *, single_zone: bool) -> int:
    """The nodes a new pool starts with, per zone as GKE counts them: enough for `min_nodes` in all."""
    return min_nodes if single_zone else math.ceil(min_nodes / REGIONAL_ZONES)


def node_pool_args(
    spec: NodePoolSpec,
    pool: Pool,
    *,
    cluster_location: str,
    zone: str | None,
    gpu_networks: Mapping[str, NetworkRef] | None = None,
    workload_policy: Any = None,
) -> dict[str, Any]:
    """The GPU pool's `container.NodePool` arguments but `cluster` and `project`.

    `cluster_location` is the cluster's zone or region; `zone` is the cluster's zone, None when regional.
    `gpu_networks` names the VPC and subnet of each GPUDirect network the cluster made, by network name.
    `workload_policy` names the pool's workload policy (`workload_policy_args`), when it has one.
    """
    flex_start = pool.capacity == "flex-start"
    single_zone = pool.zone is not None or zone is not None
    # ANY: "prioritize utilization of unused reservations, and reduce preemption risk for Spot VMs"
    # (pulumi_gcp NodePoolAutoscaling); GKE's flex-start node pools require it.
    location_policy = "ANY" if pool.capacity in ("spot", "reservation", "flex-start") else None
    args: dict[str, Any] = {
        "name": spec.name,
        "location": cluster_location,
        "initial_node_count": initial_node_count(spec.min_nodes, single_zone=single_zone),
        # Flex-start pools are documented with total limits (gcloud --total-min-nodes / --total-max-nodes).
        "autoscaling": autoscaling(
            spec.min_nodes, pool.max_nodes, single_zone=single_zone and not flex_start, location_policy=location_policy
        ),
        # Auto-upgrade cannot be turned off in a release channel: the cluster's maintenance exclusion holds
        # node upgrades back instead (components/gcp/upgrades.py). Flex-start pools are created without
        # auto-repair (gcloud --no-enable-autorepair in GKE's flex-start guide; Cluster Toolkit enforces it).
        "management": {"auto_repair": not flex_start, "auto_upgrade": True},
        # Upgrade one node at a time without a surge node: GPU capacity for an extra node is rarely
        # there, and a reservation has none spare.
        "upgrade_settings": {"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1},
        "node_config": node_config(spec, pool),
    }
    if pool.provisioning_class is not None:
        # Nodes come only through ProvisioningRequests (Kueue's admission check): flex-start, from zero, no
        # reservation, no compact placement, which the pool's checks have made sure of (cluster-toolkit
        # modules/compute/gke-node-pool/main.tf, its preconditions on enable_queued_provisioning).
        args["queued_provisioning"] = {"enabled": True}
    if pool.zone is not None:
        args["node_locations"] = [pool.zone]
    placement = placement_policy(pool, workload_policy)
    if placement is not None:
        args["placement_policy"] = placement
    # GPUDirect asks no more of the node pool than its networks: Cluster Toolkit's gke-node-pool sets
    # nothing else for these machines (no gpudirect_strategy), and gVNIC stays on.
    network = node_network_config(pool, gpu_networks or {})
    if network is not None:
        args["network_config"] = network
    return args


def system_pool_args(system: SystemPoolSpec, *, cluster_location: str, zone: str | None) -> dict[str, Any]:
    """The untainted add-on pool's `container.NodePool` arguments but `cluster` and `project`."""
    single_zone = zone is not None
    return {
        "name": SYSTEM_POOL,
        "location": cluster_location,
        "initial_node_count": initial_node_count(system.min_nodes, single_zone=single_zone),
        "autoscaling": autoscaling(system.min_nodes, system.max_nodes, single_zone=single_zone),
        "management": {"auto_repair": True, "auto_upgrade": True},
        "node_config": {
            "machine_type": system.machine_type or SYSTEM_MACHINE_TYPE,
            "workload_metadata_config": {"mode": "GKE_METADATA"},
            "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
        },
    }
