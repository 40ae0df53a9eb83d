"""The Pulumi program: read the stack's config, validate it, and build it as one Platform component."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import invoke
from pulumi.runtime.config import is_config_secret

from components import launchers
from components.config import read_stack_file
from components.errors import ConfigError
from components.fleet import Fleet as FleetComponent
from components.fleetstack import Fleet, is_fleet, resolve_fleet_raw
from components.kubernetes.objects import as_pulumi_error
from components.models import CONFIG_NAMESPACE, StackConfig
from components.platform import Platform
from components.resolution import resolve_raw
from components.sealing import seal_jobs, secure_keys
from components.stack import Stack


def load() -> Stack | Fleet:
    """The current stack's config from Pulumi config, validated (a fleet's as a fleet); a clean Pulumi error
    otherwise."""
    config = pulumi.Config(CONFIG_NAMESPACE)
    raw: dict[str, Any] = {}
    for name in StackConfig.config_keys():
        value = config.get(name)
        if value is not None:
            raw[name] = _value(value)
    source = Path(f"Pulumi.{pulumi.get_stack()}.yaml")
    try:
        file_raw, lines = read_stack_file(source) if source.is_file() else (None, {})
        stated = file_raw or {}
        # Pulumi hands the program its secrets decrypted: which values were secrets, the stack file says
        # (`secure:`), or, for a key it lacks (from an environment), the engine's list of secret keys.
        secure = {
            *secure_keys(stated),
            *(k for k in raw if k not in stated and is_config_secret(f"{CONFIG_NAMESPACE}:{k}")),
        }
        # A job's secure env values arrive here in plaintext: sealed as Pulumi secrets before anything reads them.
        secret = is_config_secret(f"{CONFIG_NAMESPACE}:jobs")
        raw = seal_jobs(raw, file_raw, pulumi.Output.secret, jobs_secret=secret)
        if is_fleet(raw):
            return resolve_fleet_raw(raw, source=source.name, lines=lines, secure=secure)
        stack = resolve_raw(raw, source=source.name, lines=lines, secure=secure, deployed=deployed())
    except ConfigError as exc:
        raise as_pulumi_error(exc) from None
    for line in launchers.warnings(stack.config.jobs, stack.launches):
        pulumi.log.warn(line)
    return stack


def _value(text: str) -> Any:
    """A config value as Pulumi hands it over: an object or list as JSON, a scalar (`defaultLauncher: trainjob`)
    as its text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def deployed() -> launchers.Deployed:
    """What this stack's last deployment made, read from its own outputs through the engine's builtin
    `pulumi:pulumi:readStackOutputs` (no resource is added); nothing for a stack never deployed."""
    # A self-managed backend's stacks are all in the organization named "organization".
    organization = pulumi.get_organization() or "organization"
    name = f"{organization}/{pulumi.get_project()}/{pulumi.get_stack()}"
    try:
        result = invoke("pulumi:pulumi:readStackOutputs", {"name": name})
    except Exception as exc:
        pulumi.log.warn(
            f"could not read this stack's last outputs ({exc}): jobs that name no launcher take the default"
        )
        return launchers.Deployed()
    value = result.value if isinstance(result.value, dict) else {}
    return launchers.Deployed.from_outputs(value.get("outputs"))


def run(stack: Stack | Fleet) -> dict[str, Any]:
    """Create the stack's platform (or fleet); export and return what it exports."""
    if isinstance(stack, Fleet):
        return _run_fleet(stack)
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
    return _exported(exports)


def _run_fleet(fleet: Fleet) -> dict[str, Any]:
    """Create the fleet; export its workers, queues and jobs (no kubeconfig: the workers' stay on the manager)."""
    component = FleetComponent("gpu-training", fleet)
    exports: dict[str, Any] = {
        "manager": pulumi.Output.from_input(fleet.config.cluster.name),
        "workers": component.workers,
        "queues": component.queues,
        "jobs": component.jobs,
    }
    return _exported(exports)


def _exported(exports: dict[str, Any]) -> dict[str, Any]:
    """Each value exported as a stack output under its name; the exports returned."""
    for name, value in exports.items():
        pulumi.export(name, value)
    return exports
