"""The plugin's Platform builds what the stack program (`pulumi up -s dev`) builds, from the same configuration:
in-process (the front class, given its inputs as the component provider hands them over) and over gRPC
(Construct, as a TypeScript or YAML program calls it). The stack program itself is a Platform, so this checks
the path from the schema's inputs to the config models, and the wire."""

from __future__ import annotations

import typing
from typing import Any

import yaml
from google.protobuf import json_format

import stacks
from components.models.base import snake
from tests.provider.plugin import REPO, construct
from tests.support.pulumi_mocks import RecordingMonitor, built_inputs, exported, resolved, run, use_stack


def _dev_config() -> dict[str, Any]:
    """Pulumi.dev.yaml's keys without the namespace: the Platform's inputs, camelCase as written."""
    config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    return {key.removeprefix("gpu-training:"): value for key, value in config.items()}


def _children(monitor: RecordingMonitor) -> dict[tuple[str, str], dict[str, Any]]:
    """What was registered, by (type, name), without the Platform component itself."""
    return {(r.type, r.name): built_inputs(r) for r in monitor.registrations if r.type != "gpu-training:index:Platform"}


def _program(monitor: RecordingMonitor, monkeypatch: Any) -> tuple[dict[tuple[str, str], dict[str, Any]], Any]:
    monkeypatch.chdir(REPO)
    use_stack(monitor, REPO / "Pulumi.dev.yaml")
    exports = exported(run(lambda: stacks.run(stacks.load())))
    found = _children(monitor)
    monitor.registrations.clear()
    return found, exports


def test_the_front_class_builds_what_the_stack_program_builds(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    from gpu_training_plugin import Platform

    program, exports = _program(pulumi_mocks, monkeypatch)
    platforms: list[Any] = []
    run(lambda: platforms.append(Platform("gpu-training", _snake_keys(_dev_config()))))
    component = _children(pulumi_mocks)

    assert set(component) == set(program)
    assert component == program, "the same inputs, resource by resource"
    platform = pulumi_mocks.named("gpu-training")
    assert platform.type == "gpu-training:index:Platform"
    tops = {r.name for r in pulumi_mocks.registrations if r.parent == platform.urn}
    assert {"train-dev", "addons", "platform", "training-llama-finetune"} <= tops, "children of the component"
    pools, _ = resolved(platforms[0].pools)
    assert pools == exports["pools"]
    _, secret = resolved(platforms[0].kubeconfig)
    assert secret
    runtimes, _ = resolved(platforms[0].runtimes)
    assert runtimes == {
        "h100": {
            "torch": "h100-torch",
            "deepspeed": "h100-deepspeed",
            "mpi": "h100-mpi",
            "tensorflow": "h100-tensorflow",
        }
    }


def _snake_keys(config: dict[str, Any]) -> dict[str, Any]:
    """The config as the component provider hands it to the front class: the schema's keys in snake_case
    (free-form maps keep theirs) and enums as their values (enums equal their str values, so strings stand in)."""
    from gpu_training_plugin.config_types import StackConfig

    def walk(value: Any, tp: Any) -> Any:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is typing.NotRequired:
            return walk(value, args[0])
        if typing.is_typeddict(tp) and isinstance(value, dict):
            hints = tp.__annotations__
            return {(snake(k) if snake(k) in hints else k): walk(v, hints.get(snake(k), Any)) for k, v in value.items()}
        if origin is list and isinstance(value, list):
            return [walk(v, args[0]) for v in value]
        return value

    return walk(config, StackConfig)


def test_construct_builds_the_dev_stack_over_grpc(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    program, _ = _program(pulumi_mocks, monkeypatch)
    response = construct(pulumi_mocks, "gpu-training:index:Platform", "gpu-training", _dev_config())
    remote = _children(pulumi_mocks)
    assert set(remote) == set(program)
    assert remote == program
    state = json_format.MessageToDict(response.state)
    assert state["scheduler"] == "volcano"
    assert state["pools"]["h100"]["gpusPerNode"] == 8
    # A secret travels in Pulumi's secret envelope (its signature key), so other languages see it as secret.
    assert state["kubeconfig"]["4dabf18193072939515e22adb298388d"] == "1b47061264138c4ac30d75fd1eb44270"
