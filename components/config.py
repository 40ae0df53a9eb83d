"""Load a stack's configuration from YAML or Pulumi config into a validated StackConfig."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Discriminator, Tag, ValidationError

from components import sealing, yamlio
from components.errors import ConfigError, Issue, did_you_mean, join_path
from components.models import StackConfig, TrainingJobSpec
from components.models.base import split_at
from components.models.envsource import Sealed
from components.stackfile import child, config_name, misplaced, parse_yaml, read_text


def load_stack_file(path: str | Path) -> StackConfig:
    """The validated config of a Pulumi.<stack>.yaml (or any file of that shape)."""
    path = Path(path)
    raw, lines = read_stack_file(path)
    return parse_stack(raw, source=str(path), lines=lines, base_dir=path.parent)


def read_stack_file(path: Path) -> tuple[dict[str, Any], LineIndex]:
    """The `gpu-training:` keys of a stack file, and the line of every config path in it (indexed when first
    asked, which only an error does)."""
    if not path.is_file():
        raise ConfigError(f"no such stack file: {path} (run from the project folder, or pass --config FILE)")
    text = read_text(path)
    document, node = parse_yaml(text, str(path), stack_file=True)
    if document is None:
        document = {}
    if not isinstance(document, dict) or not isinstance(document.get("config", {}), dict):
        raise ConfigError(Issue("config", "a stack file is a mapping with a `config:` mapping inside", str(path), 1))
    raw: dict[str, Any] = {}
    for key, value in (document.get("config") or {}).items():
        name = config_name(key)
        if name is not None:
            raw[name] = value
    astray = misplaced(document, node, raw)
    if astray:
        raise ConfigError(Issue(i.path, i.message, str(path), i.line) for i in astray)
    return raw, LineIndex(text)


class LineIndex(MutableMapping[str, int]):
    """Config path (`jobs[3].image`) -> its line in a stack file. Walking a large file's node tree for every
    path cost a tenth of a render that found nothing to report, so the tree is composed again from the text and
    walked the first time a line is asked for, when an error names one. Set lines come before indexed ones."""

    def __init__(self, text: str) -> None:
        self._text: str | None = text
        self._lines: dict[str, int] = {}

    def _indexed(self) -> dict[str, int]:
        if self._text is not None:
            root = yamlio.compose(self._text)
            # A top-level key that is missing is located at the `config:` line that should hold it.
            lines: dict[str, int] = {"": _key_line(root, "config") or 1}
            config_node = child(root, "config")
            if config_node is not None:
                for key_node, value_node in config_node.value:
                    name = config_name(key_node.value)
                    if name is not None:
                        lines[name] = key_node.start_mark.line + 1
                        _index_lines(value_node, name, lines)
            self._lines = {**lines, **self._lines}
            self._text = None
        return self._lines

    def __getitem__(self, path: str) -> int:
        return self._indexed()[path]

    def __setitem__(self, path: str, line: int) -> None:
        self._indexed()[path] = line

    def __delitem__(self, path: str) -> None:
        del self._indexed()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._indexed())

    def __len__(self) -> int:
        return len(self._indexed())

    def __contains__(self, path: object) -> bool:
        return path in self._indexed()


def parse_stack(
    raw: Mapping[str, Any],
    *,
    source: str | None = None,
    lines: MutableMapping[str, int] | None = None,
    base_dir: Path | None = None,
) -> StackConfig:
    """A StackConfig from config keys (camelCase, as Pulumi config gives them); ConfigError otherwise."""
    lines = lines if lines is not None else {}
    issues: list[Issue] = sealing.misplaced(raw.get("jobs"))
    data = _unwrap_secrets(dict(raw))
    known = StackConfig.config_keys()
    names = set(known) | set(StackConfig.model_fields)
    misspelt: dict[str, str] = {}
    for key in [k for k in data if k not in names]:
        issues.append(Issue(key, _unknown_key(key, known)))
        misspelt.update((meant, key) for meant in difflib.get_close_matches(key, known, n=1))
        del data[key]
    if "jobs" in data:
        data["jobs"], job_issues = _expand_job_files(data["jobs"], base_dir or Path.cwd(), lines)
        issues.extend(job_issues)
    try:
        config = StackConfig.model_validate(data)
    except ValidationError as exc:
        # A key refused before validation (a misplaced secret) is not judged again: its value's errors echo it.
        refused = {issue.path for issue in issues}
        found = _after_misspellings(validation_issues(exc, StackConfig), misspelt)
        issues.extend(issue for issue in found if issue.path not in refused)
    else:
        if not issues:
            return config
    error = ConfigError(issues)
    raise error.located(source, lines) if source else error


def parse_job(data: Mapping[str, Any], *, path: str = "") -> TrainingJobSpec:
    """A TrainingJobSpec from config data; ConfigError naming `path` otherwise."""
    try:
        return TrainingJobSpec.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(validation_issues(exc, TrainingJobSpec, prefix=path)) from None


def validation_issues(exc: ValidationError, model: type[BaseModel], prefix: str = "") -> list[Issue]:
    """pydantic's errors as config issues, each with its config path and a readable message. A required key's
    absence is an echo of a misspelling of it beside it (`regin` for `region`), which names the fix."""
    issues: list[Issue] = []
    misspelt: dict[str, str] = {}  # the config path meant -> the misspelt key's path
    for error in exc.errors(include_url=False):
        parts, owner = _config_path(model, tuple(error["loc"]))
        path = join_path(prefix, *parts)
        kind = error["type"]
        message = str(error["msg"])
        value = error.get("input")
        if kind == "value_error":
            field, message = split_at(message.removeprefix("Value error, "))
            if field:
                path = join_path(path, field)
        elif kind == "extra_forbidden":
            known = _aliases(owner) if owner is not None else ()
            message = _unknown_key(str(parts[-1]) if parts else "", known)
            meant = difflib.get_close_matches(str(parts[-1]), known, n=1) if parts else []
            if meant:
                misspelt[join_path(prefix, *parts[:-1], meant[0])] = path
        elif kind == "missing":
            message = "is required" + _describe(owner, parts)
        elif kind == "union_tag_invalid":
            tag = error["ctx"]["discriminator"].strip("'")
            path = join_path(path, tag)
            message = f"must be one of {error['ctx']['expected_tags']} (got '{error['ctx']['tag']}')"
        elif kind == "union_tag_not_found":
            tag = error["ctx"]["discriminator"].strip("'")
            path = join_path(path, tag)
            message = "is required" + _describe(owner, [*parts, tag])
        elif kind == "literal_error":
            message = f"must be one of {error['ctx']['expected']} (got {_show(value)})"
        elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
            message = f"{message.replace('Input should be', 'must be')} (got {_show(value)})"
        elif kind == "string_pattern_mismatch":
            message = f"{_show(value)} does not match the pattern {error['ctx']['pattern']}"
        else:
            message = f"{message.replace('Input should be', 'must be')} (got {_show(value)})"
        issues.append(Issue(path, message))
    return _after_misspellings(issues, misspelt)


def _after_misspellings(issues: list[Issue], misspelt: Mapping[str, str]) -> list[Issue]:
    """The issues, each "is required" of a key misspelt beside it marked as that misspelling's echo."""
    return [
        replace(i, after=(misspelt[i.path],)) if i.path in misspelt and i.message.startswith("is required") else i
        for i in issues
    ]


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip()
    text = text.removesuffix("\n...").strip()
    return text if len(text) <= 80 else text[:77] + "..."


def _unknown_key(key: str, known: tuple[str, ...]) -> str:
    return f"unknown key '{key}'; {did_you_mean(key, known)}valid keys here: {', '.join(known)}"


def _aliases(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(field.alias or name for name, field in model.model_fields.items())


_FIRST_SENTENCE = re.compile(r"(?<!e\.g)(?<!i\.e)\. ")


def _describe(owner: type[BaseModel] | None, parts: list[str | int]) -> str:
    if owner is None or not parts:
        return ""
    for name, field in owner.model_fields.items():
        if parts[-1] in (name, field.alias) and field.description:
            return f": {_FIRST_SENTENCE.split(field.description)[0].rstrip('.')}"
    return ""


def _config_path(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[list[str | int], type[BaseModel] | None]:
    """The config path of a pydantic error location, without union tags, and the model owning its end."""
    parts: list[str | int] = []
    current: Any = model
    owner: type[BaseModel] | None = model
    i = 0
    while i < len(loc):
        item = loc[i]
        kind = _strip(current)
        if isinstance(kind, type) and issubclass(kind, BaseModel) and isinstance(item, str):
            owner = kind
            field = next((f for n, f in kind.model_fields.items() if item in (n, f.alias)), None)
            parts.append(item)
            if field is None:
                current = None
            elif field.discriminator and i + 1 < len(loc):
                tag = loc[i + 1]
                current = next(
                    (
                        m
                        for m in typing.get_args(_strip(field.annotation))
                        if tag in typing.get_args(m.model_fields[str(field.discriminator)].annotation)
                    ),
                    None,
                )
                i += 1
            else:
                current = field.annotation
        elif (member := _tagged(current, item)) is not None:
            current = member  # a tagged union's tag (`env` values) is no key the user wrote
        else:
            parts.append(item)
            args = typing.get_args(kind)
            current = args[-1] if args else None
        i += 1
    return parts, owner


def _tagged(annotation: Any, tag: Any) -> Any:
    """The member of a union tagged by a Discriminator that `tag` names; None when `annotation` is no such union."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return None
    union, *meta = typing.get_args(annotation)
    if not any(isinstance(m, Discriminator) for m in meta):
        return None
    for member in typing.get_args(union):
        if any(isinstance(m, Tag) and m.tag == tag for m in typing.get_args(member)[1:]):
            return member
    return None


def _strip(annotation: Any) -> Any:
    """The type inside Annotated[...] and Optional[...]."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation


def _unwrap_secrets(value: Any) -> Any:
    """Replace Pulumi `{secure: ...}` values (unreadable offline) with a secret of unknown value, which reads as
    "[secret]" where text is expected."""
    if isinstance(value, dict):
        if len(value) == 1 and "secure" in value:
            return Sealed()
        return {k: _unwrap_secrets(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap_secrets(v) if isinstance(v, dict | list) else v for v in value]
    return value


def _expand_job_files(jobs: Any, base_dir: Path, lines: MutableMapping[str, int]) -> tuple[Any, list[Issue]]:
    """Inline the jobs given as paths to YAML files (one job or a list of jobs per file)."""
    if not isinstance(jobs, list):
        return jobs, []
    out: list[Any] = []
    issues: list[Issue] = []
    for index, item in enumerate(jobs):
        if not isinstance(item, str):
            out.append(item)
            continue
        try:
            file = (base_dir / item).resolve()
            found = file.is_file()
        except (OSError, ValueError):  # a name no file system takes (a NUL byte, too long)
            found = False
        if not found:
            issues.append(Issue(f"jobs[{index}]", f"no such job file: {item} (paths are relative to the stack file)"))
            continue
        try:
            loaded, _ = parse_yaml(read_text(file), str(file))
        except ConfigError as exc:
            issues.extend(exc.issues)
            continue
        for job in loaded if isinstance(loaded, list) else [loaded]:
            lines.setdefault(f"jobs[{len(out)}]", lines.get(f"jobs[{index}]", 0))
            out.append(job)
    return out, issues


def _key_line(node: yaml.Node | None, key: str) -> int | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if key_node.value == key:
                return int(key_node.start_mark.line) + 1
    return None


def _index_lines(node: yaml.Node, path: str, lines: dict[str, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            child = f"{path}.{key_node.value}"
            lines[child] = key_node.start_mark.line + 1
            _index_lines(value_node, child, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = f"{path}[{index}]"
            lines[child] = item.start_mark.line + 1
            _index_lines(item, child, lines)
