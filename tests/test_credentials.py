"""What looks like a credential: every vendor format found wherever it sits in a value, credential names in any
spelling, and no alarm on the names and values a training job ordinarily sets."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.credentials import SHAPES, harmless, in_words, is_credential_name, judge, masked, placeholder, shape
from components.fabric import profile
from components.models.job import nccl_env_name

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


def _body(alphabet: str, least: int, most: int) -> st.SearchStrategy[str]:
    """A random token body: no placeholder (not one repeated character, no `example`), and with every class of
    character (lower, upper, digit) its alphabet has, as random text of its length does."""
    classes = [c for c in (string.ascii_lowercase, string.ascii_uppercase, string.digits) if set(c) & set(alphabet)]
    return st.text(alphabet, min_size=least, max_size=most).filter(
        lambda s: len(set(s)) > 3 and "example" not in s.lower() and all(set(c) & set(s) for c in classes)
    )


TOKENS: dict[str, st.SearchStrategy[str]] = {
    "an AWS access key id": st.tuples(
        st.sampled_from(["AKIA", "ASIA"]), _body(string.ascii_uppercase + string.digits, 16, 16)
    ).map("".join),
    "a Hugging Face token": _body(ALNUM, 34, 34).map(lambda s: "hf_" + s),
    "a GitHub token": st.one_of(
        st.tuples(st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), _body(ALNUM, 36, 60)).map("".join),
        st.tuples(_body(ALNUM, 22, 22), _body(ALNUM, 59, 59)).map(lambda p: f"github_pat_{p[0]}_{p[1]}"),
    ),
    "a GitLab personal access token": _body(ALNUM, 20, 40).map(lambda s: "glpat-" + s),
    "a Slack token": st.tuples(st.sampled_from("abprs"), _body(ALNUM, 10, 50)).map(lambda p: f"xox{p[0]}-{p[1]}"),
    "an OpenAI or Anthropic API key": st.tuples(
        st.sampled_from(["sk-", "sk-proj-", "sk-ant-api03-"]), _body(ALNUM, 40, 95)
    ).map("".join),
    "a Google API key": _body(B64URL, 35, 35).map(lambda s: "AIza" + s),
    "a PEM private key": st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]).map(
        lambda k: f"-----BEGIN {k}PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END {k}PRIVATE KEY-----"
    ),
    "a Google Cloud service account key (JSON)": st.just(
        '{"type": "service_account", "project_id": "p", "private_key_id": "1", "private_key": "..."}'
    ),
    "a JSON Web Token": st.tuples(_body(B64URL, 10, 40), _body(B64URL, 10, 200), _body(B64URL, 10, 90)).map(
        lambda p: f"eyJ{p[0]}.eyJ{p[1]}.{p[2]}"
    ),
    "a URL with a password": _body(ALNUM, 6, 20).map(lambda s: f"postgres://trainer:{s}@db.internal:5432/runs"),
}
"""Per format, tokens of that format (built here, from parts: no token sits in the repository)."""

CREDENTIAL_NAMES = [
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "WANDB_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_PAT",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "NGC_API_KEY",
    "COMET_API_KEY",
    "NEPTUNE_API_TOKEN",
    "MLFLOW_TRACKING_PASSWORD",
    "MLFLOW_TRACKING_TOKEN",
    "AZURE_CLIENT_SECRET",
    "AZURE_STORAGE_KEY",
    "KAGGLE_KEY",
    "DOCKER_PASSWORD",
    "DB_PASSWD",
    "SSH_PASSPHRASE",
    "JWT_SECRET",
    "SECRET_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GCP_PRIVATE_KEY",
    "MY_APIKEY",
    "ACCESS_TOKEN",
    "TOKEN",
]
ORDINARY_NAMES = [
    "TOKENIZERS_PARALLELISM",
    "MAX_TOKENS",
    "MAX_NEW_TOKENS",
    "NUM_TOKENS",
    "TOKENS_PER_BATCH",
    "MAX_TOKEN_LENGTH",
    "TOKEN_BUDGET",
    "PAD_TOKEN",
    "EOS_TOKEN",
    "BOS_TOKEN",
    "HF_TOKEN_PATH",
    "HF_TOKEN_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "SECRET_NAME",
    "HF_SECRET_NAME",
    "SECRETS_DIR",
    "PASSWORD_FILE",
    "HF_HOME",
    "HF_HUB_ENABLE_HF_TRANSFER",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_CACHE",
    "WANDB_PROJECT",
    "WANDB_MODE",
    "OMP_NUM_THREADS",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "TORCH_DISTRIBUTED_DEBUG",
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "CHECKPOINT_DIR",
    "FI_PROVIDER",
    "FI_EFA_USE_DEVICE_RDMA",
    "PWD",
    "KEY",
    "CACHE_KEY",
    "NCCL_IB_PKEY",
    "secretKeyRef",
    "secretName",
]
NCCL_SETTINGS = [
    "debug",
    "debugSubsys",
    "ibHca",
    "ibGidIndex",
    "ibTimeout",
    "ibRetryCnt",
    "socketIfname",
    "netGdrLevel",
    "crossNic",
    "algo",
    "proto",
    "buffsize",
    "nvlsEnable",
    "NCCL_P2P_LEVEL",
    "NCCL_TUNER_PLUGIN",
]


def _spellings(name: str) -> list[str]:
    """A name as an env variable, a flag, lower case and camelCase."""
    lower = name.lower()
    camel = lower.split("_")[0] + "".join(w.title() for w in lower.split("_")[1:])
    return [name, lower, f"--{lower.replace('_', '-')}", f"--{lower}", camel]


@pytest.mark.parametrize(
    "value", ["/models/sk-learn-baseline-2024-09-01-checkpoint-final", "hf_llama3finetunedcheckpointversiontwo"]
)
def test_a_name_someone_wrote_is_no_token(value: str) -> None:
    assert shape(value) is None


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_credential_names_in_every_spelling(name: str) -> None:
    assert all(is_credential_name(n) for n in _spellings(name))


@pytest.mark.parametrize("name", ORDINARY_NAMES + [nccl_env_name(s) for s in NCCL_SETTINGS])
def test_ordinary_names_are_no_credentials(name: str) -> None:
    assert not any(is_credential_name(n) for n in _spellings(name))


@pytest.mark.parametrize("fabric", ["efa", "infiniband", "roce", "tcpx", "tcpxo", "rdma", "tcp"])
def test_no_setting_a_fabric_writes_looks_like_a_credential(fabric: str) -> None:
    from tests.support.factories import pool

    for name, value in profile(pool(fabric), "training").env.items():
        assert judge(name, value) is None, (name, value)


@given(st.data())
def test_every_format_is_found_alone_and_inside_text(data: st.DataObject) -> None:
    what = data.draw(st.sampled_from(sorted(TOKENS)))
    token = data.draw(TOKENS[what])
    found = shape(token)
    assert found is not None and found.what == what
    for text in (f"--token={token}", f"Authorization: Bearer {token}", f"export X='{token}'"):
        verdict = judge(None, text)
        assert verdict is not None and verdict.level == "error", text


@given(st.sampled_from(ORDINARY_NAMES), st.text(max_size=80))
def test_an_ordinary_name_never_raises_an_alarm_of_its_own(name: str, value: str) -> None:
    verdict = judge(name, value)
    assert (verdict is None) == (shape(value) is None)


@given(st.sampled_from(ORDINARY_NAMES), st.data())
def test_a_format_is_a_credential_under_any_name(name: str, data: st.DataObject) -> None:
    token = data.draw(TOKENS[data.draw(st.sampled_from(sorted(TOKENS)))])
    verdict = judge(name, token)
    assert verdict is not None and verdict.level == "error"


@given(st.sampled_from(CREDENTIAL_NAMES), st.text(ALNUM + "-_.+/=", min_size=8, max_size=60))
def test_a_literal_under_a_credential_name_is_refused_unless_it_is_a_placeholder(name: str, value: str) -> None:
    verdict = judge(name, value)
    if shape(value) is None and harmless(value):
        assert verdict is None
    elif shape(value) is None:
        assert verdict is not None and verdict.level == ("warning" if placeholder(value) else "error")
    else:
        assert verdict is not None


@pytest.mark.parametrize(
    "value", ["", "  ", "$(HF_TOKEN)", "${HF_TOKEN}", "$HF_TOKEN", "{{ .Values.token }}", "/var/run/secrets/hf/token"]
)
def test_no_credential_in_a_reference_a_path_or_nothing(value: str) -> None:
    assert judge("HF_TOKEN", value) is None


@pytest.mark.parametrize(
    "value",
    ["changeme", "CHANGE_ME", "<your-token>", "xxxxxxxx", "********", "your-api-key", "hf_" + "x" * 34, "TODO"],
)
def test_a_placeholder_under_a_credential_name_is_a_warning(value: str) -> None:
    verdict = judge("HF_TOKEN", value)
    assert verdict is not None and verdict.level == "warning"
    assert judge("LOG_LEVEL", value) is None


def test_aws_documented_example_keys_are_placeholders_and_a_secret_key_is_named() -> None:
    example = "AKIA" + "IOSFODNN7" + "EXAMPLE"
    assert judge(None, example) is None
    assert judge("AWS_ACCESS_KEY_ID", example).level == "warning"  # type: ignore[union-attr]
    secret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq1w2e3r4t"
    assert judge("AWS_SECRET_ACCESS_KEY", secret).what == "an AWS secret access key"  # type: ignore[union-attr]
    assert judge(None, "0123456789abcdef" * 2 + "01234567") is None, "a commit is not a key"


def test_a_command_line_credential_is_found_with_its_flag() -> None:
    token = "hf_" + "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA2c"
    line = ["train.py", f"--hf-token={token}", "--api-key", "s3cr3t-v4lue-123", "--max-tokens", "4096", "X=1"]
    line += ["HF_TOKEN=abc123XYZ789", "--token", "$(HF_TOKEN)", "--pad-token", "<pad>", token]
    found = [(index, label, verdict.level) for index, label, verdict in in_words(line)]
    assert found == [
        (1, "--hf-token", "error"),
        (3, "--api-key", "error"),
        (7, "HF_TOKEN", "error"),
        (12, "'hf_a…' (37 characters)", "error"),
    ]


@given(st.data())
def test_a_masked_credential_gives_away_its_first_four_characters_only(data: st.DataObject) -> None:
    token = data.draw(TOKENS[data.draw(st.sampled_from(sorted(TOKENS)))])
    shown = masked(token)
    assert shown.startswith(f"'{token[:4]}…'") and token[4:12] not in shown


def test_each_format_states_its_source() -> None:
    assert all(s.source.startswith("https://") for s in SHAPES)
