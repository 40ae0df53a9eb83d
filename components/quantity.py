"""Kubernetes resource quantities: validation, comparison, and how we write them.

We write every quantity as a string ("8", not 8). A Quantity's OpenAPI type is a string, and server-side
apply on older API servers types the patch against it and refuses a number ("failed to create typed patch
object: ... expected string, got &value.valueUnstructured{Value:1}", kubernetes/kubernetes#94275), as one
did with our extended-resource counts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY = re.compile(
    r"^(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)


def parse(value: str | int) -> Decimal:
    """The numeric value of a quantity ("64Gi" -> 68719476736); ValueError when it is not one."""
    # A stack's thousands of jobs repeat a few quantities, and a Decimal does not change: strings are parsed once
    # (only strings: 1, 1.0 and True are equal keys).
    return _parse_text(value) if type(value) is str else _parse(value)


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Decimal:
    return _parse(value)


def _parse(value: object) -> Decimal:
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(
            f"'{value}' is not a Kubernetes quantity: write a number with an optional suffix, "
            "such as 32, 500m, 64Gi or 2Ti"
        )
    try:
        number = Decimal(match["num"])
    except InvalidOperation as exc:  # pragma: no cover - the pattern admits only decimals
        raise ValueError(f"'{value}' is not a Kubernetes quantity") from exc
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number * (Decimal(10) ** int(suffix[1:]))
    return number * _DECIMAL[suffix]


def canonical(value: str | int | float) -> str:
    """A quantity as the string Kubernetes schemas accept, after checking it parses."""
    text = str(value).strip()
    parse(text)
    return text


def stored(value: str | int) -> str:
    """A quantity as Kubernetes writes it back once a controller or webhook has decoded it: its canonical string
    (4096Gi as 4Ti, 1000 as 1k, 0.5 as 500m). Written so, an object that Kueue rewrites (its ClusterQueue webhook at
    create, kueue v0.19.2 pkg/webhooks/clusterqueue_webhook.go:57) reads back as `pulumi up` declared it, and the
    next `up` has nothing to change.

    apimachinery's Quantity.CanonicalizeBytes (k8s.io/apimachinery v0.36.2 pkg/api/resource/quantity.go:425-462):
    a binary quantity of at least 1024 that is a whole number takes the largest power-of-1024 suffix that keeps it
    whole; any other, the largest power-of-1000 suffix (down to n) that keeps it whole. An exponent (1e3) is kept as
    written."""
    text = canonical(value)
    match = _QUANTITY.match(text)
    suffix = (match["suffix"] if match else None) or ""
    if suffix[:1] in ("e", "E"):
        return text
    number = parse(text)
    if number == 0:
        return "0"
    if suffix in _BINARY and abs(number) >= 1024 and number == number.to_integral_value():
        for unit, scale in reversed(_BINARY.items()):
            if number % scale == 0:
                return f"{number // scale:f}{unit}"
        return f"{number:f}"
    for unit, scale in reversed(_DECIMAL.items()):
        scaled = number / scale
        if scaled == scaled.to_integral_value():
            return f"{scaled.to_integral_value():f}{unit}"
    return text  # finer than a nano-unit: Kubernetes rounds it up; left as written


def add(a: str | int, b: str | int) -> str:
    """Two quantities added, in their suffix when they share one (`64` + `32`, `1800Gi` + `900Gi`), else in units
    (bytes, cores)."""
    x, y = _QUANTITY.match(canonical(a)), _QUANTITY.match(canonical(b))
    assert x is not None and y is not None  # canonical() parsed both
    suffix = x["suffix"] or ""
    if suffix == (y["suffix"] or "") and suffix[:1] not in ("e", "E"):
        return f"{(Decimal(x['num']) + Decimal(y['num'])).normalize():f}{suffix}"
    return f"{(parse(a) + parse(b)).normalize():f}"


def quantities(values: Mapping[str, str | int]) -> dict[str, str]:
    """A resource map (requests, limits, quota, capacity) with every quantity written as its string."""
    return {name: canonical(value) for name, value in values.items()}


def gibibytes(amount: int) -> str:
    """A whole number of GiB as a quantity string."""
    return f"{amount}Gi"
