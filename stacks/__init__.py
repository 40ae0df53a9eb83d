"""The Pulumi program: read the stack's config, validate it, and compose the components."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

from components.addons import plan as addons
from components.config import read_stack_file
from components.errors import ConfigError
from components.kubernetes.addons import ClusterAddons
from components.kubernetes.dependencies import combine
from components.kubernetes.fabriccheck import FabricCheck
from components.kubernetes.objects import as_pulumi_error
from components.kubernetes.platformobjects import PlatformObjects
from components.kubernetes.trainingjob import TrainingJob
from components.manifests import trainingjob
from components.models import CONFIG_NAMESPACE, StackConfig
from components.validation import Stack, default_queue, resolve_raw
from stacks import clusters


def load() -> Stack:
    """The current stack's config from Pulumi config, validated; a clean Pulumi error otherwise."""
    config = pulumi.Config(CONFIG_NAMESPACE)
    raw: dict[str, Any] = {}
    for name in StackConfig.config_keys():
        value = config.get_object(name)
        if value is not None:
            raw[name] = value
    source = Path(f"Pulumi.{pulumi.get_stack()}.yaml")
    lines = read_stack_file(source)[1] if source.is_file() else {}
    try:
        return resolve_raw(raw, source=source.name, lines=lines)
    except ConfigError as exc:
        raise as_pulumi_error(exc) from None


def run(stack: Stack) -> dict[str, Any]:
    """Create the stack's resources; return what it exports."""
    cluster = clusters.build(stack)
    provider = cluster.provider
    nodes = [*cluster.node_pools.values(), *cluster.storage_objects]
    installs = addons.plan(stack, efs_role_arn=getattr(cluster, "efs_csi_role_arn", None))
    # Add-ons go on once the nodes exist; objects wait for the installs that serve their kinds.
    installed = ClusterAddons("addons", installs, pulumi.ResourceOptions(provider=provider, depends_on=nodes))
    platform = PlatformObjects(
        "platform",
        stack,
        pulumi.ResourceOptions(provider=provider, depends_on=nodes),
        needs=lambda obj: installed.waits_for(installs, obj),
    )
    # A pool's fabric check runs once its nodes, every add-on and the objects its pods use are in place.
    checks = {
        name: FabricCheck(
            f"fabric-check-{name}",
            check,
            pulumi.ResourceOptions(
                provider=provider,
                depends_on=combine(nodes, installed.everything(), platform.uses(check.plan)),
            ),
        )
        for name, check in stack.checks.items()
    }
    jobs = {}
    for plan in stack.jobs:
        # A job waits for its operator (its kind's install), the gang scheduler that admits it, and its
        # pool's fabric check.
        gate = checks.get(plan.pool.name)
        needs = combine(
            *(installed.waits_for(installs, obj) for obj in trainingjob.objects(plan)),
            installed.ready(stack.scheduler),
            [gate.job] if gate else None,
        )
        jobs[f"{plan.namespace}/{plan.name}"] = TrainingJob(
            f"{plan.namespace}-{plan.name}",
            plan.spec,
            pool=plan.pool,
            scheduler=stack.scheduler,
            queue=default_queue(stack.config),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=combine(platform.uses(plan), needs)),
        )
    exports: dict[str, Any] = {
        "cluster": stack.config.cluster.name,
        "kubeconfig": cluster.kubeconfig,
        "scheduler": {"type": stack.scheduler, "defaultQueue": default_queue(stack.config)},
        "pools": {name: pool.to_config() for name, pool in stack.pools.items()},
        "platformObjects": platform.objects,
        "addons": sorted(installed.installs),
        "jobs": {name: {"workload": job.workload, "worldSize": job.world_size} for name, job in jobs.items()},
        "fabricChecks": {
            **{name: {"enabled": False, "reason": reason} for name, reason in stack.unchecked.items()},
            **{name: gate.result.apply(lambda r: {"enabled": True, **r}) for name, gate in checks.items()},
        },
    }
    for name, value in exports.items():
        pulumi.export(name, value)
    return exports
