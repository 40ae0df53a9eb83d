"""The base of every spec: camelCase keys from config, snake_case in Python, unknown keys rejected."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel

from components import images, quantity

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class Spec(BaseModel):
    """A typed, immutable piece of configuration."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
    )

    def to_config(self) -> dict[str, Any]:
        """This spec as config data (camelCase keys, defaults included)."""
        return self.model_dump(mode="json", by_alias=True)


def _dns1123_label(value: str) -> str:
    if len(value) > 63 or not _DNS1123_LABEL.match(value):
        raise ValueError(
            f"'{value}' is not a DNS-1123 label: use at most 63 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return value


def _dns1035_label(value: str) -> str:
    if len(value) > 63 or not _DNS1035_LABEL.match(value):
        raise ValueError(
            f"'{value}' is not a DNS-1035 label: use at most 63 lowercase letters, digits and '-', "
            "starting with a letter and ending with a letter or digit (e.g. 'llama-finetune')"
        )
    return value


def _dns1123_subdomain(value: str) -> str:
    if len(value) > 253 or not _DNS1123_SUBDOMAIN.match(value):
        raise ValueError(f"'{value}' is not a DNS-1123 subdomain: use lowercase letters, digits, '-' and '.'")
    return value


def _scalar_to_str(value: Any) -> Any:
    """YAML reads `cpu: 32` as a number and `debug: true` as a bool; Kubernetes wants strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


INT32_MAX = 2**31 - 1
"""The largest int32: every count the stack hands the Kubernetes API (replicas, backoffLimit, minAvailable,
ttlSecondsAfterFinished, a queue's quota ...) is an int32 field there (k8s.io/api, and the CRDs' `format: int32`)."""


def _whole_number(value: Any) -> Any:
    """A count as YAML gives it: an int; `true`, 2.5 and "2" are refused rather than read as 1, 2 and 2."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean where a whole number is meant: write a number such as 2")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a whole number: write one such as 2")
        hint = f"{int(value)}" if value.is_integer() else f"{math.floor(value)} or {math.ceil(value)}"
        raise ValueError(f"{value:g} is not a whole number: write {hint}")
    if isinstance(value, str):
        raise ValueError(f"'{value}' is text where a whole number is meant: write it without quotes, as 2")
    return value


def _int32(value: int) -> int:
    if value > INT32_MAX:
        raise ValueError(
            f"{value} is past {INT32_MAX}, the largest count the Kubernetes API takes (an int32): write a smaller one"
        )
    return value


Count = Annotated[int, BeforeValidator(_whole_number), AfterValidator(_int32)]
"""A whole number as written (never a boolean, a float or quoted text), at most INT32_MAX: every integer of the
config model is one, and its own bounds come on top."""


def _number(value: Any) -> Any:
    """A figure as YAML gives it: an int or a finite float; `true` and `.inf` are refused rather than read as 1.0 and
    an unbounded figure."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean where a number is meant: write one such as 100")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number: write one such as 100")
    return value


Number = Annotated[float, BeforeValidator(_number)]
"""A figure (a bandwidth, a speed) as written: a finite number, never a boolean; every float of the config model is
one."""


_REFERENCE_GRAMMAR = (
    "an image reference is [registry/]repository[:tag][@digest]: the repository lowercase letters, digits and "
    "'.', '_', '-' between '/', a tag of at most 128 letters, digits, '_', '.', '-' (not first: '.', '-'), a digest "
    "algorithm:hex (e.g. nvcr.io/nvidia/pytorch:25.01-py3)"
)


def _image_reference(value: str) -> str:
    if any(c.isspace() for c in value):
        raise ValueError(f"{value!r} holds whitespace, which no image reference has; {_REFERENCE_GRAMMAR}")
    try:
        images.parse(value)
    except ValueError as exc:
        problem = str(exc)
        lowered = _lowercase_name(value)
        if lowered != value and _parses(lowered):
            problem = f"{value!r}: a repository is lowercase (write {lowered})"
        raise ValueError(f"{problem}; {_REFERENCE_GRAMMAR}") from None
    return value


def _lowercase_name(image: str) -> str:
    """The reference with its name (registry and repository) lowercase, its tag and digest as written."""
    name, at_sign, digest = image.partition("@")
    cut = name.rfind(":")
    tag = name[cut:] if cut > name.rfind("/") else ""
    return name[: len(name) - len(tag)].lower() + tag + at_sign + digest


def _parses(image: str) -> bool:
    try:
        images.parse(image)
    except ValueError:
        return False
    return True


ImageRef = Annotated[str, AfterValidator(_image_reference)]
"""A container image reference, as the distribution reference grammar reads one (components/images.py)."""

DnsLabel = Annotated[str, AfterValidator(_dns1123_label)]
"""A DNS-1123 label: namespaces, pools, networks, queues."""

JobName = Annotated[str, AfterValidator(_dns1035_label)]
"""A DNS-1035 label: job names, which also name Services."""

ObjectName = Annotated[str, AfterValidator(_dns1123_subdomain)]
"""A DNS-1123 subdomain: PVC and ConfigMap names."""

Quantity = Annotated[str, BeforeValidator(_scalar_to_str), AfterValidator(quantity.canonical)]
"""A Kubernetes quantity such as "32", "500m" or "64Gi"."""

EnvValue = Annotated[str, BeforeValidator(_scalar_to_str)]
"""A string that YAML may have read as a number or boolean (env values, command arguments)."""


_AT = "\x00"


def at(field: str, message: str) -> ValueError:
    """An error that a model validator raises about one of its fields, so the path names that field."""
    return ValueError(f"{_AT}{field}{_AT}{message}")


def split_at(message: str) -> tuple[str | None, str]:
    """The field and message of an error made by `at`, or (None, message) for any other."""
    if message.startswith(_AT):
        _, field, rest = message.split(_AT, 2)
        return field, rest
    return None, message


def snake(camel: str) -> str:
    """The Python attribute name of a camelCase config key."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


def check_variant_fields(
    spec: Spec,
    variant: str,
    required: Iterable[str],
    only_for: Mapping[str, tuple[str, ...]],
    *,
    needs: str,
    applies: str,
) -> None:
    """Raise (naming the field) when a key the variant needs is unset, or a key of other variants is set.

    `needs` and `applies` are the messages, formatted with `variant`, `key` and `variants`.
    """
    for key in required:
        if getattr(spec, snake(key)) in (None, ""):
            raise at(key, needs.format(variant=variant, key=key))
    for key, variants in only_for.items():
        if getattr(spec, snake(key)) is not None and variant not in variants:
            raise at(key, applies.format(key=key, variants=" / ".join(variants), variant=variant))
