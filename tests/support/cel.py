"""Evaluate the CEL rules of a CRD schema (`x-kubernetes-validations`) against an object, as the API server does on create."""

from __future__ import annotations

import copy
import functools
import itertools
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

import cel
from cel import stdlib

Schema = Mapping[str, Any]
Path = tuple[str | int, ...]

# cel logs a warning for every exception a registered function raises; here those are expected (bad data).
logging.getLogger("cel").setLevel(logging.ERROR)


# --- Kubernetes CEL library functions that cel-rust and cel.stdlib lack ----------------------------------------------


def _find(text: str, pattern: str) -> str:
    """The first match of a regex in a string, or "" (Kubernetes regex library)."""
    try:
        match = re.search(pattern, text)
    except re.error as exc:
        # Python's re is not RE2: a pattern it rejects says nothing about the object.
        raise NotImplementedError(f"regex {pattern!r}: {exc}") from exc
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Every match of a regex in a string, at most limit when limit >= 0 (Kubernetes regex library)."""
    try:
        found = [match.group(0) for match in re.finditer(pattern, text)]
    except re.error as exc:
        raise NotImplementedError(f"regex {pattern!r}: {exc}") from exc
    return found if limit < 0 else found[:limit]


def _index_of(container: Any, item: Any, *offset: int) -> int:
    """indexOf for lists (Kubernetes lists library) and for strings (strings extension)."""
    if isinstance(container, list):
        return container.index(item) if item in container else -1
    return stdlib.index_of(container, item, *offset)


def _last_index_of(container: Any, item: Any, *offset: int) -> int:
    """lastIndexOf for lists (Kubernetes lists library) and for strings (strings extension)."""
    if isinstance(container, list):
        return len(container) - 1 - container[::-1].index(item) if item in container else -1
    return stdlib.last_index_of(container, item, *offset)


def _is_sorted(items: list[Any]) -> bool:
    """Whether a list is in ascending order (Kubernetes lists library)."""
    return all(a <= b for a, b in itertools.pairwise(items))


_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?")
_SCALE: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    **{suffix: Fraction(10 ** (3 * (i + 1))) for i, suffix in enumerate("kMGTPE")},
    **{f"{suffix}i": Fraction(2 ** (10 * (i + 1))) for i, suffix in enumerate("KMGTPE")},
}
# A quantity travels through cel-rust as a one-key map holding its exact value, so == compares values.
_QUANTITY_KEY = "@quantity"
_INT64 = 2**63


def _parse_quantity(text: str) -> Fraction | None:
    match = _QUANTITY.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    scale = Fraction(10) ** int(suffix[1:]) if suffix[:1] in ("e", "E") and len(suffix) > 1 else _SCALE[suffix]
    return Fraction(Decimal(number)) * scale


def _as_quantity(value: Fraction) -> dict[str, str]:
    return {_QUANTITY_KEY: f"{value.numerator}/{value.denominator}"}


def _quantity_value(value: Any, *, allow_int: bool = False) -> Fraction:
    if isinstance(value, dict) and set(value) == {_QUANTITY_KEY}:
        return Fraction(value[_QUANTITY_KEY])
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    raise TypeError(f"not a quantity: {value!r}")


def _quantity(text: str) -> dict[str, str]:
    """quantity(string): a Kubernetes resource quantity."""
    value = _parse_quantity(text)
    if value is None:
        raise ValueError(f"invalid quantity {text!r}")
    return _as_quantity(value)


def _compare(a: Any, b: Any) -> int:
    x, y = _quantity_value(a), _quantity_value(b)
    return (x > y) - (x < y)


def _as_integer(q: Any) -> int:
    value = _quantity_value(q)
    if value.denominator != 1 or not -_INT64 <= value.numerator < _INT64:
        raise ValueError(f"quantity {float(value)} is not an int64")
    return value.numerator


_QUANTITY_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": lambda text: _parse_quantity(text) is not None,
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
    "add": lambda a, b: _as_quantity(_quantity_value(a) + _quantity_value(b, allow_int=True)),
    "sub": lambda a, b: _as_quantity(_quantity_value(a) - _quantity_value(b, allow_int=True)),
    "sign": lambda q: (_quantity_value(q) > 0) - (_quantity_value(q) < 0),
    "isInteger": lambda q: _quantity_value(q).denominator == 1 and -_INT64 <= _quantity_value(q).numerator < _INT64,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: float(_quantity_value(q)),
}

# Kubernetes' CEL environment: the strings and sets extensions, the lists library (sum/min/max/isSorted/indexOf),
# regex find/findAll and quantities. cel.stdlib's math, encoders and lists extensions are not in Kubernetes.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    **stdlib.EXTENSIONS["core"],
    **stdlib.EXTENSIONS["strings"],
    **stdlib.EXTENSIONS["sets"],
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "isSorted": _is_sorted,
    "find": _find,
    "findAll": _find_all,
    **_QUANTITY_FUNCTIONS,
}

# What cel-rust provides itself (names as Program.functions() reports them; macros such as has() do not appear).
_NATIVE = frozenset(
    {
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "timestamp",
        "duration",
        "dyn",
        "type",
        "getFullYear",
        "getMonth",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
        "of",
        "none",
        "ofNonZeroValue",
        "hasValue",
        "value",
        "orValue",
        "or",
    }
)
# Program.functions() names a namespaced function by its last part and reports its namespace as a variable.
_KNOWN_FUNCTIONS = _NATIVE | {name.rpartition(".")[2] for name in FUNCTIONS}
_KNOWN_IDENTIFIERS = frozenset(
    {"self", "int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "optional"}
    | {name.rpartition(".")[0] for name in FUNCTIONS if "." in name}
)
_COMPREHENSION_VARIABLE = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_]\w*)\s*,")
_EXISTS = re.compile(r"\.\s*exists\s*\(")


@functools.cache
def _compile(rule: str) -> cel.Program | str:
    """The compiled rule, or why cel-rust cannot parse it."""
    try:
        return cel.compile(rule)
    except ValueError as exc:
        return f"unsupported syntax: {str(exc).splitlines()[0]}"


def is_transition_rule(rule: str) -> bool:
    """Whether a rule compares with oldSelf (it then applies to updates only)."""
    program = _compile(rule)
    return re.search(r"\boldSelf\b", rule) is not None if isinstance(program, str) else "oldSelf" in program.variables()


def unsupported(rule: str) -> str | None:
    """Why this evaluator cannot run a rule (syntax, function or identifier it lacks), or None when it can."""
    program = _compile(rule)
    if isinstance(program, str):
        return program
    unknown = [
        f"function {name}()" for name in program.functions() if name[0] not in "_@!-" and name not in _KNOWN_FUNCTIONS
    ]
    bound = set(_COMPREHENSION_VARIABLE.findall(rule)) | {"oldSelf"}
    unknown += [f"identifier {name}" for name in program.variables() if name not in _KNOWN_IDENTIFIERS | bound]
    return f"unknown {', '.join(unknown)}" if unknown else None


def schema_rules(schema: Schema, where: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (schema location, rule entry) in a CRD schema; a location reads like spec.items[*].field."""
    for entry in schema.get("x-kubernetes-validations", ()):
        yield where or "<root>", entry
    for name, child in (schema.get("properties") or {}).items():
        yield from schema_rules(child, f"{where}.{name}" if where else name)
    for key, suffix in (("additionalProperties", "{*}"), ("items", "[*]")):
        if isinstance(child := schema.get(key), Mapping):
            yield from schema_rules(child, f"{where}{suffix}")


# --- Objects as the API server hands them to CEL ----------------------------------------------------------------------


def _child(schema: Schema, key: str) -> Schema:
    properties = schema.get("properties") or {}
    if key in properties:
        return properties[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else {}


def _as_cel_value(value: Any, schema: Schema) -> Any:
    """The value as CEL sees it: nulls of non-nullable fields pruned, defaults applied, numbers typed by the schema."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            child = _child(schema, key)
            if item is None and not child.get("nullable"):
                continue
            out[key] = _as_cel_value(item, child)
        for key, child in (schema.get("properties") or {}).items():
            if key not in out and "default" in child:
                out[key] = _as_cel_value(copy.deepcopy(child["default"]), child)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        return [_as_cel_value(item, items if isinstance(items, Mapping) else {}) for item in value]
    # The API server makes a `number` a double even when it is written 3; an `integer` stays an int.
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _root_view(value: dict[str, Any]) -> dict[str, Any]:
    # Rules at the root see only metadata.name and metadata.generateName.
    metadata = value.get("metadata") or {}
    return {**value, "metadata": {key: metadata[key] for key in ("name", "generateName") if key in metadata}}


def _nodes(schema: Schema, value: Any, path: Path, where: str) -> Iterator[tuple[Schema, Any, Path, str]]:
    if value is None:
        return
    if schema.get("x-kubernetes-validations"):
        yield schema, value, path, where or "<root>"
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, item in value.items():
            child = _child(schema, key)
            if child:
                here = (f"{where}.{key}" if where else key) if key in properties else f"{where}{{*}}"
                yield from _nodes(child, item, (*path, key), here)
    elif isinstance(value, list) and isinstance(items := schema.get("items"), Mapping):
        for index, item in enumerate(value):
            yield from _nodes(items, item, (*path, index), f"{where}[*]")


# --- Evaluation -------------------------------------------------------------------------------------------------------

# How an evaluation error counts. The API server rejects an object when one of its rules errors, so an error the
# data causes (a key dereferenced without has(), an index out of range, int('x'), a bad quantity) is a violation.
# An error from a feature cel-rust lacks (unknown function or syntax, a value it cannot carry, an overload it does
# not have) is "not evaluated": the API server type-checks every rule when the CRD is installed, so a no-such-overload
# here means our representation differs from Kubernetes' (e.g. a date-time string it would make a timestamp).
_DATA_ERRORS = (KeyError, IndexError, ZeroDivisionError, OverflowError)
_GAP_MARKERS = ("Failed to convert", "failed: TypeError", "failed: NotImplementedError")

_UNEVALUATED: set[tuple[str, str, str, str]] = set()


def _caused_by_data(exc: Exception) -> bool:
    if isinstance(exc, _DATA_ERRORS):
        return True
    # cel-rust reports a function that failed on its arguments (int('x'), a bad regex, a registered function's
    # ValueError) as "Function 'f' error: ..."; a registered function raises TypeError for a case it does not cover.
    text = str(exc)
    return isinstance(exc, RuntimeError) and text.startswith("Function '") and not any(m in text for m in _GAP_MARKERS)


def _has_non_ascii(value: Any) -> bool:
    if isinstance(value, str):
        return not value.isascii()
    if isinstance(value, dict):
        return any(_has_non_ascii(key) or _has_non_ascii(item) for key, item in value.items())
    return isinstance(value, list) and any(_has_non_ascii(item) for item in value)


def _error_text(exc: Exception) -> str:
    text = f"no such key: {exc}" if isinstance(exc, KeyError) else str(exc)
    return text.split(". Check ")[0].splitlines()[0]


def _evaluate(entry: Mapping[str, Any], value: Any, context: cel.Context) -> tuple[bool | None, str]:
    """(True, "") when the rule holds, (False, error or "") when the API server rejects, (None, why) when unknown."""
    program = _compile(entry["rule"])
    if isinstance(program, str):
        return None, program
    if "size" in program.functions() and _has_non_ascii(value):
        return None, "size() of a non-ASCII string: cel-rust counts UTF-8 bytes, Kubernetes code points"
    try:
        result = program.execute(context)
    except Exception as exc:
        if not _caused_by_data(exc):
            return None, _error_text(exc)
        # cel-go absorbs an error inside exists() when another element satisfies it; cel-rust stops at the error.
        if _EXISTS.search(entry["rule"]):
            return None, f"error inside exists(), which cel-go may absorb: {_error_text(exc)}"
        return False, _error_text(exc)
    if not isinstance(result, bool):
        return None, f"returned {result!r}, not a bool"
    return result, ""


def _message(entry: Mapping[str, Any], context: cel.Context) -> str:
    if expression := entry.get("messageExpression"):
        try:
            text = cel.evaluate(expression, context)
        except Exception:
            text = None
        if isinstance(text, str) and text.strip():
            return text
    return entry.get("message") or f"failed rule: {entry['rule']}"


def violations(schema: Schema, obj: Mapping[str, Any], source: str = "") -> list[str]:
    """Every CEL rule of the schema the object breaks, as `Kind/name: path: message`; unevaluable rules are recorded."""
    label = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
    found = []
    for node, here, path, where in _nodes(schema, _as_cel_value(obj, schema), (), ""):
        value = _root_view(here) if not path else here
        context = cel.Context(variables={"self": value}, functions=FUNCTIONS)
        for entry in node["x-kubernetes-validations"]:
            rule = entry["rule"]
            if is_transition_rule(rule):
                if entry.get("optionalOldSelf"):
                    _UNEVALUATED.add((source, where, rule, "optionalOldSelf rule: needs oldSelf as an optional"))
                continue
            holds, detail = _evaluate(entry, value, context)
            if holds is None:
                _UNEVALUATED.add((source, where, rule, detail))
            elif not holds:
                at = ".".join(str(p) for p in path) or "<root>"
                if field := entry.get("fieldPath"):
                    at = f"{at if path else ''}{field}".lstrip(".")
                error = f" (rule errored: {detail})" if detail else ""
                found.append(f"{label}: {at}: {_message(entry, context)}{error}")
    return found


def unevaluated_rules() -> list[tuple[str, str, str, str]]:
    """Every (schema file, schema location, rule, reason) this process could not evaluate, sorted."""
    return sorted(_UNEVALUATED)
