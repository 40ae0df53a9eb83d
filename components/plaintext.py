"""Plain-text credentials in a stack's config, refused before render writes them into manifests or Pulumi into its
state: a token in a job's env, NCCL settings, command line or DeepSpeed config, a credential's shape in any other
field, and a plain-text value where the docs say a key is a secret (an existing cluster's kubeconfig).

Pure: the validated config in, issues out. A Pulumi secret (`secure:` in the stack file) is never judged.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from components import credentials
from components import kubeconfig as kubeconfigs
from components.credentials import Verdict, judge
from components.errors import Issue, join_path
from components.memo import per_object
from components.models import CONFIG_NAMESPACE, StackConfig, TrainingJobSpec
from components.models.job import nccl_env_name

SECRET_KEYS: dict[str, str] = {
    "cluster.kubeconfig": "a kubeconfig's contents (the client key or token it holds)",
    "fleet.workers[*].kubeconfig": "a kubeconfig's contents (the client key or token it holds)",
}
"""Config keys that are secrets (docs/configuration.md: `kubeconfig` (secret); a fleet worker's `kubeconfig`), and
what a plain value there gives away (`[*]`: any index). A path to a file is not the secret itself, and stays
allowed."""
_WORKER_INDEX = re.compile(r"(?<=^fleet\.workers)\[\d+\]")

NAMES_A_SECRET = frozenset({"secret", "secretRef", "imagePullSecrets"})
"""Config keys whose value names a Secret (a Secret volume's `secret`, envFrom's `secretRef`), never holds one:
read for a credential's format only, not judged by their name."""

SECRETS_SECTION = "docs/jobs.md#secrets-and-credentials"
"""Where the docs say how a job takes a secret."""


def _set_secret(path: str) -> str:
    return f"pulumi config set --secret --path '{CONFIG_NAMESPACE}:{path}' <value>"


def _env_fix(job: str, name: str) -> str:
    return (
        f"give it as a Pulumi secret, which becomes a Secret the stack owns ({_set_secret(f'{job}.env.{name}')}), "
        f"or reference a Secret that exists (env: {{{name}: {{secretKeyRef: {{name: <secret>, key: <key>}}}}}}); "
        f"see {SECRETS_SECTION}"
    )


def _env_name(label: str) -> str:
    """The environment variable a flag's credential would travel in: --hf-token -> HF_TOKEN."""
    name = "_".join(credentials.words(label))
    return name if name and not name[0].isdigit() and credentials.is_credential_name(label) else "<NAME>"


_REACH = "which render writes into the manifests and Pulumi into its state"
_NOT_SECRET = "this field is not secret (render writes it as it is): keep credentials out of it"
_READ_ABOVE = {"env", "nccl", "command", "deepspeed"}
"""A job's fields read for what they hold (names, flags, files); the others are read as plain fields."""
_STACK_FILE = "in the stack file, which is shared and committed"


def _job(job: TrainingJobSpec, base: str) -> Iterator[tuple[str, Verdict, str]]:
    """Each credential of a job's env, NCCL settings, command, DeepSpeed config and other fields (its image, its
    paths): its path, the verdict and the fix."""
    for name, value in job.env.items():
        if isinstance(value, str) and (verdict := judge(name, value)) is not None:
            yield f"{base}.env.{name}", verdict, _env_fix(base, name)
    for key, value in job.nccl.items():
        if isinstance(value, str) and (verdict := judge(nccl_env_name(key), value)) is not None:
            fix = f"NCCL settings are not secret: drop it here and {_env_fix(base, nccl_env_name(key))}"
            yield f"{base}.nccl.{key}", verdict, fix
    words = [str(w) for w in job.command]
    found = {index: (label, verdict) for index, label, verdict in credentials.in_words(words)}
    for index, word in enumerate(words):
        if index not in found and len(word.split()) > 1:  # a script (sh -c '...'): its own words
            found.update((index, (label, v)) for _, label, v in credentials.in_words(word.split()))
    for index, (label, verdict) in sorted(found.items()):
        name = _env_name(label)
        fix = f"pass it through the environment: write $({name}) here, and {_env_fix(base, name)}"
        yield f"{base}.command[{index}]", verdict, fix
    if job.deepspeed is not None:
        for path, key, value in _strings(job.deepspeed.config, f"{base}.deepspeed.config"):
            if (verdict := judge(key, value)) is not None:
                fix = (
                    "the DeepSpeed config is a ConfigMap, in plain text: leave the credential out, and give it to "
                    f"the program in its environment: {_env_fix(base, '<NAME>')}"
                )
                yield path, verdict, fix
    rest = job.model_dump(by_alias=True, exclude_defaults=True, exclude=_READ_ABOVE)
    for path, key, value in _strings(rest, base):
        if (verdict := judge(None if key in NAMES_A_SECRET else key, value)) is not None:
            yield path, verdict, _NOT_SECRET


def _strings(value: Any, path: str, key: str | None = None) -> Iterator[tuple[str, str | None, str]]:
    """Every string in a value, with its path and the key it is under."""
    if isinstance(value, str):
        yield path, key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(v, join_path(path, str(k)), str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]", key)


@per_object
def _findings(config: StackConfig) -> list[tuple[str, Verdict, str]]:
    """Each plain credential or placeholder in the config: path, verdict, fix. Read once per config: validation
    asks for the errors, render's summary for the warnings."""
    return list(_each(config))


def _each(config: StackConfig) -> Iterator[tuple[str, Verdict, str]]:
    for index, job in enumerate(config.jobs):
        yield from _job(job, f"jobs[{index}]")
    rest = config.model_dump(by_alias=True, exclude_defaults=True, exclude={"jobs"})
    for path, key, value in _strings(rest, ""):
        secret = SECRET_KEYS.get(_WORKER_INDEX.sub("[*]", path))
        if secret is not None:
            if kubeconfigs.is_contents(value):
                fix = (
                    f"set it as a secret, which the stack file keeps encrypted ({_set_secret(path)}, e.g. "
                    f'"$(cat kubeconfig.yaml)" as the value), or give the path of a kubeconfig file'
                )
                yield path, Verdict("error", f"{secret} in plain text {_STACK_FILE}"), fix
        elif (verdict := judge(key, value)) is not None:
            yield path, verdict, _NOT_SECRET


def issues(config: StackConfig, secure: Collection[str] = ()) -> list[Issue]:
    """Every credential the config holds in plain text, outside the `secure` paths (those the stack file gives as
    Pulumi secrets): an issue naming its path and the fix."""
    found: list[Issue] = []
    for path, verdict, fix in _findings(config):
        if verdict.level == "error" and not _secure(path, secure):
            problem = (
                verdict.what
                if _WORKER_INDEX.sub("[*]", path) in SECRET_KEYS
                else f"{verdict.what} in plain text, {_REACH}"
            )
            found.append(Issue(path, f"{problem}; {fix}"))
    return found


def warnings(config: StackConfig, secure: Collection[str] = ()) -> list[str]:
    """What is legal but suspicious: a placeholder where a credential's name says one goes."""
    return [
        f"{path}: {verdict.what}: the program gets no working credential; {fix}"
        for path, verdict, fix in _findings(config)
        if verdict.level == "warning" and not _secure(path, secure)
    ]


def _secure(path: str, secure: Collection[str]) -> bool:
    """Whether the path is, or is inside, one the stack file gives as a Pulumi secret."""
    return any(path == s or path.startswith((f"{s}.", f"{s}[")) for s in secure)
