"""literal-credentials: a credential written into a manifest is found in env values, command lines, ConfigMap data,
annotations and a Secret's values in a file; a token's shape blocks, a literal under a credential's name is advice,
and references (valueFrom, $(VAR)) and a preview's Secrets pass."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import rules
from components.cli.check import check
from components.rules.rule import Settings
from components.rules.subject import Subject
from components.rules.subjects import from_objects
from tests.rules.corpus import FAKE_TOKEN

PEM = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "train", "namespace": "training"},
    "spec": {
        "containers": [{"name": "t", "image": "registry.example.com/train:v1", "command": ["python", "train.py"]}]
    },
}


def findings(*objects: dict[str, Any], source: str | None = "x.yaml") -> list[tuple[str, str]]:
    subjects = from_objects(objects, source=source)
    return [(f.enforcement, f.message) for f in rules.by_id("literal-credentials").run(subjects, Settings())]


def pod(**container: Any) -> dict[str, Any]:
    obj = copy.deepcopy(POD)
    obj["spec"]["containers"][0].update(container)
    return obj


def test_a_token_in_env_blocks_and_a_literal_under_a_credentials_name_is_advice() -> None:
    env = [
        {"name": "HF_TOKEN", "value": FAKE_TOKEN},
        {"name": "WANDB_API_KEY", "value": "0123abcd4567efgh"},
        {"name": "TOKENIZERS_PARALLELISM", "value": "false"},
    ]
    assert findings(pod(env=env)) == [
        ("mandatory", "pod/t: env HF_TOKEN: a Hugging Face token in plain text"),
        (
            "advisory",
            "pod/t: env WANDB_API_KEY: a plain value for a credential's name (WANDB_API_KEY) is a literal; a "
            "credential there is readable by anyone who reads it",
        ),
    ]


def test_references_pass() -> None:
    env = [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        {"name": "WANDB_API_KEY", "value": "$(WANDB_KEY_FROM_FILE)"},
    ]
    assert findings(pod(env=env, args=["--hf-token", "$(HF_TOKEN)"])) == []


def test_a_token_on_the_command_line_or_in_a_script_blocks() -> None:
    assert findings(pod(args=[f"--hf-token={FAKE_TOKEN}"])) == [
        ("mandatory", "pod/t: command/args (--hf-token): a Hugging Face token in plain text")
    ]
    script = pod(command=["sh", "-c", f"export HF_TOKEN={FAKE_TOKEN} && python train.py"])
    assert [level for level, _ in findings(script)] == ["mandatory"]


def test_configmap_data_and_annotations() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "training"}}
    config["data"] = {"id_rsa": PEM, "ds_config.json": '{"train_batch_size": 8}', "HF_TOKEN": FAKE_TOKEN}
    annotated = copy.deepcopy(POD)
    annotated["metadata"]["annotations"] = {"example.com/api-token": FAKE_TOKEN, "example.com/owner": "ml-team"}
    assert findings(config, annotated) == [
        ("mandatory", "data id_rsa: a PEM private key in plain text"),
        ("mandatory", "data HF_TOKEN: a Hugging Face token in plain text"),
        ("mandatory", "annotation example.com/api-token: a Hugging Face token in plain text"),
    ]


def secret(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf", "namespace": "training"}, **fields}


def test_a_secrets_values_in_a_manifest_file_are_found_and_a_previews_are_the_providers() -> None:
    committed = secret(
        stringData={"token": FAKE_TOKEN, "empty": ""},
        data={"user": base64.b64encode(b"trainer").decode(), "key": base64.b64encode(PEM.encode()).decode()},
    )
    assert findings(committed) == [
        ("mandatory", "stringData token: a Hugging Face token, in a manifest file"),
        ("advisory", "data user: a Secret's value, in a manifest file"),
        ("mandatory", "data key: a PEM private key, in a manifest file"),
    ]
    urn = "urn:pulumi:dev::p::kubernetes:core/v1:Secret::hf"
    previewed = [Subject(s.key, s.kind, s.data, urn=urn) for s in from_objects([committed])]
    assert rules.by_id("literal-credentials").run(previewed, Settings()) == []


def test_check_on_a_folder_reports_the_rule_and_fails(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(pod(env=[{"name": "HF_TOKEN", "value": FAKE_TOKEN}])))
    out, _, code = check(None, [tmp_path], policy_config=None, production=None, gang_scheduler=None, output="json")
    assert code == 1
    found = [f for f in json.loads(out) if f["rule"] == "literal-credentials"]
    assert [(f["object"], f["enforcement"]) for f in found] == [("Pod/training/train", "mandatory")]
    assert FAKE_TOKEN[4:] not in out, "the report never repeats the token"


@pytest.mark.parametrize("placeholder", ["changeme", "<hf-token>", "hf_" + "x" * 34])
def test_a_placeholder_gives_nothing_away(placeholder: str) -> None:
    assert findings(pod(env=[{"name": "HF_TOKEN", "value": placeholder}])) == []
