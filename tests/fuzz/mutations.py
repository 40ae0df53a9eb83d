"""One mistake in a valid stack file, chosen across the whole config model.

`sites` walks a stack's `gpu-training:` keys beside the pydantic models that read them (StackConfig and every model
under it, through aliases, lists, free mappings and the cluster's provider union), and names each place a value sits
or could sit. `mutations` lists every single mistake a user can make there: a required key deleted, an unknown key or
a near-miss typo of a real one, a value of the wrong type (a word for a count, a boolean for a count, a list for a
mapping or a scalar, null), numbers out of range, broken names, enum members that are not, and mistakes in the text
itself: a config key's namespace misspelt or left out, a duplicated key, bytes that are not UTF-8, broken
indentation. Each says whether it must be refused or may be
legal (`must_refuse`).
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import AwareDatetime, BaseModel
from pydantic.fields import FieldInfo

from components.models import CONFIG_NAMESPACE, StackConfig
from components.models import base as spec_base
from components.models import cluster as cluster_models

MISSING: Any = object()
"""The value at a site where the key is absent (a field the stack leaves at its default)."""

NAME_RULES = {
    spec_base._dns1123_label: "label",
    spec_base._dns1035_label: "job-name",
    spec_base._dns1123_subdomain: "subdomain",
    cluster_models._gke_cluster_name: "gke-cluster",
}
"""The name validators of the models (components/models/base.py, cluster.py), by what they check."""
LETTER_FIRST = frozenset({"job-name", "gke-cluster"})
"""Names that must start with a letter (a DNS-1123 label or subdomain may start with a digit)."""
NAME_LIMITS = {"subdomain": 253, "gke-cluster": 40}
"""The longest name of each rule, 63 for the others."""

TextKind = Literal["duplicate-key", "invalid-utf8", "indentation", "namespace"]


@dataclass(frozen=True, slots=True)
class Shape:
    """What the model accepts at a place: kinds of value, enum members, a name rule, models, item types."""

    kinds: frozenset[str]
    literals: tuple[Any, ...] = ()
    name: str | None = None
    models: tuple[type[BaseModel], ...] = ()
    list_item: Any = None
    dict_value: Any = None

    @property
    def scalar(self) -> bool:
        """Whether a plain value (not a list or mapping) is accepted."""
        return bool(self.kinds & {"int", "float", "str", "bool", "datetime"})


@dataclass(frozen=True, slots=True)
class Site:
    """A place in a stack's config: its path, the value there (MISSING when absent), what the model accepts, and
    the model that reads it when it is a mapping of one."""

    path: tuple[str | int, ...]
    value: Any
    shape: Shape
    model: type[BaseModel] | None = None


@dataclass(frozen=True, slots=True)
class Mutation:
    """One mistake: its kind, where, what it writes, and whether render must refuse it."""

    kind: str
    path: tuple[str | int, ...]
    must_refuse: bool
    value: Any = None
    rename: str | None = None
    delete: bool = False
    text: TextKind | None = None
    detail: str = field(default="")

    def __str__(self) -> str:
        where = ".".join(str(p) for p in self.path) or "<file>"
        what = self.detail or (f"-> {self.rename!r}" if self.rename else "" if self.delete else f"= {self.value!r}")
        return f"{self.kind} at {where} {what}".strip()


def shape(annotation: Any, metadata: tuple[Any, ...] = ()) -> Shape:
    """What a field's annotation (and its constraints) accepts."""
    kinds: set[str] = set()
    literals: list[Any] = []
    names: list[str] = []
    models: list[type[BaseModel]] = []
    items: dict[str, Any] = {}

    def visit(a: Any, meta: tuple[Any, ...]) -> None:
        origin = typing.get_origin(a)
        if origin is typing.Annotated:
            inner, *extra = typing.get_args(a)
            visit(inner, (*meta, *extra))
            return
        for m in meta:
            func = getattr(m, "func", None)
            if func in NAME_RULES:
                names.append(NAME_RULES[func])
            if func is spec_base._scalar_to_str:  # YAML numbers and booleans become strings
                kinds.update({"int", "float", "bool"})
        if origin in (typing.Union, types.UnionType):
            for arg in typing.get_args(a):
                visit(arg, meta)
        elif origin is Literal:
            literals.extend(typing.get_args(a))
            kinds.update("int" if isinstance(v, int) else "str" for v in typing.get_args(a))
        elif a is type(None):
            kinds.add("none")
        elif origin is list:
            kinds.add("list")
            items["list"] = typing.get_args(a)[0]
        elif origin is dict:
            kinds.add("dict")
            items["dict"] = typing.get_args(a)[1]
        elif isinstance(a, type) and issubclass(a, BaseModel):
            kinds.add("model")
            models.append(a)
        elif a is AwareDatetime:
            kinds.add("datetime")
        elif a in (bool, int, float, str):
            kinds.add(a.__name__)
        else:
            kinds.add("any")

    visit(annotation, tuple(metadata))
    return Shape(
        frozenset(kinds),
        tuple(literals),
        names[0] if names else None,
        tuple(models),
        items.get("list"),
        items.get("dict"),
    )


def _field(model: type[BaseModel], key: str) -> FieldInfo | None:
    return next((f for n, f in model.model_fields.items() if key in (n, f.alias)), None)


def _model_of(found: Shape, value: dict[str, Any]) -> type[BaseModel] | None:
    """The model that reads a mapping: the only one, or the union member whose tag (a Literal field) it names."""
    if len(found.models) == 1:
        return found.models[0]
    for model in found.models:
        for name, spec in model.model_fields.items():
            tag = typing.get_args(spec.annotation) if typing.get_origin(spec.annotation) is Literal else ()
            if value.get(spec.alias or name) in tag:
                return model
    return None


def sites(value: Any, found: Shape, path: tuple[str | int, ...] = ()) -> Iterator[Site]:
    """Every place in `value` (read as `found` says) and every absent field of the models that read its mappings."""
    model = _model_of(found, value) if isinstance(value, dict) and found.models else None
    yield Site(path, value, found, model)
    if model is not None:
        for key, child in value.items():
            spec = _field(model, key)
            if spec is not None:
                yield from sites(child, shape(spec.annotation, tuple(spec.metadata)), (*path, key))
        for name, spec in model.model_fields.items():
            key = spec.alias or name
            if key not in value and name not in value:
                yield Site((*path, key), MISSING, shape(spec.annotation, tuple(spec.metadata)))
    elif isinstance(value, list) and found.list_item is not None:
        for index, child in enumerate(value):
            yield from sites(child, shape(found.list_item), (*path, index))
    elif isinstance(value, dict) and found.dict_value is not None:
        for key, child in value.items():
            yield from sites(child, shape(found.dict_value), (*path, key))


def _typos(key: str, taken: set[str]) -> list[str]:
    """Near misses of a key that name no field: a letter dropped, two swapped, a plural, the wrong case."""
    candidates = [key[:-1], key + "s", key[0].upper() + key[1:], key.lower() if key != key.lower() else key.upper()]
    if len(key) > 2:
        candidates.append(key[0] + key[2] + key[1] + key[3:])
    return [c for c in dict.fromkeys(candidates) if c and c not in taken]


_BAD_NAMES = {
    "uppercase": ("Bad-Name", True),
    "space": ("bad name", True),
    "leading-hyphen": ("-bad", True),
    "trailing-hyphen": ("bad-", True),
    "leading-digit": ("1bad", False),  # a DNS-1123 label or subdomain may start with a digit; a job name may not
    "underscore": ("bad_name", True),
}
_NUMBERS = {"negative-number": -1, "zero": 0, "int32-overflow": 2**31, "huge-number": 10**30}
"""Numbers out of a count's range, by kind. Each may be legal somewhere (a priority below zero, a quota of zero)."""


def leaf_mutations(site: Site) -> Iterator[Mutation]:
    """The wrong values that fit a place, each refused unless the model can hold it."""
    kinds, path, value = site.shape.kinds, site.path, site.value
    if "any" in kinds:
        return
    yield Mutation("null", path, "none" not in kinds, None)
    numeric = kinds & {"int", "float"}
    if numeric and "str" not in kinds:
        yield Mutation("string-for-number", path, True, "many")
    if numeric and "bool" not in kinds:
        yield Mutation("bool-for-number", path, True, True)
    if (isinstance(value, dict) or kinds & {"dict", "model"}) and "list" not in kinds:
        yield Mutation("list-for-mapping", path, True, ["x"])
    if site.shape.scalar and "list" not in kinds:
        yield Mutation("list-for-scalar", path, True, [value if value is not MISSING else "x"])
    if "int" in kinds and not site.shape.literals:
        for kind, number in _NUMBERS.items():
            yield Mutation(kind, path, False, number)
    if site.shape.name:
        for label, (bad, refused) in _BAD_NAMES.items():
            yield Mutation("bad-name", path, refused or site.shape.name in LETTER_FIRST, bad, detail=label)
        limit = NAME_LIMITS.get(site.shape.name, 63)
        yield Mutation("bad-name", path, True, "a" * (limit + 1), detail=f"{limit + 1} characters")
    if site.shape.literals:
        yield Mutation("bad-enum", path, True, "bogus")
        member = value if isinstance(value, str) else next((v for v in site.shape.literals if isinstance(v, str)), None)
        if isinstance(member, str) and member.swapcase() not in site.shape.literals:
            yield Mutation("bad-enum", path, True, member.swapcase(), detail=f"{member.swapcase()!r} (wrong case)")


def mapping_mutations(site: Site) -> Iterator[Mutation]:
    """Keys a mapping of a model must not lose or gain: required ones deleted, unknown ones and typos added."""
    model, value = site.model, site.value
    if model is None or not isinstance(value, dict):
        return
    taken = {k for n, f in model.model_fields.items() for k in (n, f.alias) if k}
    for name, spec in model.model_fields.items():
        key = spec.alias or name
        if spec.is_required() and key in value:
            yield Mutation("delete-required", (*site.path, key), True, delete=True)
    yield Mutation("unknown-key", (*site.path, "unknownKey"), True, 1)
    for key in value:
        for typo in _typos(str(key), taken)[:2]:
            yield Mutation("typo-key", (*site.path, key), True, rename=typo)


def mutations(raw: dict[str, Any]) -> list[Mutation]:
    """Every single mistake in a stack's `gpu-training:` keys, and in the text that holds them."""
    out: list[Mutation] = []
    for site in sites(raw, shape(StackConfig)):
        out += mapping_mutations(site)
        if site.path:
            out += leaf_mutations(site)
        if site.value is not MISSING and site.path and site.model is not None:
            out.append(Mutation("duplicate-key", site.path, True, text="duplicate-key"))
    for key in raw:
        for wrong in (f"{CONFIG_NAMESPACE[:-1]}:{key}", f"{CONFIG_NAMESPACE.replace('-', '_')}:{key}"):
            out.append(Mutation("namespace", (key,), True, rename=wrong, text="namespace"))
        # A key with no namespace is the project's own to Pulumi (components/stackfile.py), so it reads the same.
        out.append(Mutation("namespace", (key,), False, rename=str(key), text="namespace"))
    out.append(Mutation("invalid-utf8", (), True, text="invalid-utf8", detail="a Latin-1 'é' in a value"))
    out.append(Mutation("invalid-utf8", (), True, text="invalid-utf8", detail="a NUL and 0xFF bytes"))
    out += [
        Mutation("indentation", (), False, text="indentation", detail=f"line {n} {how}") for n, how in _indents(raw)
    ]
    return out


def _indents(raw: dict[str, Any]) -> list[tuple[int, str]]:
    lines = dump(raw).decode().splitlines()
    return [(n, how) for n, line in enumerate(lines) if n and line.startswith("  ") for how in ("+1", "-1")]


def document(raw: dict[str, Any]) -> dict[str, Any]:
    """A stack file's document holding these `gpu-training:` keys."""
    return {"config": {f"{CONFIG_NAMESPACE}:{key}": value for key, value in raw.items()}}


def dump(raw: dict[str, Any]) -> bytes:
    """The stack file of these keys, as a user would write it (block style, keys in order)."""
    return yaml.safe_dump(document(raw), sort_keys=False, allow_unicode=True, width=10_000).encode()


def apply(raw: dict[str, Any], mutation: Mutation) -> bytes:
    """The stack file with the mistake made."""
    if mutation.text is not None:
        return _apply_text(raw, mutation)
    data = copy.deepcopy(raw)
    *parents, last = mutation.path
    parent: Any = data
    for part in parents:
        parent = parent[part]
    if mutation.delete:
        del parent[last]
    elif mutation.rename is not None:
        parent[mutation.rename] = parent.pop(last)
    else:
        parent[last] = mutation.value
    return dump(data)


def _apply_text(raw: dict[str, Any], mutation: Mutation) -> bytes:
    text = dump(raw).decode()
    lines = text.splitlines(keepends=True)
    if mutation.text == "duplicate-key":
        first, end = _key_lines(text, mutation.path)
        lines[end:end] = lines[first:end]  # the same key again, right after its value
    elif mutation.text == "invalid-utf8":
        values = [n for n, line in enumerate(lines) if ": " in line and not line.rstrip().endswith(":")]
        n = values[len(values) // 2]
        bad = "é".encode("latin-1") if "Latin-1" in mutation.detail else b"\x00\xff\xfe"
        return b"".join(
            line.encode() if i != n else line.rstrip("\n").encode() + bad + b"\n" for i, line in enumerate(lines)
        )
    elif mutation.text == "namespace":
        key = f"  {CONFIG_NAMESPACE}:{mutation.path[0]}:"
        lines = [f"  {mutation.rename}:{line.removeprefix(key)}" if line.startswith(key) else line for line in lines]
    else:
        n, how = mutation.detail.removeprefix("line ").split(" ")
        index = int(n)
        lines[index] = (" " + lines[index]) if how == "+1" else lines[index][1:]
    return "".join(lines).encode()


def _key_lines(text: str, path: tuple[str | int, ...]) -> tuple[int, int]:
    """The lines (first, end) of a key and its value in a dumped stack file."""
    node: Any = yaml.compose(text)
    node = next(v for k, v in node.value if k.value == "config")
    key_node: Any = None
    for depth, part in enumerate(path):
        if isinstance(part, int):
            node = node.value[part]
            continue
        want = f"{CONFIG_NAMESPACE}:{part}" if depth == 0 else part
        key_node, node = next((k, v) for k, v in node.value if k.value == want)
    first = key_node.start_mark.line
    end = node.end_mark.line + (1 if node.end_mark.column else 0)
    return first, max(end, first + 1)


def stack_keys(stack_file: Path) -> dict[str, Any]:
    """The `gpu-training:` keys of a stack file."""
    doc = yaml.safe_load(stack_file.read_text())
    prefix = f"{CONFIG_NAMESPACE}:"
    return {k.removeprefix(prefix): v for k, v in doc["config"].items() if k.startswith(prefix)}
