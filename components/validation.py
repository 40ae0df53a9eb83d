"""Cross-object checks: a stack's jobs, pools, networks, volumes, queues and operators fit together."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from components import (
    fabriccheck,
    identifiers,
    identity,
    jobchecks,
    launchers,
    nodecheck,
    plaintext,
    provisioning,
    quotas,
    repair,
)
from components.aws import checks as aws_checks
from components.errors import ConfigError, Issue
from components.fabriccheck import FabricCheck
from components.gcp import checks as gcp_checks
from components.kubeversion import version_numbers
from components.manifests import fabriccheck as gate_objects
from components.manifests import trainingjob
from components.manifests.plan import JobPlan, plan
from components.manifests.trainingruntime import cluster_runtime, pool_runtimes, runtime_names
from components.models import StackConfig, TrainingJobSpec
from components.nodecheck import NodeCheck
from components.observability import pack as observability
from components.podfit import pods_fit
from components.pool import Pool
from components.pools import resolve_pools
from components.stack import Stack, default_queue, namespaces, pool_name
from components.topology import provider_topology
from components.versions import CLUSTER_AUTOSCALER_IMAGES
from components.wellknown import NODE_CHECK_NAMESPACE


def validate(config: StackConfig, secure: Collection[str] = (), deployed: launchers.Deployed | None = None) -> Stack:
    """The stack with its defaults decided, pools resolved and jobs planned; ConfigError listing every cross-object
    issue but what the add-ons leave of each node (components/resolution.py adds those). `secure`: the config paths
    given as Pulumi secrets, whose values are not plain text whatever they hold. `deployed`: what the stack's last
    deployment made, whose jobs keep their kinds (components/launchers.py)."""
    config, launches, launch_issues = launchers.settle_stack(config, deployed)
    cluster = config.cluster
    region = getattr(cluster, "region", None)
    labelled = config.runs_gpu_operator
    pools, issues = resolve_pools(
        config.node_pools,
        cluster.provider,
        region,
        config.network,
        _demand(config),
        gpu_labels=labelled,
        kubernetes_version=cluster.kubernetes_version,
        allow_unknown=getattr(cluster, "allow_unknown", ()),
    )
    issues = [*identifiers.issues(config), *issues]  # a name the cloud lacks before what follows from it
    pools = {name: _with_platform(config, pool) for name, pool in pools.items()}
    issues = [*plaintext.issues(config, secure), *issues]  # a leaked credential first
    issues += _topology(config)
    issues += _volcano_topologies(config, pools)
    issues += aws_checks.autoscaler_release(config, pools)
    issues += _queued_provisioning(config, pools)
    issues += gcp_checks.gpu_operator(config)
    issues += _gpu_operator_settings(config, pools)
    issues += repair.issues(config)
    issues += observability.issues(config)
    issues += gcp_checks.roce_zone(config, pools)
    issues += _unique(config)
    issues += _storage_providers(config)
    issues += gcp_checks.managed_lustre(config, pools)
    issues += _queues(config)
    issues += identity.issues(config)
    checks, unchecked, found = _fabric_checks(config, pools)
    issues += found
    node_checks, found = _node_checks(config, pools)
    issues += found
    issues += _runtimes_fit(config, pools)
    issues += launch_issues
    plans: list[JobPlan] = []
    built: list[tuple[dict[str, Any], ...]] = []
    for index, job in enumerate(config.jobs):
        planned, objects, found = plan_job(config, pools, job, f"jobs[{index}]")
        if planned is not None:
            plans.append(planned)
            built.append(objects)
        issues += found
    if issues:
        raise ConfigError(issues)
    gates = [c.namespace for c in checks.values()]
    used = tuple(dict.fromkeys([*namespaces(config), *gates, *([NODE_CHECK_NAMESPACE] if node_checks else [])]))
    return Stack(
        config=config,
        pools=pools,
        jobs=tuple(plans),
        namespaces=used,
        checks=checks,
        unchecked=unchecked,
        node_checks=node_checks,
        launches=tuple(launches),
        job_objects=tuple(built),
    )


def plan_job(
    config: StackConfig, pools: Mapping[str, Pool], job: TrainingJobSpec, path: str
) -> tuple[JobPlan | None, tuple[dict[str, Any], ...], list[Issue]]:
    """A job of `config` planned on its pool among `pools`: its plan and objects (None and none when it cannot be
    planned), and every issue of its own (its fit on its pool first, then its pool, operator, queue and claims)."""
    found = jobchecks.issues(config, job, path)
    name = pool_name(config, job)
    if name not in pools:
        return None, (), found
    try:
        planned = plan(
            job, pools[name], config.scheduler.type, default_queue(config), path=path, volumes=config.storage.volumes
        )
    except ConfigError as exc:
        return None, (), [*exc.issues, *found]  # how the job fits its pool comes first
    objects = tuple(trainingjob.objects(planned))
    found += pods_fit(planned.pool, list(objects), f"{path}.nodePool", planned)
    found += quotas.issues(config, planned, path)
    return planned, objects, found


def _node_checks(config: StackConfig, pools: Mapping[str, Pool]) -> tuple[dict[str, NodeCheck], list[Issue]]:
    """Each pool's node check (when on), and what stops one."""
    checks: dict[str, NodeCheck] = {}
    issues: list[Issue] = []
    for index, spec in enumerate(config.node_pools):
        pool = pools.get(spec.name)
        if pool is None or spec.name in checks:
            continue
        path = f"nodePools[{index}]"
        access, engine = nodecheck.gpu_access(config, pool), nodecheck.dcgm_engine(config, pool)
        check, found = nodecheck.resolve(spec.node_check, pool, path=path, access=access, engine=engine)
        issues += found + nodecheck.startup_issues(config, spec.node_check, pool, path=path)
        if check is not None:
            checks[spec.name] = check
    return checks, issues


def _fabric_checks(
    config: StackConfig, pools: Mapping[str, Pool]
) -> tuple[dict[str, FabricCheck], dict[str, str], list[Issue]]:
    """Each pool's fabric check or the reason it has none, and what stops one; a check's Kueue queue must
    reach its namespace."""
    checks: dict[str, FabricCheck] = {}
    unchecked: dict[str, str] = {}
    issues: list[Issue] = []
    queue = default_queue(config)
    for index, spec in enumerate(config.node_pools):
        pool = pools.get(spec.name)
        if pool is None or spec.name in checks or spec.name in unchecked:
            continue
        path = f"nodePools[{index}]"
        check, reason, found = fabriccheck.resolve(spec.fabric_check, pool, config.scheduler.type, queue, path=path)
        issues += [replace(i, after=SIZED_BY_JOBS) for i in found] if spec.max_nodes is None else found
        if check is None:
            unchecked[spec.name] = reason
            continue
        checks[spec.name] = check
        issues += pods_fit(pool, gate_objects.objects(check), f"{path}.fabricCheck")
        reach = next((q.namespaces for q in config.scheduler.queues if q.name == check.plan.queue), [])
        if config.scheduler.type == "kueue" and reach and check.namespace not in reach:
            issues.append(
                Issue(
                    f"{path}.fabricCheck",
                    f"the gate runs in namespace {check.namespace}, where queue '{check.plan.queue}' has no "
                    f"LocalQueue: add {check.namespace} to that queue's namespaces",
                )
            )
    return checks, unchecked, issues


def _runtimes_fit(config: StackConfig, pools: Mapping[str, Pool]) -> list[Issue]:
    """Each pool's ClusterTrainingRuntimes ask of its nodes only what they advertise."""
    if not config.trainer.enabled:
        return []
    issues: list[Issue] = []
    for index, spec in enumerate(config.node_pools):
        pool = pools.get(spec.name)
        if pool is not None:
            runtimes = [cluster_runtime(pool, r, config.scheduler.type) for r in pool_runtimes(pool)]
            issues += pods_fit(pool, runtimes, f"nodePools[{index}]")
    return issues


def _with_platform(config: StackConfig, pool: Pool) -> Pool:
    """The pool with what the platform adds: its network topology, its training runtimes and where its images
    come from."""
    update: dict[str, Any] = {}
    topology = config.scheduler.topology
    if topology.enabled and config.scheduler.type != "none":
        update["topology"] = provider_topology(
            pool.provider, pool.machine_type, topology.levels, nvlink=pool.nvlink_domain_nodes > 0
        )
    if config.trainer.enabled:
        update["runtimes"] = runtime_names(pool)
        update["mpi_image"] = config.trainer.mpi_image
    if config.images.mirror:
        update["registry_mirror"] = config.images.mirror
    if config.images.kubectl:
        update["kubectl_image"] = config.images.kubectl
    return pool.model_copy(update=update) if update else pool


def _topology(config: StackConfig) -> list[Issue]:
    """Topology-aware placement needs a scheduler that places, and levels where the provider labels none."""
    topology = config.scheduler.topology
    provider = config.cluster.provider
    if topology.levels and provider != "existing":
        return [
            Issue(
                "scheduler.topology.levels",
                f"on {provider} the levels come from the provider's node labels: drop scheduler.topology.levels",
            )
        ]
    if not topology.enabled:
        return []
    if config.scheduler.type == "none":
        return [Issue("scheduler.topology.enabled", "placement by topology needs scheduler.type volcano or kueue")]
    if provider == "existing" and not topology.levels:
        return [
            Issue(
                "scheduler.topology.levels",
                "an existing cluster's topology is its own: declare its levels, coarsest first, "
                "e.g. [{name: rack, nodeLabel: example.com/rack}]",
            )
        ]
    return []


def _volcano_topologies(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
    """Volcano discovers one HyperNode tree from node labels: pools with different levels (EKS P6-B200's four
    network layers beside another type's three) would share its HyperNodes at conflicting tiers."""
    if config.scheduler.type != "volcano":
        return []
    names = {p.topology.name: p.name for p in pools.values() if p.topology is not None}
    if len(names) < 2:
        return []
    listed = ", ".join(f"'{pool}' ({topology})" for topology, pool in names.items())
    return [
        Issue(
            "scheduler.topology.enabled",
            f"pools {listed} have network topologies of different depths, and Volcano builds one HyperNode tree "
            "from their labels: use Kueue (a Topology per pool), or keep one kind of topology per cluster",
        )
    ]


def _demand(config: StackConfig) -> dict[str, int]:
    """The most nodes any job asks of each pool: what a pool without maxNodes is sized to."""
    most: dict[str, int] = {}
    for job in config.jobs:
        name = pool_name(config, job)
        if name is not None:
            most[name] = max(most.get(name, 0), job.most_nodes)
    return most


SIZED_BY_JOBS = ("jobs[*].nodePool", "jobs[*].nodes", "nodePools[*].name")
"""What a pool without maxNodes is sized from: the jobs that name it (_demand)."""


_PROVIDER_OF_BACKEND = {"s3": "aws", "efs": "aws", "fsx-lustre": "aws", "gcs": "gcp", "managed-lustre": "gcp"}
_WHAT_BACKEND_NEEDS = {
    "s3": "the Mountpoint for Amazon S3 CSI driver (an EKS add-on) and its IAM role through EKS Pod Identity",
    "efs": "the EFS file system, its mount targets and the EFS CSI driver's IAM role",
    "fsx-lustre": "the FSx for Lustre file system (or a named one's DNS and mount names) for its PersistentVolume",
    "gcs": "GKE's Cloud Storage FUSE CSI add-on and Workload Identity grants on the bucket",
    "managed-lustre": "the Managed Lustre instance on the cluster's VPC and GKE's Managed Lustre CSI add-on",
}


def _storage_providers(config: StackConfig) -> list[Issue]:
    """A volume of a cloud's storage is on that cloud's cluster, where the stack makes what it needs."""
    provider = config.cluster.provider
    issues: list[Issue] = []
    for index, volume in enumerate(config.storage.volumes):
        wanted = _PROVIDER_OF_BACKEND.get(volume.backend)
        if wanted is not None and wanted != provider:
            cloud = {"aws": "an EKS cluster", "gcp": "a GKE cluster"}[wanted]
            issues.append(
                Issue(
                    f"storage.volumes[{index}].backend",
                    f"the {volume.backend} backend needs {cloud} (cluster.provider: {wanted}), not {provider}: the "
                    f"stack makes {_WHAT_BACKEND_NEEDS[volume.backend]} there. On this cluster, make the "
                    "PersistentVolume yourself with storageClassName: <name> and declare the volume as backend: "
                    "storageClass, className: <name>; its claim binds to that volume",
                )
            )
    return issues


def _queued_provisioning(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
    """A pool provisioned through ProvisioningRequests needs Kueue, whose admission check makes them, and on EKS a
    Cluster Autoscaler that serves them."""
    issues: list[Issue] = []
    queued = [(i, p) for i, p in enumerate(config.node_pools) if p.queued_provisioning.enabled]
    if config.scheduler.type != "kueue":
        issues += [
            Issue(
                f"nodePools[{index}].queuedProvisioning.enabled",
                f"pool '{spec.name}' is provisioned through ProvisioningRequests, which only Kueue's admission check "
                "makes, and the stack "
                + ("runs no scheduler" if config.scheduler.type == "none" else f"runs {config.scheduler.type}")
                + (" (Volcano has no ProvisioningRequest support)" if config.scheduler.type == "volcano" else "")
                + ": set scheduler.type: kueue, or drop queuedProvisioning",
            )
            for index, spec in queued
        ]
    cluster = config.cluster
    served = [pools[s.name] for _, s in queued if s.name in pools and pools[s.name].provisioner == "nodegroup"]
    image = CLUSTER_AUTOSCALER_IMAGES.get(cluster.kubernetes_version or "")
    if served and image and version_numbers(image) < version_numbers(provisioning.AUTOSCALER_LEAST):
        issues.append(
            Issue(
                "cluster.kubernetesVersion",
                f"pool '{served[0].name}' is provisioned through ProvisioningRequests, which the Cluster Autoscaler "
                f"serves ({provisioning.ATOMIC_CLASS}) from {provisioning.AUTOSCALER_LEAST}, and {image} is the "
                f"release for {cluster.kubernetes_version}: use Kubernetes 1.30 or later",
            )
        )
    return issues


def _gpu_operator_settings(config: StackConfig, pools: Mapping[str, Pool]) -> list[Issue]:
    """Every gpuOperator setting takes effect, or is an error: none without the operator; no RDMA mode without
    its driver container, which is where the operator sets GPUDirect RDMA up (GPU Operator v26.7.0
    controllers/object_controls.go: driver.rdma acts on the driver DaemonSet only); and no nvidia-peermem
    without a pool that runs InfiniBand or RoCE."""
    spec = config.gpu_operator
    stated = [
        key
        for key, value in (("driver", spec.driver), ("rdma", spec.rdma), ("useHostMofed", spec.use_host_mofed or None))
        if value is not None
    ]
    if not config.runs_gpu_operator:
        why = "gpuOperator.enabled is false" if spec.enabled is False else "GKE brings its own driver"
        return [
            Issue(f"gpuOperator.{key}", f"has no effect: the GPU Operator is not installed ({why}); drop it")
            for key in stated
        ]
    if spec.rdma is not None and not config.runs_gpu_driver:
        return [
            Issue(
                "gpuOperator.rdma",
                "has no effect: the GPU Operator sets GPUDirect RDMA up in its driver container, and "
                "gpuOperator.driver is off (the node image's driver), so DMA-BUF rests on that driver being the open "
                "kernel modules and nvidia-peermem on the hosts loading it; drop rdma, or set driver: true",
            )
        ]
    if spec.rdma == "peermem" and not any(p.fabric in ("infiniband", "roce") for p in pools.values()):
        return [
            Issue(
                "gpuOperator.rdma",
                "peermem registers GPU memory with InfiniBand / RoCE NICs, and no pool runs either (nothing would "
                "bring the MOFED it waits for): drop it, or set a pool's fabric to infiniband or roce",
            )
        ]
    return []


def _queues(config: StackConfig) -> list[Issue]:
    issues: list[Issue] = []
    pools = {p.name for p in config.node_pools}
    for index, queue in enumerate(config.scheduler.queues):
        for position, name in enumerate(queue.pools):
            if name not in pools:
                issues.append(
                    Issue(f"scheduler.queues[{index}].pools[{position}]", f"pool '{name}' is not declared in nodePools")
                )
    if config.scheduler.type == "none" and config.scheduler.queues:
        issues.append(Issue("scheduler.queues", "queues need a scheduler: set scheduler.type to volcano or kueue"))
    return issues


def _unique(config: StackConfig) -> list[Issue]:
    issues: list[Issue] = []
    groups = {
        "network.networks": [(n.namespace, n.name) for n in config.network.networks],
        "storage.volumes": [(v.namespace, v.name) for v in config.storage.volumes],
        "jobs": [(j.namespace, j.name) for j in config.jobs],
        "scheduler.queues": [("", q.name) for q in config.scheduler.queues],
        "namespaces": [("", n.name) for n in config.namespaces],
    }
    for path, keys in groups.items():
        counts = Counter(keys)
        for index, item in enumerate(keys):
            if counts[item] > 1 and keys.index(item) != index:
                where = f" in namespace '{item[0]}'" if item[0] else ""
                issues.append(Issue(f"{path}[{index}].name", f"'{item[1]}' is declared twice{where}; names are unique"))
    return issues
