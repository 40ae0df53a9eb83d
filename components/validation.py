"""Cross-object checks: a stack's jobs, pools, networks, volumes, queues and operators fit together."""

from __future__ import annotations

from collections import ChainMap, Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from components import (
    fabriccheck,
    identifiers,
    identity,
    launchers,
    mandatory,
    nodecheck,
    overhead,
    plaintext,
    provisioning,
    quotas,
    repair,
    reserved,
    sealing,
)
from components.allocatable import pod_requests, unadvertised
from components.config import parse_stack, read_stack_file
from components.errors import ConfigError, Issue, did_you_mean
from components.fabriccheck import FabricCheck
from components.gcp import filesystems
from components.gcp.filesystems import MANAGED_LUSTRE_GKE_VERSION
from components.gcp.gpunetworks import first_zone, pool_zone, roce_pools
from components.gcp.pools import gke_at_least
from components.kubeversion import version_numbers
from components.manifests import fabriccheck as gate_objects
from components.manifests import trainingjob
from components.manifests.plan import JobPlan, SchedulerKind, plan
from components.manifests.trainingruntime import cluster_runtime, pool_runtimes, runtime_names
from components.models import AwsClusterSpec, GcpClusterSpec, StackConfig, TrainingJobSpec
from components.nodecheck import NodeCheck
from components.observability import pack as observability
from components.pool import POOL_LABEL, Pool, resolve_pools
from components.topology import provider_topology
from components.versions import CLUSTER_AUTOSCALER_IMAGES

if TYPE_CHECKING:
    from components.rules.podtemplate import PodTemplate

_OPERATOR = {
    "pytorch": ("trainingOperator.enabled", "the Training Operator"),
    "tensorflow": ("trainingOperator.enabled", "the Training Operator"),
    "mpi": ("trainingOperator.mpi", "the MPI Operator"),
    "trainjob": ("trainer.enabled", "Kubeflow Trainer v2"),
}


@dataclass(frozen=True, slots=True)
class Stack:
    """A validated stack: its config, its resolved pools and its planned jobs."""

    config: StackConfig
    pools: dict[str, Pool]
    jobs: tuple[JobPlan, ...]
    namespaces: tuple[str, ...]
    checks: dict[str, FabricCheck] = field(default_factory=dict)
    """Each gated pool's fabric check, by pool name."""
    unchecked: dict[str, str] = field(default_factory=dict)
    """Why each other pool has no fabric check, by pool name."""
    node_checks: dict[str, NodeCheck] = field(default_factory=dict)
    """Each checked pool's node check (its nodes' check at join), by pool name."""
    launches: tuple[launchers.Choice, ...] = field(default=(), compare=False)
    """How each job's launcher was chosen, in the order of `jobs` (empty when the stack was made otherwise)."""
    job_objects: tuple[tuple[dict[str, Any], ...], ...] = field(default=(), compare=False, repr=False)
    """Each job's objects (`trainingjob.objects`), in the order of `jobs`, as validation built them to check that
    its pods fit: render writes these rather than build them again. Empty when the stack was made otherwise."""

    def objects_of(self, index: int) -> tuple[dict[str, Any], ...]:
        """The objects of `jobs[index]`: those validation built, else built now."""
        if len(self.job_objects) == len(self.jobs):
            return self.job_objects[index]
        return tuple(trainingjob.objects(self.jobs[index]))

    @property
    def scheduler(self) -> SchedulerKind:
        """volcano | kueue | none."""
        return self.config.scheduler.type

    @property
    def rdma(self) -> bool:
        """Whether a pool runs InfiniBand or RoCE (RDMA through the host's HCAs)."""
        return any(p.fabric in ("infiniband", "roce") for p in self.pools.values())


def resolve(config: StackConfig, secure: Collection[str] = (), deployed: launchers.Deployed | None = None) -> Stack:
    """The stack with its defaults decided, pools resolved and jobs planned; ConfigError listing every cross-object
    issue. `secure`: the config paths given as Pulumi secrets, whose values are not plain text whatever they hold.
    `deployed`: what the stack's last deployment made, whose jobs keep their kinds (components/launchers.py)."""
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
    issues += _autoscaler_release(config, pools)
    issues += _queued_provisioning(config, pools)
    issues += _gke_gpu_operator(config)
    issues += _gpu_operator_settings(config, pools)
    issues += repair.issues(config)
    issues += observability.issues(config)
    issues += _gke_roce_zone(config, pools)
    issues += _unique(config)
    issues += _storage_providers(config)
    issues += _managed_lustre(config, pools)
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
        path = f"jobs[{index}]"
        found = _job_issues(config, job, path)
        name = _pool_name(config, job)
        if name in pools:
            try:
                planned = plan(
                    job,
                    pools[name],
                    config.scheduler.type,
                    default_queue(config),
                    path=path,
                    volumes=config.storage.volumes,
                )
            except ConfigError as exc:
                found = [*exc.issues, *found]  # how the job fits its pool comes first
            else:
                plans.append(planned)
                objects = trainingjob.objects(planned)
                built.append(tuple(objects))
                found += pods_fit(planned.pool, objects, f"{path}.nodePool", planned)
                found += quotas.issues(config, planned, path)
        issues += found
    if issues:
        raise ConfigError(issues)
    gates = [c.namespace for c in checks.values()]
    used = tuple(dict.fromkeys([*namespaces(config), *gates, *([nodecheck.NAMESPACE] if node_checks else [])]))
    stack = Stack(
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
    # What the DaemonSets of the stack and its add-ons leave of each new node: read from the stack as it renders.
    found = reserved.issues(stack) or overhead.issues(stack)
    if found:
        raise ConfigError(found)
    return stack


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


def pods_fit(pool: Pool, objects: list[dict[str, Any]], path: str, job: JobPlan | None = None) -> list[Issue]:
    """Every pod template among `objects` that runs on `pool` requests only what a node of it advertises
    (components/allocatable.py): a pod asking more, or anything else, stays Pending, and no node is ever
    added for it. `job`: the plan the objects are a TrainJob's of, whose pods its runtime makes."""
    issues: list[Issue] = []
    for obj, template in pool_pods(pool, objects, job):
        where = f"{obj['kind']} {obj['metadata']['name']} ({template.role} pods)"
        scaled = ", and nothing would add a node for them" if pool.provisioner else ""
        issues += [
            Issue(path, f"{where} {problem} ({pool.provisioner or 'existing'} nodes): never scheduled{scaled}")
            for problem in unadvertised(pod_requests(template.spec), pool)
        ]
    return issues


def pool_pods(
    pool: Pool, objects: list[dict[str, Any]], job: JobPlan | None = None
) -> list[tuple[dict[str, Any], PodTemplate]]:
    """Each object among `objects` with each of its pod templates that runs on `pool`: those selecting the pool, and
    any that asks for GPUs. `job`: the plan the objects are a TrainJob's of, whose pods its runtime makes."""
    # components.rules reads the pod templates out of every kind we emit; it imports the add-ons, which import
    # this module, so it is imported here, when first needed.
    from components.rules.pods import templates
    from components.rules.trainjobs import TRAINJOB, trainjob_pods

    found: list[tuple[dict[str, Any], PodTemplate]] = []
    for obj in objects:
        pods = templates(obj)
        if obj.get("kind") == TRAINJOB and job is not None:
            own = [o for o in objects if o.get("kind") == "TrainingRuntime"]
            runtime = own[0] if own else cluster_runtime(pool, job.spec.training_runtime or "torch", job.scheduler)
            pods = trainjob_pods(obj, runtime)
        for template in pods:
            selector = template.spec.get("nodeSelector") or {}
            on_pool = (template.metadata.get("labels") or {}).get(POOL_LABEL) == pool.name or (
                pool.node_selector and pool.node_selector.items() <= selector.items()
            )
            if on_pool or template.gpus:  # not a CPU pod placed elsewhere (an MPI launcher)
                found.append((obj, template))
    return found


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


def resolve_file(path: str | Path) -> Stack:
    """The validated stack of a stack file; errors name the file and line."""
    path = Path(path)
    raw, lines = read_stack_file(path)
    return resolve_raw(raw, source=str(path), lines=lines, base_dir=path.parent)


def resolve_raw(
    raw: Mapping[str, Any],
    *,
    source: str | None = None,
    lines: Mapping[str, int] | None = None,
    base_dir: Path | None = None,
    secure: Collection[str] = (),
    deployed: launchers.Deployed | None = None,
) -> Stack:
    """The validated stack of raw config keys; errors name `source` and the line when given. `secure`: config paths
    the stack file gives as Pulumi secrets where `raw` holds them decrypted (a Pulumi program's config).
    `deployed`: what the stack's last deployment made (a Pulumi program reads it from the stack's outputs)."""
    # Lines that parse_stack adds (job files) stay here; `lines` itself is read only when an error needs a line.
    lines = ChainMap({}, lines) if lines is not None else {}
    config = parse_stack(raw, source=source, lines=lines, base_dir=base_dir)
    try:
        stack = resolve(config, {*sealing.secure_keys(raw), *secure}, deployed)
        # What `check` blocks as mandatory, refused here: where a stack file becomes a stack (render, check, simulate,
        # the Pulumi program), not on every resolve of a stack made in code (a tenth of a second a stack).
        found = mandatory.issues(stack)
        if found:
            raise ConfigError(found)
    except ConfigError as exc:
        raise (exc.located(source, lines) if source else exc) from None
    return stack


def namespaces(config: StackConfig) -> tuple[str, ...]:
    """Every namespace the stack declares or uses, in first-use order."""
    names = [n.name for n in config.namespaces]
    names += [n.namespace for n in config.all_networks]
    names += [v.namespace for v in config.storage.volumes]
    names += [j.namespace for j in config.jobs]
    names += [a.namespace for a in config.service_accounts]
    for queue in config.scheduler.queues:
        names += queue.namespaces
    return tuple(dict.fromkeys(names))


def _demand(config: StackConfig) -> dict[str, int]:
    """The most nodes any job asks of each pool: what a pool without maxNodes is sized to."""
    most: dict[str, int] = {}
    for job in config.jobs:
        name = _pool_name(config, job)
        if name is not None:
            most[name] = max(most.get(name, 0), job.most_nodes)
    return most


SIZED_BY_JOBS = ("jobs[*].nodePool", "jobs[*].nodes", "nodePools[*].name")
"""What a pool without maxNodes is sized from: the jobs that name it (_demand)."""


def _pool_name(config: StackConfig, job: TrainingJobSpec) -> str | None:
    if job.node_pool:
        return job.node_pool
    return config.node_pools[0].name if len(config.node_pools) == 1 else None


def default_queue(config: StackConfig) -> str | None:
    """The queue of jobs that name none: the first declared."""
    return config.scheduler.queues[0].name if config.scheduler.queues else None


def _job_issues(config: StackConfig, job: TrainingJobSpec, path: str) -> list[Issue]:
    """What stops a job other than its fit on the pool: the pool, operator, queue and claims it names."""
    issues: list[Issue] = []
    declared = list(dict.fromkeys(p.name for p in config.node_pools))
    name = _pool_name(config, job)
    if name is None:
        issues.append(
            Issue(
                f"{path}.nodePool",
                f"is required when the stack has {len(config.node_pools)} pools; "
                f"choose one of: {', '.join(declared) or 'none declared'}",
                after=("nodePools[*].name",),  # two pools of one name are one mistake, stated there
            )
        )
    elif name not in declared:
        issues.append(
            Issue(
                f"{path}.nodePool",
                f"pool '{name}' is not declared in nodePools; {did_you_mean(name, declared)}declared: "
                f"{', '.join(declared) or 'none'}",
            )
        )

    operator = _OPERATOR.get(job.launcher)
    if operator is not None:
        key, what = operator
        enabled = {
            "trainingOperator.enabled": config.training_operator.enabled,
            "trainingOperator.mpi": config.training_operator.mpi,
            "trainer.enabled": config.trainer.enabled,
        }[key]
        if not enabled:
            issues.append(
                Issue(
                    f"{path}.launcher",
                    f"the {job.launcher} launcher needs {what}, which is disabled: set {key}: true "
                    "or use the indexed launcher",
                )
            )

    scheduler = config.scheduler
    queues = [q.name for q in scheduler.queues]
    if job.scheduler.queue and scheduler.type == "none":
        issues.append(Issue(f"{path}.scheduler.queue", "the stack has no gang scheduler (scheduler.type: none)"))
    elif job.scheduler.queue and job.scheduler.queue not in queues:
        issues.append(
            Issue(
                f"{path}.scheduler.queue",
                f"queue '{job.scheduler.queue}' is not declared in scheduler.queues "
                f"(declared: {', '.join(queues) or 'none'})",
            )
        )
    elif scheduler.type == "kueue" and not queues:
        issues.append(Issue("scheduler.queues", "Kueue admits jobs through queues: declare at least one"))

    claims = {(v.namespace, v.name): v for v in config.storage.volumes}
    for position, mount in enumerate(job.volumes):
        volume = claims.get((job.namespace, mount.claim))
        if volume is not None and volume.access_mode == "ReadOnlyMany" and not mount.read_only:
            issues.append(
                Issue(
                    f"{path}.volumes[{position}].readOnly",
                    f"claim '{mount.claim}' is ReadOnlyMany: mount it with readOnly: true",
                )
            )
        if volume is None:
            issues.append(
                Issue(
                    f"{path}.volumes[{position}].claim",
                    f"claim '{mount.claim}' is not declared in storage.volumes of namespace '{job.namespace}'",
                )
            )
    issues += _checkpoint_issues(config, job, path)
    return issues


def _checkpoint_issues(config: StackConfig, job: TrainingJobSpec, path: str) -> list[Issue]:
    """The checkpoint claim is declared, and a volume checkpoints can be written to and rotated on."""
    if job.checkpoint is None:
        return []
    where = f"{path}.checkpoint.claim"
    claim = job.checkpoint.claim
    volumes = config.storage.volumes
    index = next((i for i, v in enumerate(volumes) if (v.namespace, v.name) == (job.namespace, claim)), None)
    if index is None:
        listed = any(m.claim == claim for m in job.volumes)  # reported at volumes[...] already
        message = f"claim '{claim}' is not declared in storage.volumes of namespace '{job.namespace}'"
        return [] if listed else [Issue(where, message)]
    volume = volumes[index]
    if volume.access_mode == "ReadOnlyMany":
        return [Issue(where, f"claim '{claim}' is ReadOnlyMany (storage.volumes[{index}]); checkpoints are written")]
    if volume.access_mode == "ReadWriteOnce" and job.most_nodes > 1:
        # The checkpoint-rwx rule's verdict, given at the config line rather than by `check` afterwards.
        return [
            Issue(
                where,
                f"claim '{claim}' is ReadWriteOnce (storage.volumes[{index}].accessMode), mounted on one node at a "
                f"time, and each of the job's {job.most_nodes} nodes writes checkpoints: make it ReadWriteMany",
            )
        ]
    if volume.object_use == "data" and volume.mount_options is None:
        return [
            Issue(
                where,
                f"claim '{claim}' is a data volume (storage.volumes[{index}] use: data): its mount keeps metadata "
                "for its life and cannot delete or overwrite files, as checkpoint rotation needs; set use: "
                "checkpoints there, or name another claim",
            )
        ]
    return []


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


def _managed_lustre(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
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


def _autoscaler_release(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
    """A node group pool that scales needs a Cluster Autoscaler released for the cluster's minor."""
    cluster = config.cluster
    scaling = [p for p in pools.values() if p.autoscaled]
    if (
        not isinstance(cluster, AwsClusterSpec)
        or not scaling
        or cluster.kubernetes_version in CLUSTER_AUTOSCALER_IMAGES
    ):
        return []
    return [
        Issue(
            "cluster.kubernetesVersion",
            f"pool '{scaling[0].name}' is scaled by the Cluster Autoscaler, which has no release pinned for "
            f"{cluster.kubernetes_version} (pinned: {', '.join(CLUSTER_AUTOSCALER_IMAGES)}); use one of those, "
            "or let Karpenter provision the pool (minNodes: 0)",
        )
    ]


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


def _gke_gpu_operator(config: StackConfig) -> list[Issue]:
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


def _gke_roce_zone(config: StackConfig, pools: dict[str, Pool]) -> list[Issue]:
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
