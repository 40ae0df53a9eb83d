"""Plain-text credentials in a stack file are refused by render and by the Pulumi program, naming the file, the
line, the key and the fix; Pulumi secrets (`secure:`) pass, whether read offline or decrypted by the engine."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stacks
from components.config import load_stack_file, read_stack_file
from components.errors import ConfigError
from components.kubernetes.objects import StackConfigError
from components.models.envsource import Sealed
from components.plaintext import issues, warnings
from components.render import render
from components.resolution import resolve_file
from components.sealing import secure_keys
from tests.support.pulumi_mocks import RecordingMonitor
from tests.test_credentials import ORDINARY_NAMES, TOKENS

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted([*REPO.glob("Pulumi.*.yaml"), *(REPO / "examples" / "minimal").glob("Pulumi.*.yaml")])
TOKEN = "hf_" + "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA2c"
KUBECONFIG = "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user: {token: abc}\n"

BASE: dict[str, Any] = {
    "gpu-training:cluster": {"provider": "existing", "name": "train"},
    "gpu-training:nodePools": [{"name": "h100", "gpusPerNode": 8}],
    "gpu-training:jobs": [
        {"name": "finetune", "image": "registry.example.com/training:v2.0", "command": ["train.py"], "nodes": 2}
    ],
}


def stack_file(tmp_path: Path, edit: Any = None, name: str = "x") -> Path:
    """A one-job existing-cluster stack file, as `edit(config)` changes it."""
    config = copy.deepcopy(BASE)
    if edit is not None:
        edit(config)
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def job(config: dict[str, Any]) -> dict[str, Any]:
    return config["gpu-training:jobs"][0]


def refused(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    return str(caught.value).splitlines()


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("stack", STACKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_shipped_stack_holds_a_credential_or_a_placeholder(stack: Path) -> None:
    config = load_stack_file(stack)
    assert issues(config) == [] and warnings(config) == []


def test_a_token_in_env_names_file_line_key_and_both_fixes(tmp_path: Path) -> None:
    path = stack_file(tmp_path, lambda c: job(c).update(env={"HF_TOKEN": TOKEN, "TOKENIZERS_PARALLELISM": "false"}))
    (message,) = refused(path)
    assert message.startswith(f"{path}:{line_of(path, 'HF_TOKEN')}: jobs[0].env.HF_TOKEN: a Hugging Face token")
    assert "pulumi config set --secret --path 'gpu-training:jobs[0].env.HF_TOKEN' <value>" in message
    assert "env: {HF_TOKEN: {secretKeyRef: {name: <secret>, key: <key>}}}" in message
    assert TOKEN[4:] not in message, "the error never repeats the credential"


def test_a_literal_under_a_credential_name_is_refused_a_placeholder_warned_a_path_passed(tmp_path: Path) -> None:
    env = {"WANDB_API_KEY": "0123abcd4567efgh", "GOOGLE_APPLICATION_CREDENTIALS": "/var/secrets/google/key.json"}
    (message,) = refused(stack_file(tmp_path, lambda c: job(c).update(env=env)))
    assert "jobs[0].env.WANDB_API_KEY: a plain value for a credential's name (WANDB_API_KEY)" in message

    env = {"WANDB_API_KEY": "changeme", "HF_TOKEN": "$(HF_TOKEN_FROM_FILE)"}
    rendered = render(resolve_file(stack_file(tmp_path, lambda c: job(c).update(env=env))))
    (warning,) = [w for w in rendered.warnings() if "WANDB" in w]
    assert warning.startswith("jobs[0].env.WANDB_API_KEY: a placeholder for a credential")


@pytest.mark.parametrize(
    ("command", "index"),
    [
        (["train.py", f"--hf-token={TOKEN}"], 1),
        (["train.py", "--hf-token", TOKEN], 2),
        (["sh", "-c", f"HF_TOKEN={TOKEN} python train.py"], 2),
        (["sh", "-c", "python train.py --api-key 0123abcd4567efgh"], 2),
    ],
)
def test_a_credential_on_the_command_line_is_refused_with_its_argument(
    tmp_path: Path, command: list[str], index: int
) -> None:
    path = stack_file(tmp_path, lambda c: job(c).update(command=command))
    (message,) = refused(path)
    assert f":{line_of(path, command[index][:10])}: jobs[0].command[{index}]: " in message
    assert "write $(" in message and "pulumi config set --secret --path 'gpu-training:jobs[0].env." in message


def test_nccl_settings_deepspeed_config_and_other_fields_are_read_too(tmp_path: Path) -> None:
    def edit(config: dict[str, Any]) -> None:
        job(config).update(
            nccl={"debug": "INFO", "ibHca": "AKIA" + "Q3EGRTYUIOPLKJHG"},
            deepspeed={"config": {"train_batch_size": 8, "comet": {"enabled": True, "api_key": "0123abcd4567efgh"}}},
        )
        config["gpu-training:nodePools"][0]["labels"] = {"team": "AIza" + "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"}

    found = refused(stack_file(tmp_path, edit))
    assert any("jobs[0].nccl.ibHca: an AWS access key id in plain text" in m for m in found)
    assert any("jobs[0].deepspeed.config.comet.api_key: a plain value" in m for m in found)
    assert any("nodePools[0].labels.team: a Google API key" in m and "not secret" in m for m in found)


def test_a_pulumi_secret_is_never_judged(tmp_path: Path) -> None:
    def edit(config: dict[str, Any]) -> None:
        job(config)["env"] = {"HF_TOKEN": {"secure": "v1:AAABAHNvbWVjaXBoZXJ0ZXh0"}}
        config["gpu-training:cluster"]["kubeconfig"] = {"secure": "v1:AAABAGt1YmVjb25maWc="}

    path = stack_file(tmp_path, edit)
    assert resolve_file(path).config.cluster.kubeconfig == "[secret]"
    assert secure_keys(read_stack_file(path)[0]) == {"cluster.kubeconfig", "jobs[0].env.HF_TOKEN"}


def test_a_plain_kubeconfig_is_refused_and_a_path_to_one_passes(tmp_path: Path) -> None:
    path = stack_file(tmp_path, lambda c: c["gpu-training:cluster"].update(kubeconfig=KUBECONFIG))
    (message,) = refused(path)
    assert message.startswith(f"{path}:{line_of(path, 'kubeconfig')}: cluster.kubeconfig: a kubeconfig's contents")
    assert "pulumi config set --secret --path 'gpu-training:cluster.kubeconfig'" in message
    resolve_file(stack_file(tmp_path, lambda c: c["gpu-training:cluster"].update(kubeconfig="~/.kube/lab.yaml")))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([*ORDINARY_NAMES, "HF_TOKEN"]), st.data())
def test_any_format_under_any_env_name_is_refused_at_its_path(tmp_path: Path, name: str, data: st.DataObject) -> None:
    token = data.draw(TOKENS[data.draw(st.sampled_from(sorted(TOKENS)))])
    found = refused(stack_file(tmp_path, lambda c: job(c).update(env={name: token})))
    assert any(f"jobs[0].env.{name}: " in m and "in plain text" in m for m in found)


def _program(monitor: RecordingMonitor, stack: Path, decrypted: dict[str, Any]) -> None:
    """Run as `pulumi up` of `stack` would, the engine handing the program `decrypted` config (secrets in clear)."""
    pulumi.runtime.set_mocks(monitor.recording, project="gpu-training", stack="x", preview=False, monitor=monitor)
    pulumi.runtime.set_all_config(
        {key: json.dumps(value) for key, value in decrypted.items()},
        secret_keys=[k for k, v in yaml.safe_load(stack.read_text())["config"].items() if "secure" in json.dumps(v)],
    )


def test_the_program_takes_secrets_the_engine_decrypted_and_refuses_plain_ones(
    pulumi_mocks: RecordingMonitor, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)

    def secured(config: dict[str, Any]) -> None:
        job(config)["env"] = {"HF_TOKEN": {"secure": "v1:AAABAHNvbWVjaXBoZXJ0ZXh0"}}
        config["gpu-training:cluster"]["kubeconfig"] = {"secure": "v1:AAABAGt1YmVjb25maWc="}

    decrypted = copy.deepcopy(BASE)
    job(decrypted)["env"] = {"HF_TOKEN": TOKEN}
    decrypted["gpu-training:cluster"]["kubeconfig"] = KUBECONFIG
    _program(pulumi_mocks, stack_file(tmp_path, secured), decrypted)
    (sealed,) = stacks.load().config.jobs[0].env.values()
    assert isinstance(sealed.secure, Sealed)  # taken, and sealed as a Pulumi secret (components/sealing.py)

    def plain(config: dict[str, Any]) -> None:
        job(config)["env"] = {"HF_TOKEN": TOKEN}
        config["gpu-training:cluster"]["kubeconfig"] = KUBECONFIG

    _program(pulumi_mocks, stack_file(tmp_path, plain), decrypted)
    with pytest.raises(StackConfigError) as caught:
        stacks.load()
    found = str(caught.value).splitlines()
    assert [m.split(": ")[1] for m in found] == ["jobs[0].env.HF_TOKEN", "cluster.kubeconfig"]
    assert all(m.startswith("Pulumi.x.yaml:") for m in found)


def _config_keys(model: Any, seen: set[Any]) -> set[str]:
    """Every key the config models define, at any depth."""
    import typing

    from pydantic import BaseModel

    keys: set[str] = set()
    for inner in typing.get_args(model):
        keys |= _config_keys(inner, seen)
    if isinstance(model, type) and issubclass(model, BaseModel) and model not in seen:
        seen.add(model)
        for name, field in model.model_fields.items():
            keys |= {field.alias or name, *_config_keys(field.annotation, seen)}
    return keys


def test_no_config_key_is_named_as_a_credential_unless_it_is_a_secret_key() -> None:
    from components.credentials import is_credential_name
    from components.models import StackConfig
    from components.plaintext import NAMES_A_SECRET, SECRET_KEYS

    keys = _config_keys(StackConfig, set())
    assert len(keys) > 100
    # A new key such as `apiToken` would have every plain value refused by its name: declare it in SECRET_KEYS.
    assert {k for k in keys if is_credential_name(k)} <= {p.rsplit(".", 1)[-1] for p in SECRET_KEYS} | NAMES_A_SECRET


def test_a_secret_volume_names_its_secret_in_plain_text(tmp_path: Path) -> None:
    def edit(config: dict[str, Any]) -> None:
        job(config)["files"] = [{"secret": "hf-token", "mountPath": "/etc/hf"}]
        job(config)["envFrom"] = [{"secretRef": "wandb"}]
        job(config)["imagePullSecrets"] = ["regcred"]

    resolve_file(stack_file(tmp_path, edit))


def test_a_jobs_other_fields_are_read_for_a_format(tmp_path: Path) -> None:
    def edit(config: dict[str, Any]) -> None:
        job(config)["image"] = "registry.example.com/training:v2.0"
        job(config)["scratch"] = {"size": "100Gi", "mountPath": "/scratch/" + TOKEN}

    message = refused(stack_file(tmp_path, edit))[0]  # the leak first
    assert "jobs[0].scratch.mountPath: a Hugging Face token in plain text" in message and "not secret" in message
