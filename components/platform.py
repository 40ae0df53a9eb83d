"""The GPU training platform as one component: the cluster, its GPU pools, the add-ons, the platform objects,
the fabric checks and the training jobs of a stack's configuration.

The stack program (`stacks.run`) is this component plus its exports; the component plugin (provider/)
serves it to every other Pulumi language. There is one way to build a platform.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from components import cluster as clusters
from components.addons import plan as addons
from components.errors import ConfigError
from components.kubernetes.addons import ClusterAddons
from components.kubernetes.dependencies import Dependencies, combine
from components.kubernetes.fabriccheck import FabricCheck
from components.kubernetes.objects import as_pulumi_error
from components.kubernetes.platformobjects import PlatformObjects
from components.kubernetes.trainingjob import TrainingJob
from components.manifests import trainingjob
from components.manifests.meta import key
from components.models import StackConfig
from components.resolution import resolve, resolve_raw
from components.stack import Stack, default_queue

TOKEN = "gpu-training:index:Platform"

# Before this component existed the stack program made its children at the root of the stack. The alias
# keeps those URNs (and, through the engine's inherited child aliases, every URN below them), so an
# existing stack updates in place instead of replacing its cluster.
FROM_STACK_ROOT = pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)


class Platform(pulumi.ComponentResource):
    """A GPU training platform: the cluster (EKS, GKE or existing), its GPU node pools, the add-ons, the platform
    objects and the training jobs, from the same configuration as a stack file."""

    cluster_name: pulumi.Output[str]
    """The cluster's name."""
    kubeconfig: pulumi.Output[str]
    """The cluster's kubeconfig (secret)."""
    scheduler: pulumi.Output[str]
    """The gang scheduler: volcano | kueue | none; a TrainingJob's `schedulerType`."""
    default_queue: pulumi.Output[str | None]
    """The queue of jobs that name none: the first declared; a TrainingJob's `defaultQueue`."""
    pools: pulumi.Output[dict[str, Any]]
    """Each pool resolved (GPUs, fabric, taints, selectors, runtimes), by name; an entry is a TrainingJob's `pool`."""
    storage: pulumi.Output[list[dict[str, Any]]]
    """The declared volumes as config (backend, bucket, use ...); a TrainingJob's `storage`, so a job of another
    program mounts a bucket's claim as this stack's jobs do."""
    runtimes: pulumi.Output[dict[str, dict[str, str]]]
    """Each pool's Kubeflow Trainer ClusterTrainingRuntimes by kind (torch -> <pool>-torch), when trainer is on."""
    platform_objects: pulumi.Output[list[str]]
    """The platform objects created, as Kind/namespace/name."""
    addons: pulumi.Output[list[str]]
    """The add-ons installed."""
    jobs: pulumi.Output[dict[str, Any]]
    """Each job's workload and world size, by namespace/name."""
    fabric_checks: pulumi.Output[dict[str, Any]]
    """Each pool's fabric check: its result, or why it has none."""

    def __init__(
        self,
        name: str,
        config: Stack | StackConfig | Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
        *,
        installs: addons.AddonPlan | None = None,
        prefix: str = "",
    ) -> None:
        """Build a platform from a validated Stack, a StackConfig, or config keys as a stack file writes them.
        `installs`: what to install instead of the stack's own add-on plan (a fleet's manager runs Kueue set up for
        MultiKueue). `prefix`: what begins the name of each resource below it but the cluster's, so that more than
        one platform fits in a program (a fleet's inline workers; a URN names no parent, only their types)."""
        super().__init__(TOKEN, name, {}, opts)
        stack = _stack(name, config)
        self.stack = stack
        """The validated stack this platform was built from."""
        self.cluster = clusters.build(stack, pulumi.ResourceOptions(parent=self, aliases=[FROM_STACK_ROOT]))
        """The cluster component (EksCluster, GkeCluster or ExistingCluster)."""
        self.provider = self.cluster.provider
        """The Kubernetes provider of every in-cluster object."""

        def in_cluster(depends_on: Dependencies) -> pulumi.ResourceOptions:
            """A top-level child in the cluster: under this component, on its provider, after `depends_on`."""
            return pulumi.ResourceOptions(
                parent=self, aliases=[FROM_STACK_ROOT], provider=self.provider, depends_on=depends_on
            )

        nodes = [*self.cluster.node_pools.values(), *self.cluster.storage_objects]
        if installs is None:
            installs = addons.plan(stack, efs_role_arn=getattr(self.cluster, "efs_csi_role_arn", None))
        # Add-ons go on once the nodes exist; objects wait for the installs that serve their kinds. With
        # addons.install false another tool installs them, and nothing waits for an install.
        installed = ClusterAddons(
            f"{prefix}addons", installs, in_cluster(nodes), install=stack.config.addons.install, prefix=prefix
        )
        self.installs = installs
        """The add-on plan installed."""
        self.installed = installed
        """The add-ons component: what an object of the cluster waits for (`waits_for`, `ready`)."""
        # A ServiceAccount waits for its cloud identity (EKS Pod Identity, GKE Workload Identity), its jobs for it.
        identities: dict[str, list[pulumi.Resource]] = getattr(self.cluster, "identities", {})
        objects = PlatformObjects(
            f"{prefix}platform",
            stack,
            in_cluster(nodes),
            needs=lambda obj: combine(installed.waits_for(installs, obj), identities.get(key(obj))),
            prefix=prefix,
        )
        self.objects_component = objects
        """The platform objects' component (namespaces, networks, storage, queues, runtimes)."""
        # A pool's fabric check runs once its nodes, every add-on and the objects its pods use are in place.
        checks = {
            pool: FabricCheck(
                f"{prefix}fabric-check-{pool}",
                check,
                in_cluster(combine(nodes, installed.everything(), objects.uses(check.plan))),
            )
            for pool, check in stack.checks.items()
        }
        queue = default_queue(stack.config)
        jobs: dict[str, TrainingJob] = {}
        for plan in stack.jobs:
            # A job waits for its operator (its kind's install), the gang scheduler that admits it, and its
            # pool's fabric check.
            gate = checks.get(plan.pool.name)
            gate = gate if gate is not None and gate.job is not None else None  # a scale-up check holds no job
            needs = combine(
                *(installed.waits_for(installs, obj) for obj in trainingjob.objects(plan)),
                installed.ready(stack.scheduler),
                [gate.job] if gate else None,
            )
            jobs[f"{plan.namespace}/{plan.name}"] = TrainingJob(
                f"{prefix}{plan.namespace}-{plan.name}",
                plan.spec,
                pool=plan.pool,
                scheduler=stack.scheduler,
                queue=queue,
                storage=stack.config.storage.volumes,
                opts=in_cluster(combine(objects.uses(plan), needs)),
            )
        self.cluster_name = pulumi.Output.from_input(stack.config.cluster.name)
        self.kubeconfig = pulumi.Output.secret(self.cluster.kubeconfig)
        self.scheduler = pulumi.Output.from_input(stack.scheduler)
        self.default_queue = pulumi.Output.from_input(queue)
        self.pools = pulumi.Output.from_input({pool: spec.to_config() for pool, spec in stack.pools.items()})
        self.storage = pulumi.Output.from_input([v.to_config() for v in stack.config.storage.volumes])
        self.runtimes = pulumi.Output.from_input(
            {pool: dict(spec.runtimes) for pool, spec in stack.pools.items() if spec.runtimes}
        )
        self.platform_objects = objects.objects
        self.addons = pulumi.Output.from_input(sorted(installed.installs))
        self.jobs = pulumi.Output.from_input(
            {key: {"workload": job.workload, "worldSize": job.world_size} for key, job in jobs.items()}
        )
        self.fabric_checks = pulumi.Output.from_input(
            {
                **{pool: {"enabled": False, "reason": reason} for pool, reason in stack.unchecked.items()},
                **{pool: gate.result.apply(lambda r: {"enabled": True, **r}) for pool, gate in checks.items()},
            }
        )
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "scheduler": self.scheduler,
                "defaultQueue": self.default_queue,
                "pools": self.pools,
                "storage": self.storage,
                "runtimes": self.runtimes,
                "platformObjects": self.platform_objects,
                "addons": self.addons,
                "jobs": self.jobs,
                "fabricChecks": self.fabric_checks,
            }
        )


def _stack(name: str, config: Stack | StackConfig | Mapping[str, Any]) -> Stack:
    """The validated stack; config mistakes as a Pulumi error naming each key and its fix."""
    if isinstance(config, Stack):
        return config
    try:
        if isinstance(config, StackConfig):
            return resolve(config)
        return resolve_raw(config, source=f"Platform {name}")
    except ConfigError as exc:
        raise as_pulumi_error(exc) from None
