"""A job's secure env values, which Pulumi's config hands the program in plaintext, sealed before anything reads
them: the program makes them the job's own Secret, held as a secret, and nothing else holds them."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

import stacks
from components.errors import ConfigError
from components.kubernetes.objects import StackConfigError
from components.models.envsource import Sealed
from components.render import render, write
from components.resolution import resolve_file
from components.sealing import misplaced, seal_jobs, secure_paths
from tests.support.pulumi_mocks import SECRET_SIG, RecordingMonitor, exported, run, use_stack

TOKEN = "hf_stackSecretValue0123456789abcdef"
STACK = {
    "gpu-training:cluster": {"provider": "existing", "name": "train"},
    "gpu-training:nodePools": [{"name": "h100", "gpusPerNode": 8}],
    "gpu-training:jobs": [
        {
            "name": "tune",
            "image": "registry.example.com/t:v1",
            "command": ["train.py"],
            "nodes": 2,
            "launcher": "indexed",
            "env": {"HF_TOKEN": {"secure": "v1:AAAAciphertext"}, "EPOCHS": "3"},
        }
    ],
}


def plaintext(config: dict[str, Any]) -> dict[str, Any]:
    """The config as Pulumi hands it to the program: secure leaves decrypted."""
    found = json.loads(json.dumps(config))
    found["gpu-training:jobs"][0]["env"]["HF_TOKEN"] = TOKEN
    return found


def test_secure_paths_finds_every_secure_leaf() -> None:
    doc = {"a": [{"b": {"secure": "x"}}, {"c": 1}], "d": {"secure": "y"}}
    assert secure_paths(doc) == [("a", 0, "b"), ("d",)]


def test_seal_jobs_wraps_only_the_env_values_the_stack_file_marks_secure() -> None:
    raw = {"jobs": [{"name": "a", "env": {"HF_TOKEN": TOKEN, "EPOCHS": "3"}}]}
    file_raw = {"jobs": [{"name": "a", "env": {"HF_TOKEN": {"secure": "v1:x"}, "EPOCHS": "3"}}]}
    sealed = seal_jobs(raw, file_raw, lambda v: ("wrapped", v), jobs_secret=True)
    value = sealed["jobs"][0]["env"]["HF_TOKEN"]
    assert isinstance(value, Sealed) and value.value == ("wrapped", TOKEN) and str(value) == "[secret]"
    assert sealed["jobs"][0]["env"]["EPOCHS"] == "3"
    assert raw["jobs"][0]["env"]["HF_TOKEN"] == TOKEN, "the input is left as it was"


def test_a_secure_value_outside_env_or_without_its_stack_file_is_refused() -> None:
    raw = {"jobs": [{"name": "a", "image": TOKEN}]}
    with pytest.raises(ConfigError, match=r"jobs\[0\]\.image: is a Pulumi secret, which a job takes only as an env"):
        seal_jobs(raw, {"jobs": [{"name": "a", "image": {"secure": "v1:x"}}]}, str, jobs_secret=True)
    with pytest.raises(ConfigError, match="the stack file that says which value is missing"):
        seal_jobs(raw, None, str, jobs_secret=True)
    assert seal_jobs(raw, None, str, jobs_secret=False) == raw
    assert misplaced([{"env": {"A": {"secure": "x"}}}]) == []


def test_the_program_keeps_a_secure_env_value_in_the_jobs_secret_only(
    pulumi_mocks: RecordingMonitor, monkeypatch, tmp_path: Path
) -> None:
    stack_file = tmp_path / "Pulumi.sealed.yaml"
    stack_file.write_text(yaml.safe_dump({"config": STACK}))
    monkeypatch.chdir(tmp_path)
    use_stack(pulumi_mocks, stack_file)
    pulumi.runtime.set_all_config(
        {k: json.dumps(v) for k, v in plaintext(STACK).items()}, secret_keys=["gpu-training:jobs"]
    )
    exports = exported(run(lambda: stacks.run(stacks.load())))

    secret = pulumi_mocks.named("training-tune-env-secret")
    assert SECRET_SIG in secret.inputs["data"]
    assert base64.b64decode(secret.inputs["data"]["value"]["HF_TOKEN"]).decode() == TOKEN
    others = [r.inputs for r in pulumi_mocks.registrations if r is not secret]
    assert TOKEN not in repr(others) and TOKEN not in repr(exports)
    job = pulumi_mocks.named("training-tune-job")
    env = {e["name"]: e for e in job.inputs["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "tune-env", "key": "HF_TOKEN"}


def test_the_program_refuses_secret_jobs_it_cannot_place(
    pulumi_mocks: RecordingMonitor, monkeypatch, tmp_path: Path
) -> None:
    stack_file = tmp_path / "Pulumi.sealed.yaml"
    stack_file.write_text(yaml.safe_dump({"config": STACK}))
    monkeypatch.chdir(tmp_path)
    use_stack(pulumi_mocks, stack_file)
    stack_file.unlink()  # run from elsewhere: nothing says which value is the secret
    pulumi.runtime.set_all_config(
        {k: json.dumps(v) for k, v in plaintext(STACK).items()}, secret_keys=["gpu-training:jobs"]
    )
    with pytest.raises(StackConfigError, match="holds a Pulumi secret"):
        stacks.load()


def test_render_names_the_secret_made_at_deploy_and_writes_no_value(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.sealed.yaml"
    stack_file.write_text(yaml.safe_dump({"config": STACK}))
    rendered = render(resolve_file(stack_file))
    write(rendered, tmp_path / "out")
    text = "\n".join(p.read_text() for p in (tmp_path / "out").rglob("*.yaml"))
    assert (
        "made at deploy time, each job's Pulumi secrets (not in these files): Secret training/tune-env (HF_TOKEN)"
        in (rendered.summary())
    )
    assert "kind: Secret" not in text and "[secret]" not in text and "AAAAciphertext" not in text
    assert "secretKeyRef:\n" in text and "name: tune-env" in text
