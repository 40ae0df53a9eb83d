"""The gang scheduler: Volcano or Kueue with their configuration, and the PriorityClasses jobs name."""

from __future__ import annotations

from typing import Any

import yaml

from components.addons.install import HelmRelease
from components.manifests.meta import metadata
from components.topology import Topology
from components.validation import Stack
from components.versions import KUEUE, VOLCANO

VOLCANO_NAME = "volcano"
KUEUE_NAME = "kueue"

# The Volcano chart's default scheduler configuration (volcano-sh/volcano v1.15.1,
# installer/helm/chart/volcano/config/volcano-scheduler.conf); an override replaces it whole.
_VOLCANO_TIERS = [
    [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}],
    [
        {"name": "overcommit"},
        {"name": "drf", "enablePreemptable": False},
        {"name": "predicates"},
        {"name": "proportion"},
        {"name": "nodeorder"},
        {"name": "binpack"},
    ],
]
_VOLCANO_ACTIONS = "enqueue, allocate, backfill"
# Without this plugin Volcano ignores a PodGroup's hard networkTopology; upstream's user guide and CI
# configuration add it last in the second tier.
NETWORK_TOPOLOGY_PLUGIN = "network-topology-aware"
DISCOVERY_INTERVAL = "10m"

# The Kueue chart's default manager configuration (kubernetes-sigs/kueue v0.19.2, charts/kueue/values.yaml
# managerConfig.controllerManagerConfigYaml), minus its comments; a value for it replaces it whole.
_KUEUE_CONFIG: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {
        "groupKindConcurrency": {
            "Job.batch": 5,
            "Pod": 5,
            "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1,
        }
    },
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {
        "frameworks": [
            "batch/job",
            "kubeflow.org/mpijob",
            "ray.io/rayjob",
            "ray.io/rayservice",
            "ray.io/raycluster",
            "jobset.x-k8s.io/jobset",
            "workload.codeflare.dev/appwrapper",
            "trainer.kubeflow.org/trainjob",
            "pod",
            "deployment",
            "statefulset",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ]
    },
}
# The chart leaves these commented out: without them PyTorchJobs and TFJobs would bypass Kueue.
KUEUE_TRAINING_OPERATOR_FRAMEWORKS = ("kubeflow.org/pytorchjob", "kubeflow.org/tfjob")


def volcano(stack: Stack) -> HelmRelease | None:
    """Volcano, when it is the scheduler; with topology placement, HyperNodes from node labels."""
    if stack.scheduler != "volcano":
        return None
    values: dict[str, Any] = {"basic": {"image_pull_policy": "IfNotPresent"}}
    if stack.config.scheduler.topology.enabled:
        custom: dict[str, Any] = {"scheduler_config_override": volcano_scheduler_config()}
        topologies = _topologies(stack)
        if topologies:
            custom["controller_config_override"] = volcano_discovery_config(topologies)
        values["custom"] = custom
    return HelmRelease(VOLCANO_NAME, VOLCANO, "volcano-system", values)


def volcano_scheduler_config() -> str:
    """The chart's default scheduler configuration with the network-topology-aware plugin."""
    first, second = _VOLCANO_TIERS
    tiers = [first, [*second, {"name": NETWORK_TOPOLOGY_PLUGIN}]]
    config = {"actions": _VOLCANO_ACTIONS, "tiers": [{"plugins": plugins} for plugins in tiers]}
    return yaml.safe_dump(config, sort_keys=False)


def volcano_discovery_config(topologies: list[Topology]) -> dict[str, Any]:
    """The Volcano controller's HyperNode discovery from node labels: one type per topology."""
    types = {t.name: [{"nodeLabel": level.node_label} for level in t.levels] for t in topologies}
    source = {
        "source": "label",
        "enabled": True,
        "interval": DISCOVERY_INTERVAL,
        "config": {"networkTopologyTypes": types},
    }
    return {"networkTopologyDiscovery": [source]}


def _topologies(stack: Stack) -> list[Topology]:
    """The distinct topologies of the stack's pools, by name, in pool order."""
    found: dict[str, Topology] = {}
    for pool in stack.pools.values():
        if pool.topology is not None:
            found.setdefault(pool.topology.name, pool.topology)
    return list(found.values())


def kueue(stack: Stack) -> HelmRelease | None:
    """Kueue, when it is the scheduler, managing the chart's default frameworks plus PyTorchJob and TFJob."""
    if stack.scheduler != "kueue":
        return None
    return HelmRelease(
        KUEUE_NAME, KUEUE, "kueue-system", {"managerConfig": {"controllerManagerConfigYaml": kueue_config()}}
    )


def kueue_config() -> str:
    """Kueue's manager configuration: the chart's default with the Training Operator's frameworks on."""
    frameworks = [*_KUEUE_CONFIG["integrations"]["frameworks"], *KUEUE_TRAINING_OPERATOR_FRAMEWORKS]
    config = {**_KUEUE_CONFIG, "integrations": {**_KUEUE_CONFIG["integrations"], "frameworks": frameworks}}
    return yaml.safe_dump(config, sort_keys=False)


def priority_classes(stack: Stack) -> list[dict[str, Any]]:
    """The PriorityClasses the stack declares."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": metadata(p.name),
            "value": p.value,
            "preemptionPolicy": "PreemptLowerPriority" if p.preempting else "Never",
            "globalDefault": False,
            "description": p.description or f"gpu-training priority {p.value}",
        }
        for p in stack.config.scheduler.priority_classes
    ]
