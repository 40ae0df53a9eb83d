"""The plugin, started as the engine starts it, serves a schema with TrainingJob and Platform whose inputs
are the config models' fields, with the models' descriptions."""

from __future__ import annotations

import tomllib
import typing
from typing import Any

import pytest
from pydantic import BaseModel

from components.models import StackConfig, TrainingJobSpec
from components.models.base import snake
from tests.provider.plugin import REPO, plugin, schema

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    with plugin("127.0.0.1:1") as stub:  # GetSchema needs no engine: the address is only kept
        return schema(stub)


def test_the_schema_names_the_package_and_both_components(served: dict[str, Any]) -> None:
    assert served["name"] == "gpu-training"
    assert set(served["resources"]) == {"gpu-training:index:TrainingJob", "gpu-training:index:Platform"}
    assert all(r["isComponent"] for r in served["resources"].values())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert served["version"] == project["version"], "the plugin serves the package's version: a release tag pins it"


def test_training_job_inputs_and_outputs(served: dict[str, Any]) -> None:
    job = served["resources"]["gpu-training:index:TrainingJob"]
    inputs = job["inputProperties"]
    assert inputs["image"] == {"description": "Container image. Required.", "type": "string", "plain": True}
    assert inputs["command"]["type"] == "array" and inputs["command"]["items"]["type"] == "string"
    assert inputs["nodes"]["type"] == "integer"
    assert inputs["launcher"]["$ref"] == "#/types/gpu-training:index:Launcher"
    assert inputs["elastic"]["$ref"] == "#/types/gpu-training:index:ElasticSpec"
    # Text, {secretKeyRef: ...}, {configMapKeyRef: ...} or a secret: the models validate what the schema cannot say.
    assert inputs["env"]["additionalProperties"]["$ref"] == "pulumi.json#/Any"
    assert "plain" not in inputs["env"]["additionalProperties"], "a value may be a secret Output of the caller"
    assert inputs["envFrom"]["items"]["$ref"] == "#/types/gpu-training:index:EnvFromSpec"
    assert inputs["deepspeed"]["$ref"] == "#/types/gpu-training:index:DeepSpeedSpec"
    # The pool, scheduler and queue may come from another stack: inputs, not plain values.
    assert inputs["pool"]["additionalProperties"]["$ref"] == "pulumi.json#/Any"
    assert not {"plain"} & (set(inputs["pool"]) | set(inputs["schedulerType"]) | set(inputs["defaultQueue"]))
    assert inputs["scheduler"]["$ref"] == "#/types/gpu-training:index:JobSchedulerSpec"
    assert job["requiredInputs"] == ["command", "image", "pool"]
    assert set(job["properties"]) == {"worldSize", "objects", "workload"}
    assert job["properties"]["worldSize"]["type"] == "integer"
    assert job["properties"]["objects"]["items"]["type"] == "string"
    assert sorted(job["required"]) == ["objects", "workload", "worldSize"]
    launcher = served["types"]["gpu-training:index:Launcher"]
    assert [v["value"] for v in launcher["enum"]] == ["pytorch", "mpi", "tensorflow", "indexed", "trainjob"]
    assert launcher["description"].startswith("pytorch (PyTorchJob)")


def test_platform_inputs_are_the_stack_config(served: dict[str, Any]) -> None:
    platform = served["resources"]["gpu-training:index:Platform"]
    assert set(platform["inputProperties"]) == set(StackConfig.config_keys())
    assert platform["requiredInputs"] == ["cluster"]
    cluster = served["types"]["gpu-training:index:ClusterSpec"]
    assert cluster["required"] == ["name", "provider"]
    assert {"region", "project", "kubeconfig", "context", "vpcId"} <= set(cluster["properties"])
    pools = platform["inputProperties"]["nodePools"]["items"]["$ref"]
    pool = served["types"][pools.removeprefix("#/types/")]
    assert pool["properties"]["fabric"]["$ref"] == "#/types/gpu-training:index:Fabric"
    assert {"kubeconfig", "pools", "scheduler", "defaultQueue", "runtimes"} <= set(platform["properties"])
    assert platform["properties"]["pools"]["additionalProperties"]["$ref"] == "pulumi.json#/Any"


def _walk(model: type[BaseModel], owner: str, inputs: dict[str, Any], required: list[str], types: dict[str, Any]):
    """Every field of `model` (and of the models under it) against the schema object `inputs`."""
    for name, info in model.model_fields.items():
        key = info.alias or name
        assert key in inputs, f"{owner}.{key} is missing from the schema"
        prop = inputs[key]
        own = {("ClusterSpec", "provider"), ("TrainingJob", "name")}  # described by the plugin itself
        if info.description and (owner, key) not in own:
            described = prop.get("description", "")
            assert info.description in described, f"{owner}.{key}: {described!r}"
        if owner == "ClusterSpec":  # one type for three variants: required where every variant requires it
            assert key not in required or info.is_required(), f"{owner}.{key} required"
        elif (owner, key) not in own:
            assert (key in required) == info.is_required(), f"{owner}.{key} required"
        for sub in _models(info.annotation):
            ref = prop.get("$ref") or (prop.get("items") or {}).get("$ref") or ""
            ref = ref or ((prop.get("additionalProperties") or {}).get("$ref") or "")
            if ref == "pulumi.json#/Any":  # a union of text and models (env values): free-form in the schema
                continue
            target = types[ref.removeprefix("#/types/")]
            _walk(sub, ref.rsplit(":", 1)[-1], target["properties"], target.get("required") or [], types)


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _models(a)]


def test_every_model_field_is_an_input_with_its_description(served: dict[str, Any]) -> None:
    """A field added to the models and not to the schema fails here (regenerate config_types.py)."""
    types = served["types"]
    platform = served["resources"]["gpu-training:index:Platform"]
    _walk(StackConfig, "StackConfig", platform["inputProperties"], platform["requiredInputs"], types)
    job = served["resources"]["gpu-training:index:TrainingJob"]
    _walk(TrainingJobSpec, "TrainingJob", job["inputProperties"], job["requiredInputs"], types)


def test_the_generated_modules_are_current() -> None:
    """config_types.py from the models, fronts.py from the components: a changed field or output fails here."""
    from gpu_training_plugin import generate

    assert generate.OUTPUT.read_text() == generate.generate(), (
        "provider/gpu_training_plugin/config_types.py is stale: run python provider/gpu_training_plugin/generate.py"
    )
    assert generate.FRONTS.read_text() == generate.generate_fronts(), (
        "provider/gpu_training_plugin/fronts.py is stale: run python provider/gpu_training_plugin/generate.py"
    )


def test_schema_keys_are_the_config_keys() -> None:
    """The analyzer camelCases the TypedDict keys; that gives back each config key (throughputPerTiB too)."""
    from pulumi.provider.experimental.util import camel_case

    from components.models import VolumeSpec

    for model in (VolumeSpec, TrainingJobSpec):
        for name, info in model.model_fields.items():
            alias = info.alias or name
            assert camel_case(snake(alias)) == alias
