"""GKE node pool arguments: GPUs, taints, labels, placement, capacity and autoscaling from config and pool."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from pulumi_gcp import compute, container
from pulumi_gcp.container import _inputs

from components import gpudirect
from components.gcp import nodepool
from components.gcp.gpunetworks import NetworkRef
from components.models import NetworkConfig, NodePoolSpec
from components.models.cluster import SystemPoolSpec
from components.pool import Pool
from components.pools import resolve_pools

REGION = "us-central1"
ZONE = "us-central1-a"


def resolved(**fields: Any) -> tuple[NodePoolSpec, Pool]:
    """A GKE pool spec (camelCase config) and the pool it resolves to: a3-highgpu-8g in one zone by default."""
    data = {"name": "h100", "machineType": "a3-highgpu-8g", "maxNodes": 4, "zone": ZONE, **fields}
    data = {key: value for key, value in data.items() if value is not None}
    spec = NodePoolSpec.model_validate(data)
    # n1-standard-16 is no GPU machine of the catalog: the stack vouches for it (cluster.allowUnknown).
    pools, issues = resolve_pools([spec], "gcp", REGION, NetworkConfig(), allow_unknown=["n1-standard-16"])
    assert not issues, issues
    return spec, pools[spec.name]


def refs(pool: Pool, cluster: str = "train") -> dict[str, NetworkRef]:
    """Names for each GPUDirect network of the pool, as the cluster component passes them."""
    return {
        net.name: NetworkRef(gpudirect.vpc_name(cluster, net), gpudirect.subnet_name(cluster, net))
        for net in gpudirect.node_networks(pool)
    }


def regional_args(**fields: Any) -> dict[str, Any]:
    spec, pool = resolved(**fields)
    return nodepool.node_pool_args(spec, pool, cluster_location=REGION, zone=None, gpu_networks=refs(pool))


_NESTED_TYPE = re.compile(r"'(\w+?)(?:ArgsDict|Args)'")


def unknown_keys(value: dict[str, Any], fields: dict[str, str], path: str = "") -> list[str]:
    """Keys of `value` (recursively) that name no argument of the pulumi_gcp input type described by `fields`."""
    unknown = []
    for key, item in value.items():
        if key not in fields:
            unknown.append(path + key)
            continue
        nested = _NESTED_TYPE.search(fields[key])
        if nested is None:
            continue
        typed = getattr(_inputs, f"{nested.group(1)}ArgsDict")
        nested_fields = {name: str(annotation) for name, annotation in typed.__annotations__.items()}
        for element in item if isinstance(item, list) else [item]:
            if isinstance(element, dict):
                unknown += unknown_keys(element, nested_fields, f"{path}{key}.")
    return unknown


NODE_POOL_FIELDS = {
    name: str(parameter.annotation)
    for name, parameter in inspect.signature(container.NodePoolArgs.__init__).parameters.items()
    if name != "__self__"
}


def test_an_a3_highgpu_pool_gets_eight_h100s_with_the_gke_managed_driver() -> None:
    spec, pool = resolved()
    config = nodepool.node_config(spec, pool)

    assert config["machine_type"] == "a3-highgpu-8g"
    assert config["guest_accelerators"] == [
        {"type": "nvidia-h100-80gb", "count": 8, "gpu_driver_installation_config": {"gpu_driver_version": "DEFAULT"}}
    ]
    latest = nodepool.node_config(*resolved(gpuDriverVersion="LATEST"))
    assert latest["guest_accelerators"][0]["gpu_driver_installation_config"] == {"gpu_driver_version": "LATEST"}


@pytest.mark.parametrize(
    ("machine_type", "accelerator", "count", "disk_type"),
    [
        ("g2-standard-48", "nvidia-l4", 4, "pd-ssd"),
        ("a2-ultragpu-8g", "nvidia-a100-80gb", 8, "pd-ssd"),
        ("a3-megagpu-8g", "nvidia-h100-mega-80gb", 8, "pd-ssd"),
        ("a3-ultragpu-8g", "nvidia-h200-141gb", 8, "hyperdisk-balanced"),
        ("a4-highgpu-8g", "nvidia-b200", 8, "hyperdisk-balanced"),
    ],
)
def test_machine_type_disk_and_gpus_follow_the_configured_machine_type(
    machine_type: str, accelerator: str, count: int, disk_type: str
) -> None:
    spec, pool = resolved(machineType=machine_type, diskSizeGb=200)
    config = nodepool.node_config(spec, pool)

    assert config["machine_type"] == machine_type
    assert (config["guest_accelerators"][0]["type"], config["guest_accelerators"][0]["count"]) == (accelerator, count)
    assert (config["disk_size_gb"], config["disk_type"]) == (200, disk_type)


def test_an_accelerator_type_named_in_config_is_attached_to_an_uncatalogued_machine() -> None:
    spec, pool = resolved(machineType="n1-standard-16", acceleratorType="nvidia-tesla-t4", gpusPerNode=2)

    [accelerator] = nodepool.node_config(spec, pool)["guest_accelerators"]
    assert (accelerator["type"], accelerator["count"]) == ("nvidia-tesla-t4", 2)


def test_nodes_use_gvnic_workload_identity_and_the_cloud_platform_scope() -> None:
    config = nodepool.node_config(*resolved())

    assert config["gvnic"] == {"enabled": True}
    assert config["workload_metadata_config"] == {"mode": "GKE_METADATA"}
    assert config["oauth_scopes"] == ["https://www.googleapis.com/auth/cloud-platform"]


def test_the_default_taint_is_the_one_gke_puts_on_gpu_nodes() -> None:
    assert nodepool.node_config(*resolved())["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "value": "pending",
            "effect": "NO_SCHEDULE",
        },
    ]
    unchecked = nodepool.node_config(*resolved(nodeCheck={"enabled": False}))
    assert unchecked["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]


def test_taint_effects_are_spelled_as_the_gke_api_does() -> None:
    stated = [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "team", "value": "research", "effect": "PreferNoSchedule"},
        {"key": "maintenance", "effect": "NoExecute"},
    ]
    config = nodepool.node_config(*resolved(taints=stated))

    assert config["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "team", "value": "research", "effect": "PREFER_NO_SCHEDULE"},
        {"key": "maintenance", "value": "", "effect": "NO_EXECUTE"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "value": "pending",
            "effect": "NO_SCHEDULE",
        },
    ]


def test_nodes_carry_the_pool_label_jobs_select_on_and_the_configured_labels() -> None:
    spec, pool = resolved(labels={"team": "research"})
    config = nodepool.node_config(spec, pool)

    assert config["labels"] == {"team": "research", "gpu-training/pool": "h100", "gpu-training/node-check": "required"}
    assert pool.node_selector.items() <= config["labels"].items(), "jobs' node selector matches the nodes"


def test_a_compact_pool_is_placed_compactly_in_its_one_zone() -> None:
    args = regional_args()

    assert args["placement_policy"] == {"type": "COMPACT"}
    assert args["node_locations"] == [ZONE]


def test_a_pool_without_placement_gets_no_placement_policy() -> None:
    args = regional_args(placement="none")

    assert "placement_policy" not in args
    assert args["node_locations"] == [ZONE]


def test_a_reservation_pool_consumes_its_specific_reservation() -> None:
    args = regional_args(capacity={"type": "reservation", "reservationId": "h100-block-a"}, placement="compact")
    config = args["node_config"]

    assert config["reservation_affinity"] == {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["h100-block-a"],
    }
    assert args["placement_policy"] == {"type": "COMPACT"}
    assert "spot" not in config and "flex_start" not in config
    assert args["autoscaling"]["location_policy"] == "ANY"


def test_a_reservation_pool_is_not_placed_unless_asked() -> None:
    args = regional_args(capacity={"type": "reservation", "reservationId": "h100-block-a"})

    assert "placement_policy" not in args, "the reservation carries its own placement"


def test_a_spot_pool_runs_on_spot_vms_without_a_reservation() -> None:
    args = regional_args(capacity={"type": "spot"})
    config = args["node_config"]

    assert config["spot"] is True
    assert "reservation_affinity" not in config and "flex_start" not in config
    assert args["autoscaling"]["location_policy"] == "ANY"
    assert args["management"]["auto_repair"] is True


def test_a_flex_start_pool_has_what_gke_flex_start_requires() -> None:
    args = regional_args(capacity={"type": "flex-start"}, maxNodes=6)
    config = args["node_config"]

    assert config["flex_start"] is True
    assert "spot" not in config
    assert config["reservation_affinity"] == {"consume_reservation_type": "NO_RESERVATION"}
    assert args["autoscaling"] == {"total_min_node_count": 0, "total_max_node_count": 6, "location_policy": "ANY"}
    assert args["initial_node_count"] == 0
    assert args["management"] == {"auto_repair": False, "auto_upgrade": True}
    assert "placement_policy" not in args


def test_a_queued_pool_is_a_flex_start_pool_whose_nodes_come_only_through_provisioning_requests() -> None:
    args = regional_args(queuedProvisioning=True, maxNodes=6, zone=None)
    config = args["node_config"]

    assert args["queued_provisioning"] == {"enabled": True}
    assert config["flex_start"] is True, "capacity flex-start is derived from queuedProvisioning"
    assert config["reservation_affinity"] == {"consume_reservation_type": "NO_RESERVATION"}
    assert args["autoscaling"] == {"total_min_node_count": 0, "total_max_node_count": 6, "location_policy": "ANY"}
    assert args["management"]["auto_repair"] is False
    assert "placement_policy" not in args
    assert unknown_keys(args, NODE_POOL_FIELDS) == []


def test_gke_puts_the_queued_taint_on_a_queued_pools_nodes_itself() -> None:
    _, pool = resolved(queuedProvisioning=True)
    keys = [t["key"] for t in regional_args(queuedProvisioning=True)["node_config"]["taints"]]

    assert "cloud.google.com/gke-queued" in [t.key for t in pool.taints], "jobs and the flavor tolerate it"
    assert "cloud.google.com/gke-queued" not in keys and "nvidia.com/gpu" in keys
    assert "queued_provisioning" not in regional_args(capacity={"type": "flex-start"})


def test_an_on_demand_pool_uses_matching_automatic_reservations_first() -> None:
    args = regional_args()
    config = args["node_config"]

    assert config["reservation_affinity"] == {"consume_reservation_type": "ANY_RESERVATION"}
    assert "spot" not in config and "flex_start" not in config
    assert "location_policy" not in args["autoscaling"]


def test_a_pool_in_one_zone_scales_between_its_min_and_max_nodes() -> None:
    args = regional_args(minNodes=2, maxNodes=8)

    assert args["autoscaling"] == {"min_node_count": 2, "max_node_count": 8}
    assert args["initial_node_count"] == 2
    assert args["location"] == REGION


def test_a_pool_over_a_regions_zones_uses_total_limits() -> None:
    args = regional_args(zone=None, minNodes=4, maxNodes=8)

    assert args["autoscaling"] == {"total_min_node_count": 4, "total_max_node_count": 8}
    assert "node_locations" not in args and "placement_policy" not in args
    assert args["initial_node_count"] == 2, "initial_node_count is per zone, over three zones"


def test_a_pool_of_a_zonal_cluster_stays_in_the_clusters_zone() -> None:
    spec, pool = resolved(zone=None, minNodes=1, maxNodes=3)
    args = nodepool.node_pool_args(spec, pool, cluster_location=ZONE, zone=ZONE, gpu_networks=refs(pool))

    assert args["autoscaling"] == {"min_node_count": 1, "max_node_count": 3}
    assert args["initial_node_count"] == 1
    assert args["location"] == ZONE and "node_locations" not in args


def test_nodes_upgrade_one_at_a_time_without_a_surge_node() -> None:
    args = regional_args()

    assert args["name"] == "h100"
    assert args["upgrade_settings"] == {"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1}
    assert args["management"] == {"auto_repair": True, "auto_upgrade": True}


def test_the_system_pool_is_untainted_and_scales_over_the_regions_zones() -> None:
    args = nodepool.system_pool_args(SystemPoolSpec(), cluster_location=REGION, zone=None)

    assert args["name"] == "system"
    assert args["node_config"]["machine_type"] == "e2-standard-8"
    assert args["node_config"]["workload_metadata_config"] == {"mode": "GKE_METADATA"}
    assert "taints" not in args["node_config"] and "guest_accelerators" not in args["node_config"]
    assert args["autoscaling"] == {"total_min_node_count": 2, "total_max_node_count": 4}
    assert args["initial_node_count"] == 1


def test_a_zonal_system_pool_takes_its_machine_type_and_size_from_config() -> None:
    system = SystemPoolSpec.model_validate({"machineType": "n2-standard-16", "minNodes": 3, "maxNodes": 5})
    args = nodepool.system_pool_args(system, cluster_location=ZONE, zone=ZONE)

    assert args["node_config"]["machine_type"] == "n2-standard-16"
    assert args["autoscaling"] == {"min_node_count": 3, "max_node_count": 5}
    assert args["initial_node_count"] == 3


@pytest.mark.parametrize(
    "capacity",
    [
        {"type": "on-demand"},
        {"type": "spot"},
        {"type": "flex-start"},
        {"type": "reservation", "reservationId": "r"},
    ],
)
def test_every_key_names_a_pulumi_gcp_node_pool_argument(capacity: dict[str, str]) -> None:
    args = regional_args(capacity=capacity, taints=[{"key": "a", "effect": "NoExecute"}])

    assert unknown_keys(args, NODE_POOL_FIELDS) == []
    system = nodepool.system_pool_args(SystemPoolSpec(), cluster_location=REGION, zone=None)
    assert unknown_keys(system, NODE_POOL_FIELDS) == []


def test_the_key_check_catches_a_misspelt_nested_argument() -> None:
    args = regional_args()
    args["node_config"]["guest_accelerators"][0]["gpu_driver_config"] = {}

    assert unknown_keys(args, NODE_POOL_FIELDS) == ["node_config.guest_accelerators.gpu_driver_config"]


def test_a_machine_with_local_ssds_gets_them_for_ephemeral_storage_and_every_pool_streams_images() -> None:
    spec, pool = resolved()
    config = nodepool.node_config(spec, pool)
    assert config["ephemeral_storage_local_ssd_config"] == {"local_ssd_count": 16}, "a3-highgpu-8g has 16"
    assert config["gcfs_config"] == {"enabled": True}
    spec, pool = resolved(localStorage="none")
    assert "ephemeral_storage_local_ssd_config" not in nodepool.node_config(spec, pool)
    spec, pool = resolved(machineType="g2-standard-48")
    assert "ephemeral_storage_local_ssd_config" not in nodepool.node_config(spec, pool), "no bundled SSDs"


def test_a_gpudirect_pool_gets_one_more_nic_per_network_and_a_tcp_pool_none() -> None:
    args = regional_args()
    assert args["network_config"] == {
        "additional_node_network_configs": [
            {"network": f"train-vpc{i}", "subnetwork": f"train-vpc{i}"} for i in range(1, 5)
        ]
    }, "a3-highgpu-8g: tcpx over 4 GPU NICs"
    assert "network_config" not in regional_args(fabric="tcp")
    spec, pool = resolved()
    with pytest.raises(ValueError, match="'vpc1'"):
        nodepool.node_pool_args(spec, pool, cluster_location=REGION, zone=None)


def test_an_a4x_pool_is_four_gb200s_placed_by_its_workload_policy_with_gkes_arm_taint_left_to_gke() -> None:
    spec, pool = resolved(name="gb200", machineType="a4x-highgpu-4g", maxNodes=18)
    args = nodepool.node_pool_args(
        spec, pool, cluster_location=REGION, zone=None, gpu_networks=refs(pool), workload_policy="train-gb200-1x72"
    )
    config = args["node_config"]
    (accelerator,) = config["guest_accelerators"]
    assert (accelerator["type"], accelerator["count"]) == ("nvidia-gb200", 4)
    assert config["disk_type"] == "hyperdisk-balanced"
    assert args["placement_policy"] == {"type": "COMPACT", "policy_name": "train-gb200-1x72"}
    # GKE taints every Arm node itself; the pool's jobs tolerate it (Pool.taints), the node pool does not state it.
    assert {"key": "kubernetes.io/arch", "value": "arm64", "effect": "NoSchedule"} in [
        t.model_dump() for t in pool.taints
    ]
    assert [t["key"] for t in config["taints"]] == [
        "nvidia.com/gpu",
        "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
    ]
    assert config["ephemeral_storage_local_ssd_config"] == {"local_ssd_count": 4}, "4 Titanium SSDs"
    assert unknown_keys(args, NODE_POOL_FIELDS) == []


def test_the_workload_policy_is_regional_high_throughput_1x72_and_only_for_placed_rack_scale_pools() -> None:
    _, pool = resolved(name="gb200", machineType="a4x-highgpu-4g", maxNodes=18)
    args = nodepool.workload_policy_args(pool, project="ml-prod", region=REGION)
    assert args == {
        "project": "ml-prod",
        "region": REGION,
        "workload_policy": {"type": "HIGH_THROUGHPUT", "accelerator_topology": "1x72"},
    }
    fields = set(inspect.signature(compute.ResourcePolicyArgs.__init__).parameters)
    assert set(args) <= fields
    _, unplaced = resolved(name="gb200", machineType="a4x-highgpu-4g", maxNodes=18, placement="none")
    assert nodepool.workload_policy_args(unplaced, project="ml-prod", region=REGION) is None
    assert "placement_policy" not in regional_args(name="gb200", machineType="a4x-highgpu-4g", placement="none")
    _, h100 = resolved(placement="compact")
    assert nodepool.workload_policy_args(h100, project="ml-prod", region=REGION) is None, "NVLink inside the node"


def test_an_a4x_max_pool_turns_gkes_dranet_on_with_hugepages_and_attaches_the_metal_networks() -> None:
    spec, pool = resolved(name="gb300", machineType="a4x-maxgpu-4g-metal", maxNodes=18)
    assert pool.dranet and pool.roce_metal
    args = nodepool.node_pool_args(spec, pool, cluster_location=REGION, zone=None, gpu_networks=refs(pool))
    config = args["node_config"]
    assert config["labels"]["cloud.google.com/gke-networking-dra-driver"] == "true"
    assert config["linux_node_config"] == {"hugepages_config": {"hugepage_size2m": 4096}}
    names = [c["network"] for c in args["network_config"]["additional_node_network_configs"]]
    assert names == ["train-gvnic-1", *8 * ["train-rdma-metal"]]
    assert unknown_keys(args, NODE_POOL_FIELDS) == []
    _, a4x = resolved(name="gb200", machineType="a4x-highgpu-4g")
    assert "linux_node_config" not in nodepool.node_config(spec, a4x)


def test_every_dranet_pool_runs_gkes_networking_dra_driver_not_only_bare_metal() -> None:
    """Without the label GKE runs no networking-dra-driver on the nodes: no RDMA NIC is published, and no pod
    claiming one is ever scheduled (Google's "Allocate network resources by using GKE managed DRANET";
    cluster-toolkit @1047080 gke-node-pool sets it with every accelerator network profile)."""
    for machine in ("a3-ultragpu-8g", "a4-highgpu-8g"):
        spec, pool = resolved(name="rdma", machineType=machine, maxNodes=4, acceleratorNetworkProfile="auto")
        assert pool.dranet and not pool.roce_metal, machine
        args = nodepool.node_pool_args(spec, pool, cluster_location=REGION, zone=None, gpu_networks=refs(pool))
        assert args["network_config"] == {"accelerator_network_profile": "auto"}
        labels = args["node_config"]["labels"]
        assert labels["cloud.google.com/gke-networking-dra-driver"] == "true", machine
        assert "cloud.google.com/gke-dpv2-unified-cni" not in labels, "bare metal's alone"
    spec, tcpxo = resolved(name="mega", machineType="a3-megagpu-8g", maxNodes=4)
    args = nodepool.node_pool_args(spec, tcpxo, cluster_location=REGION, zone=None, gpu_networks=refs(tcpxo))
    assert "cloud.google.com/gke-networking-dra-driver" not in args["node_config"]["labels"]
