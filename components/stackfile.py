"""What a stack file is, read as the Pulumi CLI reads it: UTF-8 YAML with no key twice and no alias bomb
(components/yamlstrict.py), whose `config:` keys in the gpu-training namespace (or bare, the project's) are the
stack's; keys Pulumi would not hand the stack (a misspelt namespace, keys outside `config:`) are named."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from components import yamlio, yamlstrict
from components.errors import ConfigError, Issue, join_path
from components.models import CONFIG_NAMESPACE, StackConfig


def config_name(key: Any) -> str | None:
    """The name of a stack file's config key in the gpu-training namespace (`cluster` of `gpu-training:cluster`),
    or None. A key without a namespace is the project's: Pulumi reads `cluster:` as `gpu-training:cluster`."""
    namespace, colon, name = str(key).partition(":")
    if not colon:
        return namespace or None
    return name if namespace == CONFIG_NAMESPACE and name else None


def misplaced(document: dict[Any, Any], node: yaml.Node | None, raw: Mapping[str, Any]) -> list[Issue]:
    """Keys meant for the stack that Pulumi would not give it: under a misspelt namespace (`gpu-trainng:cluster`),
    stated both bare and namespaced, or outside `config:` (which Pulumi ignores)."""
    issues: list[Issue] = []
    config = child(node, "config")
    lines = {str(k.value): k.start_mark.line + 1 for k, _ in (config.value if config is not None else [])}
    named: dict[str, str] = {}
    for key in document.get("config") or {}:
        namespace, colon, name = str(key).partition(":")
        if (
            colon
            and namespace != CONFIG_NAMESPACE
            and difflib.get_close_matches(namespace, [CONFIG_NAMESPACE], cutoff=0.85)
        ):
            issues.append(
                Issue(
                    f"config.{key}",
                    f"unknown namespace '{namespace}' (this stack reads only {CONFIG_NAMESPACE}:<key>); did you mean "
                    f"'{CONFIG_NAMESPACE}:{name}'?",
                    line=lines.get(str(key)),
                )
            )
        name = config_name(key)
        if name is not None and name in named:
            issues.append(
                Issue(
                    name,
                    f"stated twice, as '{named[name]}' and '{key}' (lines {lines.get(named[name])} and "
                    f"{lines.get(str(key))}): Pulumi keeps one silently; state it once",
                    line=lines.get(str(key)),
                )
            )
        elif name is not None:
            named[name] = str(key)
    known = StackConfig.config_keys()
    outside = [str(k) for k in document if k != "config" and config_name(k) in known]
    if "cluster" not in raw and outside:
        top = {str(k.value): k.start_mark.line + 1 for k, _ in node.value} if isinstance(node, yaml.MappingNode) else {}
        issues.append(
            Issue(
                "config",
                f"the stack's keys are not under `config:` (found at the top level: {', '.join(outside[:5])}), "
                "and Pulumi reads only what is under it: indent them under a `config:` line",
                line=top.get(outside[0]),
            )
        )
    elif not raw and not issues:
        found = ", ".join(str(k) for k in list(document.get("config") or {})[:5]) or "nothing"
        issues.append(
            Issue(
                "cluster",
                f"is required, and the stack file's config has no {CONFIG_NAMESPACE} keys (found: {found}): this "
                f"stack's keys are {CONFIG_NAMESPACE}:<key>, such as {CONFIG_NAMESPACE}:cluster",
                line=config.start_mark.line + 1 if config is not None else None,
            )
        )
    return issues


def read_text(path: Path) -> str:
    """A YAML file's text; ConfigError naming the line of the first byte that is not UTF-8."""
    try:
        text = yamlstrict.decode(path.read_bytes())
    except OSError as exc:
        raise ConfigError(Issue("", f"cannot be read: {exc.strerror or exc}", str(path))) from None
    if isinstance(text, yamlstrict.NotText):
        raise ConfigError(Issue("", f"the file {text}", str(path), text.line))
    return text


def parse_yaml(text: str, source: str, *, stack_file: bool = False) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree (whose marks give the lines); ConfigError naming the line. A key stated
    twice or aliases that multiply the document are refused, as the Pulumi CLI refuses them."""
    try:
        node = yamlio.compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        column = f", column {mark.column + 1}" if mark else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(Issue("", f"YAML syntax error{column}: {problem}", source, line)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(Issue("", f"YAML error: {exc}", source)) from None
    except RecursionError:
        raise ConfigError(Issue("", "YAML nested too deeply to read", source)) from None
    anchor = yamlstrict.excessive_aliasing(node) if "*" in text else None  # no alias without a `*`
    if anchor is not None:
        raise ConfigError(
            Issue(
                "",
                f"the YAML aliases of the anchor at line {anchor.line + 1} expand the document far past what is "
                "written (an alias bomb?); the Pulumi CLI refuses it too ('document contains excessive aliasing'): "
                "write the values out, or alias only small mappings with `<<: *name`",
                source,
                anchor.line + 1,
            )
        )
    doubled = yamlstrict.duplicate_keys(node)
    if doubled:
        raise ConfigError(_duplicate_issue(d, source, stack_file=stack_file) for d in doubled)
    try:
        return yamlio.construct(node), node
    except yaml.YAMLError as exc:
        raise ConfigError(Issue("", f"YAML error: {exc}", source)) from None
    except RecursionError:
        raise ConfigError(Issue("", "YAML nested too deeply to read", source)) from None


def _duplicate_issue(duplicate: yamlstrict.Duplicate, source: str, *, stack_file: bool) -> Issue:
    """A key stated twice, at the config path it would have had (`jobs[0].nodes`) when it is in the stack's
    namespace."""
    parts: tuple[str | int, ...] = (*duplicate.path, duplicate.key)
    if stack_file and len(parts) >= 2 and parts[0] == "config":
        namespace, _, name = str(parts[1]).partition(":")
        if namespace == CONFIG_NAMESPACE and name:
            parts = (name, *parts[2:])
    where = (
        f"twice on line {duplicate.first}"
        if duplicate.first == duplicate.second
        else f"twice (lines {duplicate.first} and {duplicate.second})"
    )
    message = (
        f"'{duplicate.key}' is stated {where}: YAML would keep only "
        "the second value and the Pulumi CLI refuses the file; state it once, merging the two"
    )
    return Issue(join_path(*parts), message, source, duplicate.second)


def child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node of `key` in a mapping node, or None."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                return value_node
    return None
