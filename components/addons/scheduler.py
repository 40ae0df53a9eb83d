"""The gang scheduler: Volcano or Kueue with their configuration, and the PriorityClasses jobs name."""

from __future__ import annotations

from typing import Any

import yaml

from components.addons import autoscaler, monitoring
from components.addons.install import HelmRelease
from components.fabric import profile
from components.fabriccheck import home_namespace
from components.launchers import LEGACY
from components.manifests.meta import metadata
from components.manifests.queues import device_class_mappings
from components.observability import pack as observability
from components.pool import Pool
from components.stack import Stack
from components.topology import Topology
from components.versions import KUEUE, VOLCANO
from components.wellknown import KUEUE_INSTALL as KUEUE_NAME
from components.wellknown import KUEUE_NAMESPACE, VOLCANO_NAMESPACE
from components.wellknown import VOLCANO_INSTALL as VOLCANO_NAME

# Volcano's scheduler configuration. The chart's default (volcano-sh/volcano v1.15.1,
# installer/helm/chart/volcano/config/volcano-scheduler.conf) runs "enqueue, allocate, backfill": no
# preempt and no reclaim, so PriorityClasses and reclaimable Queues do nothing. An override replaces
# it whole; the tiers below are the chart's, with the changes explained.
#
# Tier 1 decides preemption when it can: Session.Preemptable (pkg/scheduler/framework/session_plugins.go)
# keeps the victims every enabled plugin of a tier agrees on, and moves to the next tier only when
# the tier found none.
# - priority: offers the pods of lower-priority jobs (pkg/scheduler/plugins/priority/priority.go).
# - gang, enablePreemptable false (as in the chart): gang offers only pods above a job's minAvailable
#   (pkg/scheduler/plugins/gang/gang.go), and our PodGroups ask for the whole job, so with it on tier 1
#   would never agree on a victim. enableJobStarving and enableReclaimable stay on: a job preempts
#   until it reaches its minAvailable (an elastic job, its minimum), and reclaim falls through to
#   proportion for whole-job gangs.
# - conformance: spares kube-system and critical pods.
# Tier 2:
# - drf, enablePreemptable false (as in the chart): if priority found no lower-priority victim, drf
#   would let a job evict pods of an equal-priority job with a larger resource share, taking a worker
#   out of a running training job for fairness alone. Off, preemption follows priority only.
# - proportion: queue shares by weight; the reclaim action takes back what a reclaimable queue holds
#   beyond its share (its reclaimableFn).
# - overcommit is left out: it only gates the enqueue action, which this configuration leaves out.
_VOLCANO_TIERS = [
    [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}],
    [
        {"name": "drf", "enablePreemptable": False},
        {"name": "predicates"},
        {"name": "proportion"},
        {"name": "nodeorder"},
        {"name": "binpack"},
    ],
]
# No enqueue: preempt and reclaim skip jobs whose PodGroup is still Pending
# (pkg/scheduler/actions/preempt/preempt.go, .../reclaim/reclaim.go), and enqueue keeps a job Pending
# while its queue or the cluster is full, the very case where it must preempt or reclaim. Upstream's
# e2e tests drop enqueue for preemption for that reason (test/e2e/schedulingaction/preempt.go).
# Without it, allocate moves Pending PodGroups to Inqueue itself (pkg/scheduler/actions/allocate/allocate.go),
# and the operators then create the pods. A job with a networkTopology (topology placement) does not
# preempt in v1.15.1: preempt.go skips it (volcano-sh/volcano#4374); it can still be preempted and reclaim.
_VOLCANO_ACTIONS = "allocate, preempt, reclaim, backfill"
# Without this plugin Volcano ignores a PodGroup's hard networkTopology; upstream's user guide and CI
# configuration add it last in the second tier.
NETWORK_TOPOLOGY_PLUGIN = "network-topology-aware"
DISCOVERY_INTERVAL = "10m"
DRA_PREDICATE = "predicate.DynamicResourceAllocationEnable"

# The Kueue chart's default manager configuration (kubernetes-sigs/kueue v0.19.2, charts/kueue/values.yaml
# managerConfig.controllerManagerConfigYaml), minus its comments; a value for it replaces it whole.
_KUEUE_CONFIG: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    # enableClusterQueueResources (ours; off in the chart) reports each ClusterQueue's usage and quota per flavor
    # (kueue_cluster_queue_resource_usage, _nominal_quota), which the queue dashboard draws.
    "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
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
KUEUE_TRAINING_OPERATOR_FRAMEWORKS = (LEGACY["pytorch"].framework, LEGACY["tensorflow"].framework)
# All-or-nothing admission for gangs (kubernetes-sigs/kueue v0.19.2, apis/config/v1beta2/configuration_types.go
# WaitForPodsReady; the chart's values.yaml has it commented out). In v1beta2 the block's presence turns it
# on: there is no `enable` field.
# - timeout: an admitted job whose pods are not all ready by then is evicted and requeued. 30 minutes,
#   not 10: GPU pools scale from zero, and a new GPU node (boot, driver, device plugins) pulling a
#   20 GB training image takes more than 10, which would evict every cold start.
# - blockAdmission: admit the next job only once the previous one's pods are ready, so that two gangs
#   that each got part of the nodes cannot deadlock (site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md).
# - requeuingStrategy: requeue from the eviction time with exponential backoff, 60 s doubling up to an
#   hour (the defaults in apis/config/v1beta2/defaults.go), and never give up (no backoffLimitCount).
KUEUE_WAIT_FOR_PODS_READY: dict[str, Any] = {
    "timeout": "30m",
    "blockAdmission": True,
    "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
}
# Fair sharing across each cohort's ClusterQueues, by their weights (Configuration.FairSharing, same file).
# Its presence turns it on; pkg/config/validation.go requires preemptionStrategies, and these two, in this
# order, are what Kueue uses when none are given (parseStrategies, pkg/scheduler/preemption/preemption.go).
KUEUE_FAIR_SHARING: dict[str, Any] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
# Failed-node replacement for topology-aware jobs is Kueue's default at the pinned version, so the configuration sets
# no feature gate (kubernetes-sigs/kueue v0.19.2, pkg/features/kube_features.go: TASFailedNodeReplacement,
# TASFailedNodeReplacementFailFast and TASReplaceNodeOnPodTermination beta and on since 0.14, TASReplaceNodeOnNodeTaints
# since 0.17; keps/2724-topology-aware-scheduling "Node failures"). Re-read that file on a Kueue upgrade:
# - TASFailedNodeReplacement: a node of an admitted job that fails is swapped in the job's topology assignment, so
#   only its pods move; it needs kubernetes.io/hostname as the topology's finest level (the tas-hostname-level rule).
# - TASFailedNodeReplacementFailFast: when no replacement fits at the first try, the job is evicted and re-admitted
#   whole instead of waiting for one.
# - TASReplaceNodeOnPodTermination: a NotReady node counts as failed once the job's pods on it have terminated.
# - TASReplaceNodeOnNodeTaints: so does a node tainted NoExecute (or NoSchedule with the job's pods gone there),
#   as node repair and quarantine taint bad nodes.


def volcano(stack: Stack) -> HelmRelease | None:
    """Volcano, when it is the scheduler; with topology placement, HyperNodes from node labels."""
    if stack.scheduler != "volcano":
        return None
    topology = stack.config.scheduler.topology.enabled
    claims = any(p.nvlink_domain_nodes or profile(p, home_namespace(p)).claims for p in stack.pools.values())
    custom: dict[str, Any] = {"scheduler_config_override": volcano_scheduler_config(topology, dra=claims)}
    topologies = _topologies(stack) if topology else []
    if topologies:
        custom["controller_config_override"] = volcano_discovery_config(topologies)
    values: dict[str, Any] = {"basic": {"image_pull_policy": "IfNotPresent"}, "custom": custom}
    return HelmRelease(VOLCANO_NAME, VOLCANO, VOLCANO_NAMESPACE, values)


def volcano_scheduler_config(topology: bool = False, *, dra: bool = False) -> str:
    """Volcano's scheduler configuration: preemption by priority and reclaim between queues, with topology
    placement the network-topology-aware plugin, and with `dra` (pods that claim devices: a ComputeDomain's
    channel, GKE's RDMA NICs) the predicates' dynamic resource allocation."""
    first, second = _VOLCANO_TIERS
    if dra:
        # Off by default in v1.14 (plugins/predicates/predicates.go); without it Volcano binds a pod whose claims
        # nothing allocated, and the kubelet never starts it (found in simulate, tests/simulate/test_nvlink.py).
        on = {"name": "predicates", "arguments": {DRA_PREDICATE: True}}
        second = [on if plugin["name"] == "predicates" else plugin for plugin in second]
    tiers = [first, [*second, {"name": NETWORK_TOPOLOGY_PLUGIN}] if topology else second]
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
    """Kueue, when it is the scheduler, managing the chart's default frameworks plus PyTorchJob and TFJob; after the
    ProvisioningRequest CRD when the stack installs it."""
    if stack.scheduler != "kueue":
        return None
    values: dict[str, Any] = {
        "managerConfig": {
            "controllerManagerConfigYaml": kueue_config(list(stack.pools.values()), legacy_frameworks(stack))
        }
    }
    pack = observability.resolve(stack.config)
    if pack.scrapes:
        # The chart's ServiceMonitor for Kueue's metrics (charts/kueue templates/prometheus/monitor.yaml): its
        # kind must exist when Helm installs it, so Kueue waits for a kube-prometheus-stack the stack installs.
        values["enablePrometheus"] = True
    # Kueue sets its ProvisioningRequest admission check up only if the CRD is served when it starts.
    needs = (autoscaler.CRD_NAME,) if autoscaler.requests_served(stack) else ()
    if pack.install:
        needs += (monitoring.NAME,)
    return HelmRelease(KUEUE_NAME, KUEUE, KUEUE_NAMESPACE, values, needs=needs)


def legacy_frameworks(stack: Stack) -> tuple[str, ...]:
    """The Kubeflow v1 integrations Kueue manages: those of the v1 operators the stack installs (for its v1 jobs,
    or a job stack's), none otherwise, as Kueue itself now ships them off (components/launchers.py)."""
    operators = stack.config.training_operator
    found = KUEUE_TRAINING_OPERATOR_FRAMEWORKS if operators.enabled else ()
    return (*found, LEGACY["mpi"].framework) if operators.mpi else found


def kueue_config(pools: list[Pool] | None = None, legacy: tuple[str, ...] = ()) -> str:
    """Kueue's manager configuration: the chart's default frameworks, the v1 ones only as `legacy` lists them,
    all-or-nothing admission, fair sharing (failed-node replacement is Kueue's default), and the DeviceClasses
    the pools' workers claim mapped to the resources their queues cover."""
    v1 = {legacy.framework for legacy in LEGACY.values()}
    chart = [f for f in _KUEUE_CONFIG["integrations"]["frameworks"] if f not in v1 or f in legacy]
    frameworks = [*chart, *(f for f in legacy if f not in chart)]
    config = {
        **_KUEUE_CONFIG,
        "integrations": {**_KUEUE_CONFIG["integrations"], "frameworks": frameworks},
        "waitForPodsReady": KUEUE_WAIT_FOR_PODS_READY,
        "fairSharing": KUEUE_FAIR_SHARING,
    }
    mappings = device_class_mappings(pools or [])
    if mappings:
        config["resources"] = {"deviceClassMappings": mappings}
    return yaml.safe_dump(config, sort_keys=False)


MULTIKUEUE_FRAMEWORKS = ("trainer.kubeflow.org/trainjob",)
"""What a fleet manager's Kueue manages: the one kind a fleet dispatches. MultiKueue watches the kind of every
integration the manager enables on every worker, and holds a worker unconnected until each watch is up
(kubernetes-sigs/kueue v0.19.2 cmd/kueue/main.go:529, pkg/controller/admissionchecks/multikueue/
multikueuecluster.go:351-366): with the chart's defaults each worker would have to serve, and grant, AppWrappers,
LeaderWorkerSets, MPIJobs, Pods and StatefulSets."""


def manager_config(pools: list[Pool]) -> str:
    """Kueue's configuration on a fleet's manager: as on a cluster (`kueue_config`, with the workers' pools for the
    DeviceClasses their jobs claim) but managing only TrainJobs, and without all-or-nothing admission, which is the
    workers' (where the pods run): MultiKueue copies no pods' readiness to the manager's Workload
    (pkg/controller/admissionchecks/multikueue/workload.go has no PodsReady), so the manager's timeout would evict a
    job a worker is still starting, and its blockAdmission would admit one job at a time."""
    config = yaml.safe_load(kueue_config(pools))
    config["integrations"] = {"frameworks": list(MULTIKUEUE_FRAMEWORKS)}
    del config["waitForPodsReady"]
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
