"""examples/yaml-platform: the dev stack as a Pulumi YAML program. Its properties type-check against the schema
the plugin serves, and Construct with them builds what `pulumi up -s dev` builds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from google.protobuf import json_format

import stacks
from tests.provider.plugin import construct
from tests.support.pulumi_mocks import RecordingMonitor, built_inputs, run, use_stack
from tests.support.pulumi_schema import json_schema

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "yaml-platform"
PROGRAM = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())


def _platform() -> dict[str, Any]:
    (resource,) = PROGRAM["resources"].values()
    return resource


def test_the_program_uses_the_plugin_in_this_checkout(served: dict[str, Any]) -> None:
    assert PROGRAM["runtime"] == "yaml"
    assert (EXAMPLE / PROGRAM["packages"]["gpu-training"] / "PulumiPlugin.yaml").is_file()
    assert _platform()["type"] in served["resources"]


def test_its_properties_type_check_against_the_schema(served: dict[str, Any]) -> None:
    resource = _platform()
    jsonschema.validate(resource["properties"], json_schema(served, resource["type"]))


def test_a_mistake_in_it_would_not_type_check(served: dict[str, Any]) -> None:
    resource = _platform()
    wrong = yaml.safe_load(yaml.safe_dump(resource["properties"]))
    wrong["nodePools"][0]["rails"]["interfaces"] = "ens{n}f0np0"  # the stack file's pattern: not a list
    with pytest.raises(jsonschema.ValidationError, match="is not of type 'array'"):
        jsonschema.validate(wrong, json_schema(served, resource["type"]))
    wrong = yaml.safe_load(yaml.safe_dump(resource["properties"]))
    wrong["nodePools"][0]["gpusPerNodes"] = 8
    with pytest.raises(jsonschema.ValidationError, match="gpusPerNodes"):
        jsonschema.validate(wrong, json_schema(served, resource["type"]))


def test_its_outputs_are_outputs_of_the_component(served: dict[str, Any]) -> None:
    outputs = served["resources"][_platform()["type"]]["properties"]
    for name, expression in PROGRAM["outputs"].items():
        (reference,) = re.findall(r"\$\{platform\.(\w+)\}", expression)
        assert reference in outputs, f"outputs.{name}: the Platform has no output {reference}"


def _registered(monitor: RecordingMonitor) -> dict[tuple[str, str], dict[str, Any]]:
    found = {
        (r.type, r.name): built_inputs(r) for r in monitor.registrations if r.type != "gpu-training:index:Platform"
    }
    monitor.registrations.clear()
    return found


def test_construct_builds_what_the_dev_stack_builds(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.dev.yaml")
    run(lambda: stacks.run(stacks.load()))
    program = _registered(pulumi_mocks)
    resource = _platform()
    response = construct(
        pulumi_mocks, resource["type"], "platform", resource["properties"], project="gpu-training-yaml-platform"
    )
    assert _registered(pulumi_mocks) == program, "the same resources with the same inputs"
    state = json_format.MessageToDict(response.state)
    assert set(PROGRAM["outputs"]) <= set(state)
    assert state["runtimes"] == {
        "h100": {
            "torch": "h100-torch",
            "deepspeed": "h100-deepspeed",
            "mpi": "h100-mpi",
            "tensorflow": "h100-tensorflow",
        }
    }
