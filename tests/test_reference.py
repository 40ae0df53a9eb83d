"""The configuration reference is generated from the config models: every key of every model a stack file can reach
is in it, under the path a stack file writes it at, and the page is the same whenever it is made."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from components.models import StackConfig
from components.reference import TITLE, reference, sections

REPO = Path(__file__).resolve().parents[1]
PAGE = reference()


def _models(annotation: object, path: str) -> Iterator[tuple[type[BaseModel], str]]:
    """The models an annotation holds, at the config path a stack file writes them at (`[]` an item of a list,
    `.<name>` a value of a map), walked apart from the generator's own walk."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation, path
        return
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list:
        yield from _models(args[0], f"{path}[]")
    elif origin is dict:
        yield from _models(args[1], f"{path}.<name>")
    elif origin in (typing.Union, types.UnionType, typing.Annotated):
        for arg in args if origin is not typing.Annotated else args[:1]:
            yield from _models(arg, path)


def _reachable() -> Iterator[tuple[type[BaseModel], str]]:
    """Every (model, path) reachable from the stack config, the root at the path ''."""
    todo: list[tuple[type[BaseModel], str]] = [(StackConfig, "")]
    seen: set[tuple[type[BaseModel], str]] = set()
    while todo:
        model, path = todo.pop()
        if (model, path) in seen:
            continue
        seen.add((model, path))
        yield model, path
        for name, info in model.model_fields.items():
            key = info.alias or name
            todo.extend(_models(info.annotation, f"{path}.{key}" if path else key))


def _page_sections() -> dict[str, list[list[str]]]:
    """Config path -> the keys of each section at that path, read from the page: a section's heading names its
    path (the root's is the anchor `stack`), `Also at` its other paths, and its table a row per key."""
    found: dict[str, list[list[str]]] = {}
    for block in PAGE.split("\n## ")[1:]:
        heading = block.splitlines()[0]
        paths = [""] if heading.endswith("{ #stack }") else [re.match(r"`([^`]+)`", heading).group(1)]
        also = re.search(r"^Also at (.*)\.$", block, re.M)
        if also:
            paths += re.findall(r"`([^`]+)`", also.group(1))
        keys = re.findall(r"^\| `([^`]+)` \|", block, re.M)
        for path in paths:
            found.setdefault(path, []).append(keys)
    return found


def test_every_key_of_every_model_reachable_from_the_stack_config_is_in_the_reference() -> None:
    page = _page_sections()
    missing = []
    for model, path in _reachable():
        keys = [info.alias or name for name, info in model.model_fields.items()]
        if keys not in page.get(path, []):
            missing.append(f"{path or '(the stack)'}: {model.__name__} {keys}")
    assert not missing, "models whose keys the reference does not list at their path:\n" + "\n".join(missing)


def test_the_walk_reaches_deep_keys_and_every_union_member() -> None:
    page = _page_sections()
    assert any("factor" in keys for keys in page["nodePools[].fabricCheck.sizes"])
    assert any("reboot" in keys for keys in page["health.repair"])
    assert len(page["cluster"]) == 3, "aws, gcp and existing clusters each have their section"
    assert any("optional" in keys for keys in page["jobs[].env.<name>.configMapKeyRef"])


def test_every_key_has_a_description_in_the_reference() -> None:
    """Each field's attribute docstring is its description; a key without one would be a blank cell."""
    bare = [
        f"{path}.{info.alias or name}"
        for model, path in _reachable()
        for name, info in model.model_fields.items()
        if not (info.description or "").strip()
    ]
    assert not bare, f"config keys without a description: {', '.join(bare)}"
    row = next(line for line in PAGE.splitlines() if line.startswith("| `defaultLauncher` |"))
    assert "trainjob \\| pytorch" in row, "a description's `|` is escaped, so it stays in its cell"


def test_sections_have_unique_anchors_and_name_their_model() -> None:
    found = sections()
    anchors = [s.anchor for s in found]
    assert len(anchors) == len(set(anchors))
    assert len({s.model for s in found}) == len(found), "each model has one section"
    assert PAGE.startswith(f"# {TITLE}\n")


def test_the_reference_is_the_same_every_time_it_is_made() -> None:
    """Deterministic: the same in this process and in others with different hash seeds (no set order leaks)."""
    assert reference() == PAGE
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        made = subprocess.run(
            [sys.executable, "-m", "components.reference"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert made.stdout == PAGE
