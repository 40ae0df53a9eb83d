"""A job's env from Secrets, ConfigMaps and Pulumi secrets; envFrom, pull secrets, Secret and ConfigMap volumes:
what the model takes, and the error (path and fix) for what it does not."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.config import parse_job, parse_stack
from components.errors import ConfigError
from components.models.envsource import SECRET_TEXT, ConfigMapKeyEnv, Sealed, SecretEnv, SecretKeyEnv
from tests.support.factories import job

HF = {"secretKeyRef": {"name": "hf-token", "key": "token"}}


def issues(**fields: Any) -> dict[str, str]:
    """The issues of a job with these fields, by path."""
    data = {"name": "train", "image": "registry.example.com/t:v1", "command": ["train.py"], **fields}
    with pytest.raises(ConfigError) as caught:
        parse_job(data, path="jobs[0]")
    return {i.path: i.message for i in caught.value.issues}


def test_env_values_are_text_keys_of_secrets_and_configmaps_or_pulumi_secrets() -> None:
    spec = job(
        env={
            "EPOCHS": 3,
            "HF_TOKEN": HF,
            "CONFIG": {"configMapKeyRef": {"name": "train-config", "key": "run.yaml", "optional": True}},
            "WANDB_API_KEY": {"secure": "v1:AAAAciphertext"},
            "S3_KEY": Sealed("plaintext-from-a-program"),
        }
    )
    assert spec.env["EPOCHS"] == "3"
    assert isinstance(spec.env["HF_TOKEN"], SecretKeyEnv) and spec.env["HF_TOKEN"].value_from() == {
        "secretKeyRef": {"name": "hf-token", "key": "token"}
    }
    assert isinstance(spec.env["CONFIG"], ConfigMapKeyEnv)
    assert spec.env["CONFIG"].value_from()["configMapKeyRef"]["optional"] is True
    assert set(spec.secret_env) == {"WANDB_API_KEY", "S3_KEY"}
    assert spec.secret_env["WANDB_API_KEY"].value is None  # offline: the ciphertext is all there is
    assert spec.secret_env["S3_KEY"].value == "plaintext-from-a-program"


def test_a_pulumi_secret_never_prints_its_value() -> None:
    sealed = Sealed("hf_abcdefghijklmnopqrstuvwxyz0123")
    spec = job(env={"HF_TOKEN": sealed})
    for text in (str(sealed), repr(sealed), repr(spec), json.dumps(spec.to_config()), f"{sealed}"):
        assert "hf_abc" not in text
    assert spec.to_config()["env"]["HF_TOKEN"] == {"secure": SECRET_TEXT}
    assert pickle.loads(pickle.dumps(sealed)).value is None, "a pickle never carries the value"
    assert copy.deepcopy(spec).secret_env["HF_TOKEN"].value == sealed.value, "a copy in memory keeps it"


def test_a_spec_dumped_in_python_keeps_its_secrets_for_the_component_to_read_again() -> None:
    spec = job(env={"HF_TOKEN": Sealed("x")})
    again = parse_job(spec.model_dump(by_alias=True))
    assert again.secret_env["HF_TOKEN"].value == "x"


@pytest.mark.parametrize(
    ("value", "path", "says"),
    [
        ({"secretKeyRef": {"name": "HF_Token", "key": "t"}}, "env.X.secretKeyRef.name", "DNS-1123 subdomain"),
        ({"secretKeyRef": {"name": "hf", "key": "a/b"}}, "env.X.secretKeyRef.key", "not a Secret or ConfigMap key"),
        ({"secretKeyRef": {"name": "hf"}}, "env.X.secretKeyRef.key", "is required"),
        ({"configMapKeyRef": {"name": "c", "key": "k", "mode": 1}}, "env.X.configMapKeyRef.mode", "unknown key"),
        ({"valueFrom": {"secretKeyRef": {}}}, "env.X", "an env value is text, {secretKeyRef"),
        ({"secretKeyRef": HF["secretKeyRef"], "secure": "x"}, "env.X", "an env value is text"),
        (["a"], "env.X", "or a Pulumi secret (pulumi config set --secret --path"),
        ({"secure": 3}, "env.X.secure", "Pulumi secret's ciphertext"),
    ],
)
def test_a_bad_env_reference_names_its_path_and_the_fix(value: Any, path: str, says: str) -> None:
    found = issues(env={"X": value})
    assert f"jobs[0].{path}" in found, found
    assert says in found[f"jobs[0].{path}"]


def test_env_from_names_one_secret_or_configmap_with_an_optional_prefix() -> None:
    spec = job(envFrom=[{"secretRef": "s3-credentials"}, {"configMapRef": "defaults", "prefix": "CFG_"}])
    assert [e.to_kubernetes() for e in spec.env_from] == [
        {"secretRef": {"name": "s3-credentials"}},
        {"configMapRef": {"name": "defaults"}, "prefix": "CFG_"},
    ]
    assert "name one source" in issues(envFrom=[{"secretRef": "a", "configMapRef": "b"}])["jobs[0].envFrom[0]"]
    assert "name one source" in issues(envFrom=[{"prefix": "A_"}])["jobs[0].envFrom[0]"]
    assert "prefix '1A'" in issues(envFrom=[{"secretRef": "a", "prefix": "1A"}])["jobs[0].envFrom[0]"]
    assert "DNS-1123" in issues(envFrom=[{"secretRef": "Bad"}])["jobs[0].envFrom[0].secretRef"]


@pytest.mark.parametrize("launcher", ["mpi", "trainjob"])
def test_env_from_is_refused_where_the_pods_could_not_have_it(launcher: str) -> None:
    found = issues(launcher=launcher, nodes=2, envFrom=[{"secretRef": "creds"}])
    assert "list each" in found["jobs[0].envFrom"] and "secretKeyRef" in found["jobs[0].envFrom"]


def test_image_pull_secrets_are_secret_names() -> None:
    assert job(imagePullSecrets=["regcred"]).image_pull_secrets == ["regcred"]
    assert "DNS-1123" in issues(imagePullSecrets=["Reg_Cred"])["jobs[0].imagePullSecrets[0]"]


def test_volumes_mount_claims_and_files_mount_secrets_and_configmaps() -> None:
    spec = job(
        volumes=[{"claim": "data", "mountPath": "/data"}],
        files=[
            {"secret": "gcs-key", "mountPath": "/var/secrets/google"},
            {"configMap": "accelerate", "mountPath": "/etc/accelerate"},
        ],
    )
    assert [m.claim for m in spec.mounts] == ["data"]
    assert [(m.secret, m.config_map) for m in spec.file_mounts] == [("gcs-key", None), (None, "accelerate")]


@pytest.mark.parametrize(
    ("mount", "says"),
    [
        ({"mountPath": "/x"}, "name what to mount"),
        ({"configMap": "a", "secret": "b", "mountPath": "/x"}, "(got secret and configMap)"),
        ({"secret": "Bad_Name", "mountPath": "/x"}, "DNS-1123"),
    ],
)
def test_a_file_mount_names_exactly_one_thing_to_mount(mount: dict[str, str], says: str) -> None:
    found = issues(files=[mount])
    assert any(says in message for path, message in found.items() if path.startswith("jobs[0].files[0]")), found


def test_a_claim_mounted_where_a_secret_is_is_refused() -> None:
    found = issues(volumes=[{"claim": "a", "mountPath": "/x"}], files=[{"secret": "s", "mountPath": "/x"}])
    assert "two volumes are mounted at /x" in found["jobs[0].volumes"]


def test_a_secure_value_anywhere_in_a_job_but_env_is_refused() -> None:
    raw = {
        "cluster": {"provider": "existing", "name": "x"},
        "nodePools": [{"name": "gpu", "gpusPerNode": 8}],
        "jobs": [{"name": "a", "image": {"secure": "v1:abc"}, "command": ["train.py"]}],
    }
    with pytest.raises(ConfigError) as caught:
        parse_stack(raw)
    assert [(i.path, "only as an env value" in i.message) for i in caught.value.issues] == [("jobs[0].image", True)]


@given(st.text(min_size=1, max_size=40))
def test_whatever_a_secret_holds_it_reads_as_the_placeholder(plaintext: str) -> None:
    sealed = SecretEnv.model_validate(Sealed(plaintext))
    assert sealed.value == plaintext
    assert str(sealed.secure) == SECRET_TEXT and sealed.model_dump(mode="json") == {"secure": SECRET_TEXT}
