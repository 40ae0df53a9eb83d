"""Tests for the DeepSpeed ConfigMap and how jobs mount and pass it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.manifests import deepspeed
from components.manifests.plan import plan
from components.manifests.trainingjob import objects, workload
from tests.support.factories import job, planned, pool
from tests.support.schemas import assert_valid

DS_CONFIG = {
    "train_batch_size": 64,
    "gradient_accumulation_steps": 8,
    "bf16": {"enabled": True},
    "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},
}


def pod_specs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Every GPU worker pod spec of a workload."""
    if obj["kind"] == "Job":
        return [obj["spec"]["template"]["spec"]]
    replicas = obj["spec"].get("pytorchReplicaSpecs") or obj["spec"].get("tfReplicaSpecs") or {}
    if obj["kind"] == "MPIJob":
        replicas = {"Worker": obj["spec"]["mpiReplicaSpecs"]["Worker"]}
    return [r["template"]["spec"] for r in replicas.values()]


def program_of(obj: dict[str, Any]) -> list[str]:
    """The argument list that ends with the training program."""
    if obj["kind"] == "MPIJob":
        return obj["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"]
    body = pod_specs(obj)[0]["containers"][0]
    return body.get("args") or body["command"]


def test_no_config_no_configmap() -> None:
    assert deepspeed.configmap(planned()) is None
    assert [o["kind"] for o in objects(planned())] == ["PyTorchJob"]


def test_configmap_holds_the_config_as_json() -> None:
    cm = deepspeed.configmap(planned(name="llama", namespace="research", deepspeed={"config": DS_CONFIG}))
    assert cm is not None
    assert (cm["apiVersion"], cm["kind"]) == ("v1", "ConfigMap")
    assert cm["metadata"]["namespace"] == "research"
    assert list(cm["data"]) == ["ds_config.json"]
    assert json.loads(cm["data"]["ds_config.json"]) == DS_CONFIG
    assert_valid(cm)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=40, deadline=None)
@given(config=st.dictionaries(st.text(min_size=1, max_size=12), json_values, max_size=5))
def test_any_config_round_trips(config: dict[str, Any]) -> None:
    cm = deepspeed.configmap(planned(deepspeed={"config": config}))
    assert cm is not None
    assert json.loads(cm["data"]["ds_config.json"]) == config


@pytest.mark.parametrize("launcher", ["pytorch", "mpi", "tensorflow", "indexed"])
def test_workers_mount_the_configmap_read_only(launcher: str) -> None:
    p = planned(launcher=launcher, deepspeed={"config": DS_CONFIG})
    objs = objects(p)
    cm = objs[0]
    assert cm["kind"] == "ConfigMap"
    for spec in pod_specs(workload(objs)):
        volumes = {v["name"]: v for v in spec["volumes"]}
        mounts = [m for m in spec["containers"][0]["volumeMounts"] if m["mountPath"] == "/etc/deepspeed"]
        assert len(mounts) == 1
        assert mounts[0]["readOnly"] is True
        assert volumes[mounts[0]["name"]]["configMap"]["name"] == cm["metadata"]["name"]


@pytest.mark.parametrize("launcher", ["pytorch", "mpi", "tensorflow", "indexed"])
def test_program_gets_the_deepspeed_config_flag_last(launcher: str) -> None:
    obj = workload(objects(planned(launcher=launcher, deepspeed={"config": DS_CONFIG})))
    assert program_of(obj)[-3:] == ["train.py", "--epochs=1", "--deepspeed_config=/etc/deepspeed/ds_config.json"]


@pytest.mark.parametrize("mount_path", ["/opt/ds", "/opt/ds/"])
def test_flag_follows_a_custom_mount_path(mount_path: str) -> None:
    p = planned(deepspeed={"config": DS_CONFIG, "mountPath": mount_path})
    obj = workload(objects(p))
    assert program_of(obj)[-1] == "--deepspeed_config=/opt/ds/ds_config.json"
    mounts = {m["mountPath"] for m in pod_specs(obj)[0]["containers"][0]["volumeMounts"]}
    assert mount_path in mounts


def test_configmap_is_named_after_the_job_and_labelled_with_it() -> None:
    cm = deepspeed.configmap(planned(name="llama", deepspeed={"config": DS_CONFIG}))
    assert cm is not None
    assert cm["metadata"]["name"] == "llama-deepspeed"
    assert cm["metadata"]["labels"]["app.kubernetes.io/instance"] == "llama"


def test_configmap_and_workload_validate() -> None:
    p = plan(job(nodes=2, deepspeed={"config": DS_CONFIG}), pool("roce"), "volcano", "research")
    assert_valid(*objects(p))
