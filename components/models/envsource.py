"""Where a job's environment, pull credentials and mounted files come from: Secrets, ConfigMaps, Pulumi secrets."""

from __future__ import annotations

import re
from typing import Annotated, Any, Union

from pydantic import Discriminator, Field, PlainSerializer, PlainValidator, Tag, model_validator

from components.models.base import EnvValue, ObjectName, Spec

SECRET_TEXT = "[secret]"
"""What a Pulumi secret reads as wherever it is printed: render's files, summaries, errors."""
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_ENV_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
SECRET_WAYS = (
    "give it as a Pulumi secret (pulumi config set --secret --path 'gpu-training:jobs[N].env.NAME'), "
    "or name a key of an existing Secret ({secretKeyRef: {name, key}})"
)
"""The two ways a credential reaches a job, which every error about one points to."""


class Sealed(str):
    """A Pulumi secret: reads as "[secret]" everywhere; `value` holds what the program was given (plaintext about
    to be wrapped, or a secret Output), None offline, where only the stack's ciphertext is known."""

    value: Any

    def __new__(cls, value: Any = None) -> Sealed:
        """A secret holding `value` (None when unknown)."""
        sealed = super().__new__(cls, SECRET_TEXT)
        sealed.value = value
        return sealed

    def __repr__(self) -> str:
        return f"Sealed({SECRET_TEXT})"

    def __copy__(self) -> Sealed:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Sealed:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Sealed, ())  # a pickle never carries the value


def _sealed(value: Any) -> Sealed:
    """A Sealed as it is, or the ciphertext of a stack file (unreadable offline) as an unknown secret."""
    if isinstance(value, Sealed):
        return value
    if isinstance(value, str) and value:
        return Sealed()
    raise ValueError(f"is a Pulumi secret's ciphertext, which `pulumi config set --secret` writes; {SECRET_WAYS}")


SealedText = Annotated[
    Sealed, PlainValidator(_sealed), PlainSerializer(lambda _: SECRET_TEXT, when_used="json", return_type=str)
]
"""A Pulumi secret as a model field: never serialized as its value."""


def _config_key(value: str) -> str:
    if len(value) > 253 or not _CONFIG_KEY.match(value):
        raise ValueError(f"'{value}' is not a Secret or ConfigMap key: use letters, digits, '-', '_' and '.'")
    return value


ConfigKey = Annotated[str, PlainValidator(lambda v: _config_key(v) if isinstance(v, str) else _not_text(v))]
"""A key of a Secret's or ConfigMap's data."""


def _not_text(value: Any) -> str:
    raise ValueError(f"must be a key of the object's data, as text (got {value!r})")


class KeyRef(Spec):
    """One key of a Secret or ConfigMap in the job's namespace."""

    name: ObjectName
    """The Secret or ConfigMap. Required."""
    key: ConfigKey
    """The key in its data. Required."""
    optional: bool | None = None
    """Start the pods without it when the object or key is missing. Default: false (the pods wait for it)."""

    def to_kubernetes(self) -> dict[str, Any]:
        """As a core/v1 SecretKeySelector / ConfigMapKeySelector."""
        ref: dict[str, Any] = {"name": self.name, "key": self.key}
        if self.optional is not None:
            ref["optional"] = self.optional
        return ref


class SecretKeyEnv(Spec):
    """An env value read from a key of an existing Secret."""

    secret_key_ref: KeyRef
    """The Secret and key. Required."""

    def value_from(self) -> dict[str, Any]:
        """The EnvVar's valueFrom."""
        return {"secretKeyRef": self.secret_key_ref.to_kubernetes()}


class ConfigMapKeyEnv(Spec):
    """An env value read from a key of an existing ConfigMap."""

    config_map_key_ref: KeyRef
    """The ConfigMap and key. Required."""

    def value_from(self) -> dict[str, Any]:
        """The EnvVar's valueFrom."""
        return {"configMapKeyRef": self.config_map_key_ref.to_kubernetes()}


class SecretEnv(Spec):
    """An env value given as a Pulumi secret: the stack keeps it in a Secret of its own, which the pods read."""

    secure: SealedText
    """The secret (`pulumi config set --secret --path`; in a program, a secret Output). Required."""

    @model_validator(mode="before")
    @classmethod
    def _wrapped(cls, data: Any) -> Any:
        return {"secure": data} if isinstance(data, Sealed) else data

    @property
    def value(self) -> Any:
        """What the program holds (plaintext or a secret Output); None offline."""
        return self.secure.value


EnvSource = SecretKeyEnv | ConfigMapKeyEnv | SecretEnv
"""An env value that is not written in the stack as text."""
_SOURCE_KEYS = {"secretKeyRef": "secretKeyRef", "configMapKeyRef": "configMapKeyRef", "secure": "secure"}


def _env_kind(value: Any) -> str | None:
    if isinstance(value, Sealed | SecretEnv):
        return "secure"
    if isinstance(value, SecretKeyEnv | ConfigMapKeyEnv):
        return "secretKeyRef" if isinstance(value, SecretKeyEnv) else "configMapKeyRef"
    if isinstance(value, dict):
        keys = [k for k in value if k in _SOURCE_KEYS]
        return keys[0] if len(keys) == 1 and len(value) == 1 else None
    if isinstance(value, str | int | float | bool):
        return "value"
    return None


EnvEntry = Annotated[
    Union[  # noqa: UP007  (Tag needs the members as written)
        Annotated[EnvValue, Tag("value")],
        Annotated[SecretKeyEnv, Tag("secretKeyRef")],
        Annotated[ConfigMapKeyEnv, Tag("configMapKeyRef")],
        Annotated[SecretEnv, Tag("secure")],
    ],
    Discriminator(
        _env_kind,
        custom_error_type="env_value",
        custom_error_message=(
            "an env value is text, {secretKeyRef: {name, key}}, {configMapKeyRef: {name, key}} or a Pulumi secret "
            "(pulumi config set --secret --path 'gpu-training:jobs[N].env.NAME')"
        ),
    ),
]
"""One env value: text, a key of a Secret or ConfigMap, or a Pulumi secret."""


class EnvFromSpec(Spec):
    """Every key of a Secret or ConfigMap as environment variables."""

    secret_ref: ObjectName | None = None
    """The Secret. Required unless configMapRef is set."""
    config_map_ref: ObjectName | None = None
    """The ConfigMap. Required unless secretRef is set."""
    prefix: str | None = Field(default=None, min_length=1)
    """Put before each key's name, e.g. HF_. Default: none."""
    optional: bool | None = None
    """Start the pods without it when it is missing. Default: false."""

    @model_validator(mode="after")
    def _one(self) -> EnvFromSpec:
        if (self.secret_ref is None) == (self.config_map_ref is None):
            raise ValueError("name one source: {secretRef: NAME} or {configMapRef: NAME}")
        if self.prefix is not None and not _ENV_PREFIX.match(self.prefix):
            raise ValueError(f"prefix '{self.prefix}' does not start a valid environment variable name (e.g. HF_)")
        return self

    def to_kubernetes(self) -> dict[str, Any]:
        """As a core/v1 EnvFromSource."""
        kind, name = ("secretRef", self.secret_ref) if self.secret_ref else ("configMapRef", self.config_map_ref)
        ref: dict[str, Any] = {"name": name}
        if self.optional is not None:
            ref["optional"] = self.optional
        out: dict[str, Any] = {kind: ref}
        if self.prefix:
            out["prefix"] = self.prefix
        return out
