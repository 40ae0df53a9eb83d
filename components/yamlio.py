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
_CACHE_LIMIT = 200_000


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
    loader = Loader(text)
    try:
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()


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
    return yaml.dump_all(list(objects), Dumper=Dumper, sort_keys=False, default_flow_style=False, width=120)
