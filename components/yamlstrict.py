"""YAML as Pulumi's reader takes a stack file: UTF-8 text, no key stated twice in one mapping, and aliases that
do not multiply the document. PyYAML keeps a repeated key's last value and expands any alias bomb; the Pulumi
CLI (gopkg.in/yaml.v3 v3.0.1, decode.go) refuses both, so offline reading refuses them too, saying where.

Aliases are limited, not refused: the Pulumi CLI reads anchors and merge keys (`<<: *defaults` across jobs is a
fair way to write a stack), so refusing them would turn away stack files `pulumi up` takes. What it refuses, a
document whose size comes almost wholly from expanding aliases, is refused here by the same rule, before anything
is expanded.

Pure: node trees and bytes in, findings out; tests/test_yamlstrict.py and the engine tier
(tests/engine/test_stack_file_reading.py) hold the two readers to the same verdicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import yaml

_MERGE = "tag:yaml.org,2002:merge"

# yaml.v3 decode.go (v3.0.1, read 2026-11-27): a document fails with "document contains excessive aliasing" once
# more than 100 of its decode operations came through an alias, after more than 1,000 operations, and the share
# of such operations passes 99% (up to 400,000 operations), falling linearly to 10% at 4,000,000.
_ALIAS_MIN, _DECODES_MIN = 100, 1000
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A key stated twice in one mapping: where the mapping is, the key, and its two lines."""

    path: tuple[str | int, ...]
    """The keys and list indexes from the document's root to the mapping holding the key."""
    key: str
    first: int
    second: int


@dataclass(frozen=True, slots=True)
class NotText:
    """Bytes that are not UTF-8 text: the line and column of the first bad byte, and whether the file is binary."""

    line: int
    column: int
    byte: int
    binary: bool

    def __str__(self) -> str:
        if self.binary:
            return (
                f"is binary, not YAML text: byte 0x{self.byte:02x} at line {self.line}, column {self.column} is not "
                "UTF-8 (a stack file is UTF-8 YAML)"
            )
        return (
            f"is not UTF-8 text: byte 0x{self.byte:02x} at line {self.line}, column {self.column} (saved as Latin-1 "
            "or Windows-1252?); save the file as UTF-8"
        )


def decode(data: bytes) -> str | NotText:
    """The text of a file's bytes (UTF-8, an optional byte-order mark dropped), or where it is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
        line_start = data.rfind(b"\n", 0, start) + 1
        return NotText(data.count(b"\n", 0, start) + 1, start - line_start + 1, data[start], b"\x00" in data[:8192])


def duplicate_keys(root: yaml.Node | None) -> list[Duplicate]:
    """Every scalar key stated twice in one mapping of a node tree (each mapping read once, aliases included), in
    document order. Keys are compared by their text, as yaml.v3 compares them."""
    if root is None or not any(_doubled(m) for m in _mappings(root)):
        return []  # the common case, found without building a path for every node
    found: list[Duplicate] = []
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            lines: dict[str, int] = {}
            children: list[tuple[yaml.Node, tuple[str | int, ...]]] = []
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key, line = key_node.value, key_node.start_mark.line + 1
                    if key in lines:
                        found.append(Duplicate(path, key, lines[key], line))
                    else:
                        lines[key] = line
                    children.append((value_node, (*path, key)))
            stack.extend(reversed(children))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, n)) for n, item in reversed(list(enumerate(node.value))))
    return sorted(found, key=lambda d: d.second)


def _mappings(root: yaml.Node) -> Iterator[yaml.MappingNode]:
    """Every mapping of a node tree, each once however often aliases repeat it."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            stack.extend(v for _, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(node.value)


def _doubled(node: yaml.MappingNode) -> bool:
    keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
    return len(set(keys)) != len(keys)


def _allowed_ratio(decodes: int) -> float:
    if decodes <= _RATIO_LOW:
        return 0.99
    if decodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


def excessive_aliasing(root: yaml.Node | None) -> yaml.Mark | None:
    """Where a document's aliases make it too large to read, by yaml.v3's rule (the mark of the alias being
    expanded), or None. Counts one decode per node as the document is read with every alias expanded, and stops at
    the first excess, so a bomb costs a few thousand steps."""
    if root is None:
        return None
    decodes = aliased = 0
    first: set[int] = set()
    # (node, inside an alias's expansion, the alias's mark)
    stack: list[tuple[yaml.Node, bool, yaml.Mark | None]] = [(root, False, None)]
    while stack:
        node, under, mark = stack.pop()
        if id(node) in first:  # a second arrival at a node is an alias to it
            under, mark = True, mark or node.start_mark
        elif not under:
            first.add(id(node))
        decodes += 1
        aliased += under
        if aliased > _ALIAS_MIN and decodes > _DECODES_MIN and aliased / decodes > _allowed_ratio(decodes):
            return mark
        if isinstance(node, yaml.MappingNode):
            merges = [v for k, v in node.value if k.tag == _MERGE]
            items = [n for k, v in node.value if k.tag != _MERGE for n in (k, v)]
            stack.extend((n, under, mark) for n in reversed(merges + items))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((n, under, mark) for n in reversed(node.value))
    return None
