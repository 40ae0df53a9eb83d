"""How a GKE cluster's versions move: its maintenance policy.

Pure: no Pulumi import. The component passes these values to `container.Cluster` as they are.
"""

from __future__ import annotations

from typing import Any

from components.models.cluster import GcpClusterSpec, MaintenanceExclusionSpec

GPU_EXCLUSION_NAME = "gpu-training-no-minor-or-node-upgrades"
# A fixed start in the past, as cluster-toolkit v1.95.0 examples/gke-a3-highgpu, gke-a3-ultragpu and gke-a4 do:
# the exclusion is in force from creation, and a constant keeps every preview free of a spurious change.
GPU_EXCLUSION_START = "2026-01-01T00:00:00Z"
UNTIL_END_OF_SUPPORT = "UNTIL_END_OF_SUPPORT"


def maintenance_policy(spec: GcpClusterSpec, has_gpu_pools: bool) -> dict[str, Any]:
    """The cluster's `maintenance_policy`: the daily window, and the user's exclusions or, with GPU pools,
    one that holds back minor and node upgrades until the end of support of the cluster's minor."""
    maintenance = spec.maintenance
    exclusions = maintenance.exclusions
    if exclusions is None:
        # Every GPU pool, GPUDirect or not, runs gang jobs that one drained node stops (a TCP pool's job
        # too), and GKE cannot turn auto-upgrade off in a release channel: hold node and minor upgrades
        # back (control-plane patches still come), as cluster-toolkit v1.95.0 examples/gke-a3-highgpu,
        # gke-a3-ultragpu and gke-a4 do. A cluster with no GPU pool keeps GKE's default of upgrading.
        exclusions = (
            [MaintenanceExclusionSpec(name=GPU_EXCLUSION_NAME, start_time=GPU_EXCLUSION_START)] if has_gpu_pools else []
        )
    return {
        "daily_maintenance_window": {"start_time": maintenance.daily_window_start},
        "maintenance_exclusions": [_exclusion(e) for e in exclusions],
    }


def _exclusion(exclusion: MaintenanceExclusionSpec) -> dict[str, Any]:
    """One exclusion in the GKE API's form: a fixed end, or the end of support of the cluster's minor."""
    options: dict[str, Any] = {"scope": exclusion.scope}
    ends: dict[str, Any] = {}
    if exclusion.end_time is None:
        options["end_time_behavior"] = UNTIL_END_OF_SUPPORT
    else:
        ends["end_time"] = exclusion.end_time
    return {
        "exclusion_name": exclusion.name,
        "start_time": exclusion.start_time,
        **ends,
        "exclusion_options": options,
    }
