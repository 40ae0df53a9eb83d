"""The configuration reference: every key a stack file may set, read from the config models, as Markdown.

The models are the one place a key, its type, its default and its description are declared (the description is
the field's attribute docstring), so the reference is derived from them and cannot drift. The docs site writes it
when it is built (docs/hooks.py); `python -m components.reference` prints it.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, Tag
from pydantic.fields import FieldInfo

from components.models import CONFIG_NAMESPACE, StackConfig

TITLE = "Configuration reference"
"""The page's title."""

_ROOT_ANCHOR = "stack"
_BOUNDS: tuple[tuple[type, str, str], ...] = (
    (annotated_types.Ge, "ge", "≥"),
    (annotated_types.Gt, "gt", ">"),
    (annotated_types.Le, "le", "≤"),
    (annotated_types.Lt, "lt", "<"),
)


@dataclass
class Section:
    """One model of the config, and every config path it is found at."""

    model: type[BaseModel]
    paths: list[str] = field(default_factory=list)
    """Where it is in a stack file, as `nodePools[].rails`; the first names the section."""
    variant: str | None = None
    """Which member of a union it is (`provider: aws`), when its path holds several."""
    anchor: str = ""
    """The section's id in the page, unique: its first path and variant as words."""

    @property
    def title(self) -> str:
        """The section's heading: its config path, and the union member it is."""
        if not self.paths[0]:
            return f"Stack keys (`{CONFIG_NAMESPACE}:<key>`)"
        return f"`{self.paths[0]}`" + (f" ({self.variant})" if self.variant else "")


def _members(annotation: Any) -> Iterator[tuple[Any, str | None]]:
    """The types a field's annotation admits (None left out), each with its union tag when it has one."""
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = get_args(annotation)
        tags = [m.tag for m in metadata if isinstance(m, Tag)]
        for member, tag in _members(inner):
            yield member, tag or (tags[0] if tags else None)
    elif origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            if arg is not type(None):
                yield from _members(arg)
    else:
        yield annotation, None


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _nested(annotation: Any, path: str) -> Iterator[tuple[type[BaseModel], str, str | None]]:
    """Each model a field's annotation holds, with its config path and union tag: a list's items are `path[]`, a
    map's values `path.<name>`."""
    members = list(_members(annotation))
    models = [m for m, _ in members if _is_model(m)]
    for member, tag in members:
        origin = get_origin(member)
        if _is_model(member):
            yield member, path, _variant(member, tag) if len(models) > 1 else None
        elif origin in (list, tuple, set, frozenset):
            for item in get_args(member)[:1]:
                yield from _nested(item, f"{path}[]")
        elif origin is dict:
            yield from _nested(get_args(member)[1], f"{path}.<name>")


def _variant(model: type[BaseModel], tag: str | None) -> str:
    """How a union member is told apart: its literal discriminator (`provider: aws`), else its tag or name."""
    for name, info in model.model_fields.items():
        if get_origin(info.annotation) is Literal and len(get_args(info.annotation)) == 1 and info.is_required():
            return f"{info.alias or name}: {get_args(info.annotation)[0]}"
    return f"`{tag}`" if tag else model.__name__


def sections(root: type[BaseModel] = StackConfig) -> list[Section]:
    """Every model reachable from `root`, depth first in field order, each once with all the paths it is at."""
    found: dict[type[BaseModel], Section] = {}

    def walk(model: type[BaseModel], path: str, variant: str | None) -> None:
        if model in found:
            found[model].paths.append(path)
            return
        found[model] = Section(model, [path], variant)
        for name, info in model.model_fields.items():
            key = info.alias or name
            for inner, inner_path, inner_variant in _nested(info.annotation, f"{path}.{key}" if path else key):
                walk(inner, inner_path, inner_variant)

    walk(root, "", None)
    taken: set[str] = set()
    for section in found.values():
        words = re.sub(r"[^a-z0-9]+", "-", f"{section.paths[0]} {section.variant or ''}".lower()).strip("-")
        anchor, count = words or _ROOT_ANCHOR, 1
        while anchor in taken:
            count += 1
            anchor = f"{words}-{count}"
        section.anchor = anchor
        taken.add(anchor)
    return list(found.values())


def _type(annotation: Any, by_model: dict[type[BaseModel], Section]) -> str:
    """A field's type as a reader writes it, with links to the sections of the models it holds."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _type(get_args(annotation)[0], by_model)
    if origin in (Union, types.UnionType):
        parts = [_type(arg, by_model) for arg in get_args(annotation) if arg is not type(None)]
        return " or ".join(dict.fromkeys(parts))
    if origin is Literal:
        return " \\| ".join(f"`{json.dumps(v) if not isinstance(v, str) else v}`" for v in get_args(annotation))
    if origin in (list, tuple, set, frozenset):
        return f"list of {_type(get_args(annotation)[0], by_model)}"
    if origin is dict:
        return f"map of string to {_type(get_args(annotation)[1], by_model)}"
    if _is_model(annotation):
        section = by_model[annotation]
        return f"[{section.variant or 'mapping'}](#{section.anchor})"
    if annotation is Any:
        return "any"
    if isinstance(annotation, type):
        for base, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
            if issubclass(annotation, base):
                return name
        if annotation.__name__ == "AwareDatetime":
            return "date-time with a time zone (RFC 3339)"
    return f"`{getattr(annotation, '__name__', annotation)}`"


def _bounds(info: FieldInfo) -> str:
    """The field's numeric and length bounds, as `≥ 1`."""
    out: list[str] = []
    for item in info.metadata:
        for kind, attribute, sign in _BOUNDS:
            if isinstance(item, kind):
                out.append(f"{sign} {getattr(item, attribute)}")
        if isinstance(item, annotated_types.MinLen) and item.min_length:
            out.append(f"at least {item.min_length} long")
        if isinstance(item, annotated_types.MaxLen):
            out.append(f"at most {item.max_length} long")
    return ", ".join(out)


def _default(info: FieldInfo) -> str:
    """The value a field holds when the key is absent, as a stack file would write it."""
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, BaseModel):
        fresh = type(value).model_construct()
        value = {} if value == fresh else value.model_dump(mode="json", by_alias=True)
    return f"`{json.dumps(value)}`"


def _cell(text: str) -> str:
    """Text fit for a table cell: one line; outside code spans, `|`, `*` and `<` escaped."""
    pieces = re.split(r"(`[^`]*`)", " ".join(text.split()))
    for i in range(0, len(pieces), 2):
        pieces[i] = pieces[i].replace("|", "\\|").replace("*", "\\*").replace("<", "&lt;")
    return "".join(pieces)


def _doc(model: type[BaseModel]) -> str:
    return inspect.cleandoc(model.__doc__ or "")


def _section(section: Section, by_model: dict[type[BaseModel], Section]) -> list[str]:
    """A model's section: its heading (with the anchor links point at), its docstring, where else it is, and a
    row per key."""
    lines = [f"## {section.title} {{ #{section.anchor} }}", ""]
    if section.paths[0]:
        lines += [_doc(section.model), ""]
    others = [f"`{p}`" for p in section.paths[1:]]
    if others:
        lines += [f"Also at {', '.join(others)}.", ""]
    lines += ["| key | type | default | description |", "|---|---|---|---|"]
    for name, info in section.model.model_fields.items():
        kind = _type(info.annotation, by_model)
        bounds = _bounds(info)
        if bounds:
            kind += f" ({bounds})"
        description = _cell(info.description or "")
        lines.append(f"| `{info.alias or name}` | {kind} | {_default(info)} | {description} |")
    return [*lines, ""]


def reference(root: type[BaseModel] = StackConfig) -> str:
    """The reference page, Markdown: a section per model of the config, a row per key."""
    found = sections(root)
    by_model = {s.model: s for s in found}
    lines = [
        f"# {TITLE}",
        "",
        f"Every key a stack file may set under `{CONFIG_NAMESPACE}:` in `Pulumi.<stack>.yaml`, generated from the "
        "config models when this site is built, so it lists what the code reads. Keys are camelCase, as written "
        "here; snake_case also works. Unknown keys are errors, with a suggestion. A key's section is named by its "
        "path: `nodePools[]` is each item of the `nodePools` list, `.<name>` each value of a map.",
        "",
        "The default column is what the model holds when the key is absent: `{}` is a mapping whose keys all "
        "take their defaults, and unset means no value, in which case the description says what the stack derives "
        "(from the provider, the catalog, the pool or the jobs). For what each key does across the platform, "
        "see [Configuration](configuration.md).",
        "",
    ]
    for section in found:
        lines += _section(section, by_model)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(reference(), end="")
