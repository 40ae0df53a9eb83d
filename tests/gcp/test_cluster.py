"""GkeCluster under Pulumi mocks: the cluster, its system and GPU pools, and a provider from a secret kubeconfig."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pulumi
import yaml

from components.gcp import GkeCluster
from components.models import GcpClusterSpec, NetworkConfig, NodePoolSpec
from components.pool import Pool
from components.pools import resolve_pools
from tests.support.pulumi_mocks import RecordingMonitor, Registration, run

REPO = Path(__file__).resolve().parents[2]
NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
COMPONENT = "gpu-training:index:GkeCluster"
REGION = "us-central1"
ZONE = "us-central1-a"

POOLS = [
    {
        "name": "h100",
        "machineType": "a3-highgpu-8g",
        "maxNodes": 4,
        "zone": ZONE,
        "placement": "compact",
        "capacity": {"type": "reservation", "reservationId": "h100-block-a"},
        "labels": {"team": "research"},
    },
    {
        "name": "l4-spot",
        "machineType": "g2-standard-48",
        "maxNodes": 8,
        "zone": "us-central1-b",
        "capacity": {"type": "spot"},
    },
    {
        "name": "h200-flex",
        "machineType": "a3-ultragpu-8g",
        "maxNodes": 2,
        "zone": ZONE,
        "capacity": {"type": "flex-start"},
    },
]


def cluster_spec(**fields: Any) -> GcpClusterSpec:
    return GcpClusterSpec.model_validate(
        {"provider": "gcp", "name": "train", "project": "ml-prod", "region": REGION, **fields}
    )


def gke_pools(configs: list[dict[str, Any]] = POOLS) -> list[tuple[NodePoolSpec, Pool]]:
    specs = [NodePoolSpec.model_validate(config) for config in configs]
    pools, issues = resolve_pools(specs, "gcp", REGION, NetworkConfig())
    assert not issues, issues
    return [(spec, pools[spec.name]) for spec in specs]


def build(spec: GcpClusterSpec | None = None, pools: list[tuple[NodePoolSpec, Pool]] | None = None) -> GkeCluster:
    return run(lambda: GkeCluster("train", spec or cluster_spec(), gke_pools() if pools is None else pools))


def only(monitor: RecordingMonitor, type_: str) -> Registration:
    """The one registration of a type (the component and its cluster share the name `train`)."""
    [registration] = monitor.of_type(type_)
    return registration


def kubeconfig_text(value: Any) -> str:
    """The kubeconfig a provider registration received, out of its secret envelope if it has one."""
    return value["value"] if isinstance(value, dict) else value


def test_the_cluster_drops_its_default_pool_and_turns_on_workload_identity_and_filestore(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build()

    inputs = only(pulumi_mocks, CLUSTER).inputs
    assert inputs["removeDefaultNodePool"] is True and inputs["initialNodeCount"] == 1
    assert inputs["workloadIdentityConfig"] == {"workloadPool": "ml-prod.svc.id.goog"}
    assert inputs["addonsConfig"]["gcpFilestoreCsiDriverConfig"] == {"enabled": True}
    assert (inputs["name"], inputs["project"], inputs["location"]) == ("train", "ml-prod", REGION)
    assert inputs["minMasterVersion"] == "1.35" and inputs["releaseChannel"] == {"channel": "REGULAR"}
    assert inputs["networkingMode"] == "VPC_NATIVE" and inputs["ipAllocationPolicy"] == {}
    assert inputs["network"] == "default" and "subnetwork" not in inputs
    assert inputs["deletionProtection"] is False


def test_gpu_pools_keep_the_minor_for_gke_to_take_to_its_newest_patch_and_hold_node_upgrades_back(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build(cluster_spec(kubernetesVersion="1.29"))

    inputs = only(pulumi_mocks, CLUSTER).inputs
    # An explicit old patch may no longer be offered; "1.29" is GKE's newest 1.29 patch, past TCPX's least.
    assert inputs["minMasterVersion"] == "1.29"
    (exclusion,) = inputs["maintenancePolicy"]["maintenanceExclusions"]
    assert exclusion["exclusionOptions"]["scope"] == "NO_MINOR_OR_NODE_UPGRADES"
    assert inputs["maintenancePolicy"]["dailyMaintenanceWindow"] == {"startTime": "09:00"}


def test_a_zonal_cluster_lives_in_its_zone_on_its_network(pulumi_mocks: RecordingMonitor) -> None:
    spec = cluster_spec(zone=ZONE, network="training-vpc", subnetwork="training-sub", releaseChannel="STABLE")
    build(spec, pools=[])

    inputs = only(pulumi_mocks, CLUSTER).inputs
    assert inputs["location"] == ZONE
    assert (inputs["network"], inputs["subnetwork"]) == ("training-vpc", "training-sub")
    assert inputs["releaseChannel"] == {"channel": "STABLE"}
    system = pulumi_mocks.named("train-system").inputs
    assert system["location"] == ZONE
    assert system["autoscaling"] == {"minNodeCount": 2, "maxNodeCount": 4}


def test_the_a3_highgpu_pool_has_eight_h100s_compact_placement_and_its_reservation(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build()

    pool = pulumi_mocks.named("train-h100").inputs
    assert (pool["name"], pool["cluster"], pool["project"], pool["location"]) == ("h100", "train", "ml-prod", REGION)
    config = pool["nodeConfig"]
    assert config["machineType"] == "a3-highgpu-8g"
    assert config["guestAccelerators"] == [
        {"type": "nvidia-h100-80gb", "count": 8, "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"}}
    ]
    assert pool["placementPolicy"] == {"type": "COMPACT"}
    assert pool["nodeLocations"] == [ZONE]
    assert config["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["h100-block-a"],
    }
    assert pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}


def test_gpu_nodes_carry_the_pools_taints_and_labels(pulumi_mocks: RecordingMonitor) -> None:
    build()

    config = pulumi_mocks.named("train-h100").inputs["nodeConfig"]
    assert config["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "value": "pending",
            "effect": "NO_SCHEDULE",
        },
    ]
    assert config["labels"] == {"team": "research", "gpu-training/pool": "h100", "gpu-training/node-check": "required"}
    assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert config["gvnic"] == {"enabled": True}
    assert (config["diskType"], config["diskSizeGb"]) == ("pd-ssd", 500)


def test_a_queued_pool_is_registered_with_queued_provisioning(pulumi_mocks: RecordingMonitor) -> None:
    queued = {"name": "a3-dws", "machineType": "a3-highgpu-8g", "maxNodes": 4, "zone": ZONE, "queuedProvisioning": True}
    build(pools=gke_pools([queued]))

    inputs = pulumi_mocks.named("train-a3-dws").inputs
    assert inputs["queuedProvisioning"] == {"enabled": True}
    assert inputs["nodeConfig"]["flexStart"] is True
    assert inputs["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert inputs["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    assert "cloud.google.com/gke-queued" not in [t["key"] for t in inputs["nodeConfig"]["taints"]]


def test_spot_and_flex_start_pools(pulumi_mocks: RecordingMonitor) -> None:
    build()

    spot = pulumi_mocks.named("train-l4-spot").inputs
    assert spot["nodeConfig"]["spot"] is True and "reservationAffinity" not in spot["nodeConfig"]
    assert spot["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-l4"
    assert spot["nodeConfig"]["guestAccelerators"][0]["count"] == 4
    assert spot["placementPolicy"] == {"type": "COMPACT"}, "spot pools with a zone are compact by default"

    flex = pulumi_mocks.named("train-h200-flex").inputs
    assert flex["nodeConfig"]["flexStart"] is True and "spot" not in flex["nodeConfig"]
    assert flex["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert flex["nodeConfig"]["diskType"] == "hyperdisk-balanced"
    assert flex["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 2, "locationPolicy": "ANY"}
    assert flex["management"] == {"autoRepair": False, "autoUpgrade": True}
    assert "placementPolicy" not in flex


def test_the_system_pool_is_untainted_e2_standard_8_with_workload_identity(pulumi_mocks: RecordingMonitor) -> None:
    build()

    system = pulumi_mocks.named("train-system").inputs
    assert (system["name"], system["cluster"]) == ("system", "train")
    assert system["nodeConfig"]["machineType"] == "e2-standard-8"
    assert system["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert "taints" not in system["nodeConfig"]
    assert system["autoscaling"] == {"totalMinNodeCount": 2, "totalMaxNodeCount": 4}


def test_every_child_is_parented_to_the_component_under_a_stable_name(pulumi_mocks: RecordingMonitor) -> None:
    component = build()

    owner = only(pulumi_mocks, COMPONENT)
    assert owner.name == "train"
    children = [r for r in pulumi_mocks.registrations if r is not owner]
    vpcs = ["vpc1", "vpc2", "vpc3", "vpc4", "gvnic-1", "rdma"]
    subnets = [*vpcs[:5], *(f"rdma-{i}" for i in range(8))]
    assert {r.name for r in children} == {
        "train",
        "train-system",
        "train-h100",
        "train-l4-spot",
        "train-h200-flex",
        "train-kubernetes",
        "train-image-streaming",
        *(f"train-{vpc}" for vpc in vpcs),
        *(f"train-{vpc}-internal" for vpc in vpcs[:5]),
        *(f"train-{net}-subnet" for net in subnets),
    }, "the GPUDirect networks of h100 (tcpx) and h200-flex (rdma) too"
    assert all(r.parent == owner.urn for r in children)
    assert set(component.node_pools) == {"h100", "l4-spot", "h200-flex"}
    assert len(pulumi_mocks.of_type(NODE_POOL)) == 4, "three GPU pools and the system pool"


def test_node_pools_wait_for_the_cluster(pulumi_mocks: RecordingMonitor) -> None:
    build()

    cluster = only(pulumi_mocks, CLUSTER)
    assert all(cluster.urn in pool.dependencies for pool in pulumi_mocks.of_type(NODE_POOL))


def test_the_provider_uses_the_gke_auth_plugin_kubeconfig_and_waits_for_the_system_pool(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build()

    [provider] = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert provider.name == "train-kubernetes"
    assert provider.parent == only(pulumi_mocks, COMPONENT).urn
    assert pulumi_mocks.named("train-system").urn in provider.dependencies
    assert provider.inputs["enableServerSideApply"] in (True, "true")
    document = yaml.safe_load(kubeconfig_text(provider.inputs["kubeconfig"]))
    assert document["clusters"][0]["cluster"] == {
        "server": "https://203.0.113.10",
        "certificate-authority-data": "Q0VSVA==",
    }
    assert document["current-context"] == "gke_ml-prod_us-central1_train"
    assert document["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"


def test_the_kubeconfig_output_is_secret(pulumi_mocks: RecordingMonitor) -> None:
    seen: list[tuple[bool, str]] = []

    def program() -> pulumi.Output:
        cluster = GkeCluster("train", cluster_spec(), gke_pools())
        secret = pulumi.Output.from_input(cluster.kubeconfig.is_secret())
        return pulumi.Output.all(secret, pulumi.Output.unsecret(cluster.kubeconfig)).apply(
            lambda values: seen.append((values[0], values[1]))
        )

    run(program)

    [(is_secret, text)] = seen
    assert is_secret is True
    assert "gke-gcloud-auth-plugin" in text


def test_importing_the_gcp_package_does_not_import_pulumi_aws() -> None:
    code = "import components.gcp, sys; assert 'pulumi_aws' not in sys.modules, 'pulumi_aws imported'"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_gpu_pools_wait_for_the_image_streaming_api(pulumi_mocks: RecordingMonitor) -> None:
    build()
    (api,) = pulumi_mocks.of_type("gcp:projects/service:Service")
    assert api.inputs["service"] == "containerfilesystem.googleapis.com"
    assert api.inputs["disableOnDestroy"] is False, "other clusters of the project may stream images too"
    pools = [p for p in pulumi_mocks.of_type(NODE_POOL) if not p.name.endswith("-system")]
    assert pools and all(api.urn in p.dependencies for p in pools)


RACK_POOLS = [
    {
        "name": "a4x",
        "machineType": "a4x-highgpu-4g",
        "maxNodes": 18,
        "zone": ZONE,
        "capacity": {"type": "reservation", "reservationId": "gb200-block"},
    },
    {
        "name": "a4x-max",
        "machineType": "a4x-maxgpu-4g-metal",
        "maxNodes": 18,
        "zone": ZONE,
        "capacity": {"type": "reservation", "reservationId": "gb300-block"},
    },
]


def test_a_rack_scale_pool_is_placed_by_its_own_1x72_workload_policy(pulumi_mocks: RecordingMonitor) -> None:
    build(pools=gke_pools(RACK_POOLS))

    policies = {r.name: r.inputs for r in pulumi_mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")}
    assert set(policies) == {"train-a4x-workload-policy", "train-a4x-max-workload-policy"}
    policy = policies["train-a4x-workload-policy"]
    assert policy["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    assert (policy["name"], policy["project"], policy["region"]) == ("train-a4x-1x72", "ml-prod", REGION)
    pool = pulumi_mocks.named("train-a4x").inputs
    assert pool["placementPolicy"] == {"type": "COMPACT", "policyName": "train-a4x-1x72"}, "reservations too"
    assert pool["nodeLocations"] == [ZONE]
    assert pulumi_mocks.named("train-a4x-workload-policy").urn in pulumi_mocks.named("train-a4x").dependencies


def test_a4x_max_attaches_its_host_network_and_the_metal_roce_vpc_without_multi_networking(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build(pools=gke_pools(RACK_POOLS[1:]))

    networks = {r.name: r.inputs for r in pulumi_mocks.of_type("gcp:compute/network:Network")}
    metal = networks["train-rdma-metal"]
    assert metal["networkProfile"].endswith(f"/global/networkProfiles/{ZONE}-vpc-roce-metal")
    subnets = [r.name for r in pulumi_mocks.of_type("gcp:compute/subnetwork:Subnetwork")]
    assert subnets == ["train-gvnic-1-subnet"], "the metal profile makes the RDMA subnet itself"
    firewalls = [r.name for r in pulumi_mocks.of_type("gcp:compute/firewall:Firewall")]
    assert firewalls == ["train-gvnic-1-internal"]
    pool = pulumi_mocks.named("train-a4x-max").inputs
    attached = pool["networkConfig"]["additionalNodeNetworkConfigs"]
    assert attached[0] == {"network": "train-gvnic-1", "subnetwork": "train-gvnic-1"}
    assert attached[1:] == 8 * [{"network": "train-rdma-metal", "subnetwork": "default-subnet-1-train-rdma-metal"}]
    assert "acceleratorNetworkProfile" not in pool["networkConfig"]
    labels = pool["nodeConfig"]["labels"]
    assert labels["cloud.google.com/gke-networking-dra-driver"] == "true", "pods claim the NICs through DRANET"
    cluster = only(pulumi_mocks, CLUSTER).inputs
    assert cluster["datapathProvider"] == "ADVANCED_DATAPATH"
    assert "enableMultiNetworking" not in cluster, "no pod attaches a network by name"


def test_the_cluster_takes_the_monitoring_config_it_is_given_and_else_keeps_gke_s(
    pulumi_mocks: RecordingMonitor,
) -> None:
    build()
    assert "monitoringConfig" not in only(pulumi_mocks, CLUSTER).inputs, "GKE's own default"
    config = {"enable_components": ["SYSTEM_COMPONENTS", "DCGM"], "managed_prometheus": {"enabled": True}}
    run(lambda: GkeCluster("dcgm", cluster_spec(name="dcgm"), gke_pools(), monitoring=config))
    [cluster] = [r for r in pulumi_mocks.of_type(CLUSTER) if r.name == "dcgm"]
    assert cluster.inputs["monitoringConfig"] == {
        "enableComponents": ["SYSTEM_COMPONENTS", "DCGM"],
        "managedPrometheus": {"enabled": True},
    }
