"""Volcano or Kueue and their configuration, PriorityClasses, and the CSI drivers behind the volumes."""

from __future__ import annotations

import yaml

from components.addons import scheduler, storage
from components.addons.plan import plan
from components.manifests import platform
from tests.addons.stacks import STACKS, everything_aws, raw_config, stack_file, trainer_topology
from tests.support.schemas import assert_valid


def test_one_scheduler_at_a_time() -> None:
    dev, gke = stack_file("dev"), stack_file("gke")
    assert scheduler.volcano(dev).chart.version == "1.15.1" and scheduler.kueue(dev) is None
    assert (
        scheduler.kueue(gke).chart.chart == "oci://registry.k8s.io/kueue/charts/kueue"
        and scheduler.volcano(gke) is None
    )


def test_priority_classes() -> None:
    (high,) = scheduler.priority_classes(everything_aws())
    assert_valid(high)
    assert (high["metadata"]["name"], high["value"], high["preemptionPolicy"]) == (
        "training-high",
        1000,
        "PreemptLowerPriority",
    )


def test_csi_drivers_follow_the_backends() -> None:
    assert storage.nfs(stack_file("dev")).chart.chart == "csi-driver-nfs"
    prod = stack_file("prod")
    assert storage.fsx(prod).values == {"node": {"tolerateAllTaints": True}}
    assert storage.nfs(prod) is None and storage.efs(prod) is None
    efs = storage.efs(everything_aws(), "arn:aws:iam::1:role/efs-csi")
    account = efs.values["controller"]["serviceAccount"]
    assert account["annotations"] == {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/efs-csi"}
    assert account["name"] == "efs-csi-controller-sa"
    assert storage.fsx(stack_file("gke")) is None, "Filestore is a GKE add-on, no chart"


def test_kueue_manages_the_training_operator_jobs_and_keeps_the_chart_defaults() -> None:
    values = scheduler.kueue(stack_file("gke", trainingOperator={"enabled": True, "mpi": True})).values
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    frameworks = config["integrations"]["frameworks"]
    # Job, PyTorchJob, TFJob, MPIJob (v2beta1) and TrainJob, the kinds our launchers submit.
    launchers = {
        "batch/job",
        "kubeflow.org/pytorchjob",
        "kubeflow.org/tfjob",
        "kubeflow.org/mpijob",
        "trainer.kubeflow.org/trainjob",
    }
    assert launchers <= set(frameworks)
    assert {"jobset.x-k8s.io/jobset", "pod", "leaderworkerset.x-k8s.io/leaderworkerset"} <= set(frameworks), "defaults"
    assert len(frameworks) == len(set(frameworks))
    assert (config["apiVersion"], config["kind"]) == ("config.kueue.x-k8s.io/v1beta2", "Configuration")
    assert config["webhook"] == {"port": 9443}
    assert config["health"] == {"healthProbeBindAddress": ":8081"}
    assert config["metrics"] == {"bindAddress": ":8443", "enableClusterQueueResources": True}, "queue usage metrics"
    assert config["leaderElection"]["resourceName"] == "c1f6bfd2.kueue.x-k8s.io"
    assert config["clientConnection"] == {"qps": 300, "burst": 500}


def test_kueue_manages_the_v1_kinds_only_where_their_operators_run() -> None:
    """Kueue ships the v1 integrations off; a stack that installs no v1 operator leaves them off too."""
    frameworks = {
        name: set(
            yaml.safe_load(
                scheduler.kueue(stack_file("gke", trainingOperator=operators)).values["managerConfig"][
                    "controllerManagerConfigYaml"
                ]
            )["integrations"]["frameworks"]
        )
        for name, operators in {
            "none": {"enabled": False, "mpi": False},
            "training": {"enabled": True, "mpi": False},
            "mpi": {"enabled": False, "mpi": True},
        }.items()
    }
    v1 = {"kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/mpijob"}
    assert not frameworks["none"] & v1 and "trainer.kubeflow.org/trainjob" in frameworks["none"]
    assert frameworks["training"] & v1 == {"kubeflow.org/pytorchjob", "kubeflow.org/tfjob"}
    assert frameworks["mpi"] & v1 == {"kubeflow.org/mpijob"}


def test_kueue_admits_gangs_all_or_nothing_and_shares_fairly() -> None:
    config = yaml.safe_load(scheduler.kueue(stack_file("gke")).values["managerConfig"]["controllerManagerConfigYaml"])
    # v1beta2 has no `enable`: the block's presence turns each feature on.
    assert config["waitForPodsReady"] == {
        "timeout": "30m",
        "blockAdmission": True,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
    }
    assert config["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}


def test_kueue_keeps_its_default_failed_node_replacement_and_sets_no_feature_gate() -> None:
    # Every failed-node replacement gate is on by default in the pinned Kueue (v0.19.2 pkg/features): nothing to set.
    config = yaml.safe_load(scheduler.kueue(stack_file("gke")).values["managerConfig"]["controllerManagerConfigYaml"])
    assert "featureGates" not in config


def _volcano_config(values: dict) -> dict:
    return yaml.safe_load(values["custom"]["scheduler_config_override"])


def _plugins(config: dict) -> list[list[str]]:
    return [[p["name"] for p in tier["plugins"]] for tier in config["tiers"]]


def test_volcano_preempts_by_priority_and_reclaims_between_queues() -> None:
    flat = stack_file("dev", scheduler={**raw_config("dev")["scheduler"], "topology": {"enabled": False}})
    values = scheduler.volcano(flat).values
    assert values["basic"] == {"image_pull_policy": "IfNotPresent"}
    assert set(values["custom"]) == {"scheduler_config_override"}, "no HyperNode discovery without topology"
    config = _volcano_config(values)
    # No enqueue: preempt and reclaim skip PodGroups that enqueue keeps Pending while the queue is full.
    assert config["actions"] == "allocate, preempt, reclaim, backfill"
    assert _plugins(config) == [
        ["priority", "gang", "conformance"],
        ["drf", "predicates", "proportion", "nodeorder", "binpack"],
    ]
    first, second = config["tiers"]
    # priority decides the victims; gang and drf would veto whole-job or equal-priority victims.
    assert first["plugins"] == [
        {"name": "priority"},
        {"name": "gang", "enablePreemptable": False},
        {"name": "conformance"},
    ]
    assert {"name": "drf", "enablePreemptable": False} in second["plugins"]
    assert {"name": "proportion"} in second["plugins"], "its reclaimableFn takes back lent shares"
    assert not any("enableJobStarving" in p or "enableReclaimable" in p for t in config["tiers"] for p in t["plugins"])


def test_volcano_queues_keep_their_reclaimable_setting() -> None:
    stack = stack_file(
        "dev",
        scheduler={
            "type": "volcano",
            "queues": [{"name": "research", "gpus": 16}, {"name": "prod", "gpus": 16, "reclaimable": False}],
        },
        jobs=[],
    )
    queues = {q["metadata"]["name"]: q["spec"]["reclaimable"] for q in platform.queues(stack)}
    assert queues == {"research": True, "prod": False}


def test_volcano_enforces_network_topology_and_discovers_hypernodes_from_labels() -> None:
    custom = scheduler.volcano(trainer_topology()).values["custom"]
    config = yaml.safe_load(custom["scheduler_config_override"])
    assert config["actions"] == "allocate, preempt, reclaim, backfill"
    first, second = _plugins(config)
    assert first == ["priority", "gang", "conformance"]
    assert second == ["drf", "predicates", "proportion", "nodeorder", "binpack", "network-topology-aware"]
    assert {"name": "gang", "enablePreemptable": False} in config["tiers"][0]["plugins"]
    (discovery,) = custom["controller_config_override"]["networkTopologyDiscovery"]
    assert (discovery["source"], discovery["enabled"], discovery["interval"]) == ("label", True, "10m")
    assert discovery["config"]["networkTopologyTypes"] == {
        "cluster": [
            {"nodeLabel": "example.com/spine"},
            {"nodeLabel": "example.com/leaf"},
            {"nodeLabel": "kubernetes.io/hostname"},
        ]
    }


def test_volcano_discovers_one_type_shared_by_the_pools_of_one_topology() -> None:
    # Pools of topologies of different depths are refused under Volcano (tests/test_topology.py): one tree.
    pools = [
        {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1a"},
        {"name": "p5b", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1b"},
    ]
    stack = stack_file("prod", nodePools=pools, scheduler={"type": "volcano", "topology": {"enabled": True}}, jobs=[])
    (discovery,) = scheduler.volcano(stack).values["custom"]["controller_config_override"]["networkTopologyDiscovery"]
    types = discovery["config"]["networkTopologyTypes"]
    assert list(types) == ["eks"]
    assert [level["nodeLabel"] for level in types["eks"]] == [
        *(f"topology.k8s.aws/network-node-layer-{n}" for n in range(1, 4)),
        "kubernetes.io/hostname",
    ]
    assert all(len(name) <= 20 for name in types), "Volcano skips longer type names"


def test_volcano_allocates_dynamic_resource_claims_where_pods_carry_them() -> None:
    """Without its DRA predicate Volcano v1.14 binds a pod whose ComputeDomain channel nothing allocated, and the
    kubelet never starts it (tests/simulate/test_nvlink.py proves both on the real scheduler)."""

    def predicates(stack: str) -> dict[str, object]:
        release = next(r for r in plan(STACKS[stack]()).releases if r.name == scheduler.VOLCANO_NAME)
        config = yaml.safe_load(release.values["custom"]["scheduler_config_override"])
        plugins = [p for tier in config["tiers"] for p in tier["plugins"]]
        return next(p for p in plugins if p["name"] == "predicates")

    assert predicates("rack-scale-existing")["arguments"] == {scheduler.DRA_PREDICATE: True}
    assert "arguments" not in predicates("dev"), "stacks without claims keep the chart's predicates"


def test_kueue_maps_each_claimed_device_class_to_a_resource_its_queues_cover() -> None:
    """Kueue v0.19 refuses a workload whose DeviceClass no mapping names (tests/simulate/test_nvlink.py)."""
    gb200 = {
        "name": "gb200",
        "gpusPerNode": 4,
        "gpuModel": "NVIDIA GB200",
        "maxNodes": 18,
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"},
    }
    stack = stack_file(
        "dev",
        nodePools=[*raw_config("dev")["nodePools"], gb200],
        jobs=[],
        scheduler={"type": "kueue", "queues": [{"name": "research", "gpus": 32}]},
    )
    release = next(r for r in plan(stack).releases if r.name == scheduler.KUEUE_NAME)
    config = yaml.safe_load(release.values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["resources"]["deviceClassMappings"] == [
        {"name": "gpu-training/imex-channel", "deviceClassNames": ["compute-domain-default-channel.nvidia.com"]}
    ]
    (queue,) = [o for o in platform.queues(stack) if o["kind"] == "ClusterQueue"]
    (group,) = queue["spec"]["resourceGroups"]
    assert "gpu-training/imex-channel" in group["coveredResources"]
    flavor = next(f for f in group["flavors"] if f["name"] == "gb200")
    assert {"name": "gpu-training/imex-channel", "nominalQuota": "18"} in flavor["resources"], "one per node"
    assert "resources" not in yaml.safe_load(scheduler.kueue_config([])), "no mapping without claims"
