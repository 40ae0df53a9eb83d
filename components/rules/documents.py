"""Manifest files as the rules read them: each YAML document with the keys it states twice, lists expanded
into their items, and what makes a document unreadable (not YAML, an unsubstituted template) said plainly.

Pure: text in, documents and problems out; never raises on any text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from components import yamlstrict
from components.rules.rule import Rule, Settings
from components.rules.subject import Subject

TEMPLATE_VARIABLE = re.compile(
    r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|__[A-Z][A-Z0-9_]*__|<[A-Za-z][^<>]*>"
)
"""A shell (`$VAR`, `${VAR}`, as envsubst expands), Go template (`{{ .Values.x }}`), sed (`__NUM_NODES__`) or
fill-in (`<num-nodes>`) variable."""
COUNT_FIELDS = frozenset(
    {
        "replicas",
        "parallelism",
        "completions",
        "minAvailable",
        "minMember",
        "numNodes",
        "numProcPerNode",
        "nprocPerNode",
        "slotsPerWorker",
        "backoffLimit",
        "minReplicas",
        "maxReplicas",
        "maxRestarts",
        "size",
    }
)
"""Fields that hold a number: a variable there leaves the object unreadable until it is substituted."""
NAME_FIELDS = frozenset({"name", "generateName", "namespace"})


@dataclass(frozen=True, slots=True)
class Document:
    """One Kubernetes object of a file: the object, where it is, the keys it states twice, and the variables
    that keep it from being read (an unsubstituted template)."""

    obj: dict[str, Any]
    number: int
    """The YAML document it is (or is an item of), from 1."""
    duplicates: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()
    """`$VAR at path` for each variable where a number or a name belongs."""


@dataclass(slots=True)
class File:
    """What a file holds: its objects, the documents that are no Kubernetes objects, and why it could not be
    read (not YAML)."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Documents that are no Kubernetes object (no kind and apiVersion), as `document N: why`."""
    error: str | None = None


def _why_not_yaml(error: yaml.YAMLError, text: str) -> str:
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    hint = " (a Helm or Go template? render it, e.g. `helm template`, and check the output)" if "{{" in text else ""
    return f"not YAML{where}: {problem}{hint}"


def _needs_value(path: str, key: Any) -> bool:
    """Whether the field holds a number or a name, which a variable leaves unreadable."""
    return (
        key in COUNT_FIELDS
        or (key in NAME_FIELDS and path.endswith("metadata"))
        or path.endswith(("resources.limits", "resources.requests"))
    )


def variables(obj: Any, path: str = "") -> Iterator[str]:
    """Template variables where a number or an object name belongs, as `$VAR at path`."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(value, str) and _needs_value(path, key):
                found = TEMPLATE_VARIABLE.search(value)
                if found:
                    yield f"{found.group()} at {here}"
            else:
                yield from variables(value, here)
    elif isinstance(obj, list):
        for n, item in enumerate(obj):
            yield from variables(item, f"{path}[{n}]")


def load(text: str) -> File:
    """The Kubernetes objects of a YAML file, each with what its document states twice or leaves unsubstituted."""
    out = File()
    loader: yaml.SafeLoader | None = None
    number = 0
    try:
        loader = yaml.SafeLoader(text)  # the reader rejects control characters here already
        while loader.check_node():
            number += 1
            node = loader.get_node()
            if yamlstrict.excessive_aliasing(node) is not None:
                out.error = f"document {number}: its YAML aliases expand it far past what is written (an alias bomb?)"
                break
            doubled = tuple(f"`{d.key}` (lines {d.first} and {d.second})" for d in yamlstrict.duplicate_keys(node))
            data = loader.construct_document(node)
            if data is None:
                continue
            _add(out, data, number, doubled)
    except yaml.YAMLError as exc:
        out.error = _why_not_yaml(exc, text)
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        out.error = f"cannot be read as YAML: {type(exc).__name__}: {exc}"
    finally:
        if loader is not None:
            loader.dispose()
    return out


def _add(out: File, data: Any, number: int, doubled: tuple[str, ...]) -> None:
    if not isinstance(data, dict):
        out.skipped.append(f"document {number}: a {type(data).__name__}, not a Kubernetes object")
        return
    kind = data.get("kind")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for item in items:
            _add(out, item, number, ())
        return
    if not isinstance(kind, str) or not isinstance(data.get("apiVersion"), str):
        out.skipped.append(f"document {number}: no apiVersion and kind, not a Kubernetes object")
        return
    if not isinstance(data.get("metadata"), dict):
        data = {**data, "metadata": {}}
    out.documents.append(Document(data, number, doubled, tuple(dict.fromkeys(variables(data)))))


def duplicate_keys(subject: Subject, _: list[Subject], __: Settings) -> Iterator[str]:
    """A manifest states no key twice in one mapping: YAML keeps the last value and drops the first silently."""
    for found in subject.duplicate_keys:
        yield f"the key {found} is stated twice; YAML keeps the second and drops the first"


RULES: tuple[Rule, ...] = (
    Rule(
        "duplicate-keys",
        "high",
        "mandatory",
        (duplicate_keys.__doc__ or "").strip(),
        "merge the two entries into one (offline only: a preview sees the object after YAML has dropped one)",
        ("*",),
        duplicate_keys,
        gpu_only=False,
    ),
)
