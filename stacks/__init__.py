"""The Pulumi program: read the stack's config, validate it, and build it as one Platform component."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

from components.config import read_stack_file
from components.errors import ConfigError
from components.kubernetes.objects import as_pulumi_error
from components.models import CONFIG_NAMESPACE, StackConfig
from components.platform import Platform
from components.validation import Stack, resolve_raw


def load() -> Stack:
    """The current stack's config from Pulumi config, validated; a clean Pulumi error otherwise."""
    config = pulumi.Config(CONFIG_NAMESPACE)
    raw: dict[str, Any] = {}
    for name in StackConfig.config_keys():
        value = config.get_object(name)
        if value is not None:
            raw[name] = value
    source = Path(f"Pulumi.{pulumi.get_stack()}.yaml")
    try:
        lines = read_stack_file(source)[1] if source.is_file() else {}
        return resolve_raw(raw, source=source.name, lines=lines)
    except ConfigError as exc:
        raise as_pulumi_error(exc) from None


def run(stack: Stack) -> dict[str, Any]:
    """Create the stack's platform; export and return what it exports."""
    platform = Platform("gpu-training", stack)
    exports: dict[str, Any] = {
        "cluster": platform.cluster_name,
        "kubeconfig": platform.kubeconfig,
        "scheduler": pulumi.Output.all(platform.scheduler, platform.default_queue).apply(
            lambda s: {"type": s[0], "defaultQueue": s[1]}
        ),
        "pools": platform.pools,
        "storage": platform.storage,
        "platformObjects": platform.platform_objects,
        "addons": platform.addons,
        "jobs": platform.jobs,
        "fabricChecks": platform.fabric_checks,
    }
    for name, value in exports.items():
        pulumi.export(name, value)
    return exports
