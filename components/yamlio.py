"""YAML in and out at libyaml's speed: stack files read with their line marks, objects written as
PyYAML's safe dumper writes them, byte for byte."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

# libyaml's parser and emitter when PyYAML was built with them (its wheels are); the pure-Python
# ones read a stack file at ~3 ms per job.
_CLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"
_CACHE_LIMIT = 200_000


class _Unusual(Exception):
    """A value the fast paths leave to PyYAML."""


class _CachedResolver:
    """Resolves each distinct scalar's implicit tag once per process: libyaml asks the Python resolver
    about every scalar it reads or writes, and a stack repeats the same keys and values many times."""

    _resolved: dict[tuple[str, bool, bool], str]

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        """The tag of a node, as PyYAML's resolver gives it."""
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)  # type: ignore[misc]
        key = (value, bool(implicit[0]), bool(implicit[1]))
        tag = self._resolved.get(key)
        if tag is None:
            if len(self._resolved) >= _CACHE_LIMIT:
                self._resolved.clear()
            tag = self._resolved[key] = super().resolve(kind, value, implicit)  # type: ignore[misc]
        return tag


_FLOAT_1_2 = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$")
"""YAML 1.2 floats that YAML 1.1 reads as strings, such as `5e8`: Pulumi and Kubernetes read them as numbers."""


class Loader(_CachedResolver, _CLoader):  # type: ignore[misc, valid-type]
    """YAML as Pulumi reads it: YAML 1.2 floats too, so `5e8` is a number, not a string."""

    _resolved = {}


Loader.add_implicit_resolver(_FLOAT, _FLOAT_1_2, list("-+0123456789."))


def load_with_nodes(text: str) -> tuple[Any, yaml.Node | None]:
    """A single YAML document and its node tree (whose marks give each key's line), parsed once.

    Raises yaml.YAMLError (MarkedYAMLError with the line and column for syntax errors).
    """
    node = compose(text)
    return construct(node), node


def construct(node: yaml.Node | None) -> Any:
    """The value of a node tree (from compose), as PyYAML's safe loader builds it."""
    if node is None:
        return None
    loader = Loader("")
    try:
        try:
            return _construct(loader, node, set())
        except _Unusual:
            return loader.construct_document(node)
    finally:
        loader.dispose()


def compose(text: str) -> yaml.Node | None:
    """The node tree of a single YAML document (whose marks give each key's line), without building its value."""
    loader = Loader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _construct(loader: Any, node: yaml.Node, path: set[int]) -> Any:
    """The value of a node tree of plain mappings, lists and scalars, as PyYAML's safe constructor
    builds it; _Unusual for anything else (merge keys, tags, a node inside itself), which PyYAML's
    constructor then builds."""
    if isinstance(node, yaml.ScalarNode):
        return node.value if node.tag == _STR else loader.construct_object(node, deep=True)
    if id(node) in path:
        raise _Unusual
    path.add(id(node))
    try:
        if isinstance(node, yaml.MappingNode) and node.tag == _MAP:
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                    raise _Unusual
                out[_construct(loader, key_node, path)] = _construct(loader, value_node, path)
            return out
        if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
            return [_construct(loader, item, path) for item in node.value]
        raise _Unusual
    finally:
        path.discard(id(node))


class Dumper(_CachedResolver, _CDumper):  # type: ignore[misc, valid-type]
    """PyYAML's safe output for plain data: no anchors (objects share lists in memory, not in
    output), multi-line text as literal blocks, keys in the order given."""

    _resolved = {}

    def ignore_aliases(self, data: Any) -> bool:
        """Never write anchors and aliases."""
        return True

    def represent_data(self, data: Any) -> yaml.Node:
        """The node of a value: strings, mappings and lists directly, anything else as PyYAML does."""
        kind = type(data)
        if kind is str:
            return yaml.ScalarNode(_STR, data, style="|" if "\n" in data else None)
        if kind is dict:
            node = self.represent_data
            return yaml.MappingNode(_MAP, [(node(k), node(v)) for k, v in data.items()], flow_style=False)
        if kind is list:
            node = self.represent_data
            return yaml.SequenceNode(_SEQ, [node(v) for v in data], flow_style=False)
        return super().represent_data(data)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar(_STR, value, style="|" if "\n" in value else None)


Dumper.add_representer(str, _str)  # str subclasses, which represent_data hands to PyYAML
# A string such as "5e8" is quoted, so Kubernetes does not read a number where the object has text.
Dumper.add_implicit_resolver(_FLOAT, _FLOAT_1_2, list("-+0123456789."))


def dump(objects: Iterable[Any]) -> str:
    """Objects as a YAML stream, keys in the order given, multi-line strings as blocks."""
    documents = list(objects)
    if len(documents) == 1 and type(documents[0]) is dict and documents[0]:
        text = _block(documents[0])
        if text is not None:
            return text
    return yaml.dump_all(documents, Dumper=Dumper, sort_keys=False, default_flow_style=False, width=120)


# The fast path: most of a Kubernetes object is mappings, lists and short words (names, labels,
# quantities, image references). Those are written here directly, exactly as PyYAML writes them; a
# document holding anything else (text with spaces or line breaks, floats, nested lists, unusual
# characters) is written by PyYAML whole. tests/test_yamlio.py holds the two byte for byte equal.
_WORD = re.compile(r"(?!---)[A-Za-z0-9_/$-][A-Za-z0-9_./=+@:$()^\[\]'-]*")
_WORD_MAX = 100  # far below the 128 characters after which PyYAML stops writing a key plainly
_RESOLVER = Dumper(None)  # only its cached resolve() is used


def _block(document: dict[str, Any]) -> str | None:
    """A mapping as PyYAML's block style writes it, or None when something in it needs PyYAML."""
    out: list[str] = []
    try:
        _mapping(document, 0, out)
    except _Unusual:
        return None
    return "".join(out)


def _scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        text = _WORDS.get(value)
        if text is None:
            text = _WORDS[value] = _word(value)
            if len(_WORDS) > _CACHE_LIMIT:
                _WORDS.clear()
        if text is _UNUSUAL:
            raise _Unusual
        return text
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    raise _Unusual


_UNUSUAL = "\x00"
_WORDS: dict[str, str] = {}
"""Each string's text as written, or _UNUSUAL; objects repeat their words, so each is looked at once."""


def _word(value: str) -> str:
    """A string as PyYAML writes it in block style when it is one word, else _UNUSUAL."""
    if len(value) > _WORD_MAX or value[-1:] == ":" or value == "-" or not _WORD.fullmatch(value):
        return _UNUSUAL
    # A word YAML would read as something else ('true', '182', '5e8') is quoted, as PyYAML does.
    if _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR:
        return value
    return _UNUSUAL if "'" in value else f"'{value}'"


def _mapping(mapping: dict[str, Any], indent: int, out: list[str]) -> None:
    # The hot loop of a render: the words' cache is read inline rather than through _scalar for keys and strings,
    # which are nearly every scalar.
    pad = " " * indent
    words = _WORDS
    for key, value in mapping.items():
        if type(key) is not str:
            raise _Unusual
        name = words.get(key)
        if name is None:
            name = _scalar(key)
        elif name is _UNUSUAL:
            raise _Unusual
        kind = type(value)
        if kind is str:
            text = words.get(value)
            if text is None:
                text = _scalar(value)
            elif text is _UNUSUAL:
                raise _Unusual
            out.append(f"{pad}{name}: {text}\n")
        elif kind is dict:
            if value:
                out.append(f"{pad}{name}:\n")
                _mapping(value, indent + 2, out)
            else:
                out.append(f"{pad}{name}: {{}}\n")
        elif kind is list:
            if value:
                out.append(f"{pad}{name}:\n")
                _sequence(value, indent, out)  # PyYAML writes a mapping's lists without indenting them
            else:
                out.append(f"{pad}{name}: []\n")
        else:
            out.append(f"{pad}{name}: {_scalar(value)}\n")


def _sequence(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    dash = f"{pad}- "
    cut = indent + 2
    for item in items:
        kind = type(item)
        if kind is dict:
            if not item:
                out.append(f"{dash}{{}}\n")
                continue
            start = len(out)
            _mapping(item, cut, out)
            out[start] = dash + out[start][cut:]  # the first key shares the dash's line
        elif kind is list:
            raise _Unusual
        else:
            out.append(f"{dash}{_scalar(item)}\n")


def documents(text: str) -> list[Any]:
    """Every non-empty document of a YAML stream, read with libyaml where PyYAML has it (upstream CRDs are large)."""
    return [doc for doc in yaml.load_all(text, Loader=_CLoader) if doc is not None]
