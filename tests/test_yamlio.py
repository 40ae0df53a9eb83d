"""YAML in and out: PyYAML's results, byte for byte and line for line, at libyaml's speed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components import yamlio
from components.render import render
from components.resolution import resolve_file

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted(REPO.glob("Pulumi.*.yaml"))


class _Reference(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """PyYAML's own safe dumper (with libyaml when built with it), set up as render documents its output."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_Reference.yaml_implicit_resolvers = {k: list(v) for k, v in yamlio.Dumper.yaml_implicit_resolvers.items()}
_Reference.add_representer(
    str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style="|" if "\n" in v else None)
)


class _ReferenceLoader(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader with the YAML 1.2 floats Pulumi reads."""


_ReferenceLoader.yaml_implicit_resolvers = {k: list(v) for k, v in yamlio.Loader.yaml_implicit_resolvers.items()}


def reference_dump(objects: list[Any]) -> str:
    return yaml.dump_all(objects, Dumper=_Reference, sort_keys=False, default_flow_style=False, width=120)


def marks(node: yaml.Node | None) -> list[tuple[str, int, int]]:
    """Every node's tag, line and column, depth first."""
    if node is None:
        return []
    out = [(node.tag, node.start_mark.line, node.start_mark.column)]
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out += marks(key) + marks(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            out += marks(item)
    return out


def test_libyaml_does_the_work() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml; the pure-Python classes are used")
    assert issubclass(yamlio.Loader, yaml.CSafeLoader) and issubclass(yamlio.Dumper, yaml.CSafeDumper)


@pytest.mark.parametrize("stack", STACKS, ids=lambda p: p.stem)
def test_every_rendered_object_is_written_as_pyyaml_writes_it(stack: Path) -> None:
    objects = list(render(resolve_file(stack)).objects)
    for obj in objects:
        assert yamlio.dump([obj]) == reference_dump([obj])


@pytest.mark.parametrize("stack", STACKS, ids=lambda p: p.stem)
def test_stack_files_read_as_pyyaml_reads_them_with_the_same_lines(stack: Path) -> None:
    text = stack.read_text()
    data, node = yamlio.load_with_nodes(text)
    assert data == yaml.load(text, Loader=_ReferenceLoader)
    assert marks(node) == marks(yaml.compose(text, Loader=_ReferenceLoader))


def test_yaml_1_2_floats_and_yaml_1_1_words_read_as_before() -> None:
    data, _ = yamlio.load_with_nodes("a: 5e8\nb: 1.5e-3\nc: yes\nd: '5e8'\ne: 0o17\nf: 1_000\n")
    assert data == {"a": 5e8, "b": 1.5e-3, "c": True, "d": "5e8", "e": "0o17", "f": 1000}


def test_strings_that_read_as_numbers_in_yaml_1_2_are_quoted() -> None:
    assert yamlio.dump([{"NCCL_BUFFSIZE": "5e8", "n": 5e8}]) == "NCCL_BUFFSIZE: '5e8'\nn: 500000000.0\n"


def test_values_that_look_like_other_types_stay_strings_through_a_round_trip() -> None:
    tricky = ["true", "no", "null", "~", "1", "1.0", "5e8", "0x1F", "2001-12-14", "-", "---", "...", "", " x", "a: b"]
    obj = {"data": {value or "empty": value for value in tricky}, "list": tricky}
    text = yamlio.dump([obj])
    assert text == reference_dump([obj])
    assert yamlio.load_with_nodes(text)[0] == obj


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(["true", "on", "null", "1e3", "-", "a: b", "#x", "line\nbreak", "0755", "2024-01-01", "é"]),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), documents, max_size=5))
def test_any_plain_data_is_written_as_pyyaml_writes_it_and_reads_back(obj: dict[str, Any]) -> None:
    text = yamlio.dump([obj])
    assert text == reference_dump([obj])
    assert yaml.safe_load(text) == obj


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), documents, max_size=5))
def test_any_document_reads_as_pyyaml_reads_it_with_the_same_marks(obj: dict[str, Any]) -> None:
    text = yaml.safe_dump(obj, sort_keys=False)
    data, node = yamlio.load_with_nodes(text)
    assert data == yaml.load(text, Loader=_ReferenceLoader)
    assert marks(node) == marks(yaml.compose(text, Loader=_ReferenceLoader))


words = st.one_of(
    st.from_regex(r"[A-Za-z0-9_/$:.-][A-Za-z0-9_./=+@:$()^#,-]{0,30}", fullmatch=True),
    st.sampled_from(["-", "--", "---", "---x", "-x", "--nnodes=8", "$(MASTER_ADDR):$(MASTER_PORT)", "^ucx", "-np"]),
    st.sampled_from(["true", "false", "yes", "on", "null", "182", "5e8", "1_000", "12:30", "2001-12-14", "0x1F"]),
    st.sampled_from(["8Gi", "5120Mi", "nvidia.com/gpu", "registry.example.com/train:v1", "a:", "x" * 101]),
)
scalars_of_words = st.one_of(words, st.none(), st.booleans(), st.integers(min_value=-(10**12), max_value=10**12))


def objects_of_words(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    """Mappings of words, nested `depth` deep, with lists of words or mappings: what objects are made of."""
    if depth == 0:
        return st.dictionaries(words, scalars_of_words, max_size=4)
    inner = objects_of_words(depth - 1)
    values = st.one_of(scalars_of_words, inner, st.lists(st.one_of(scalars_of_words, inner), max_size=3))
    return st.dictionaries(words, values, min_size=1, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects_of_words(3))
def test_objects_of_words_are_written_by_the_fast_path_as_pyyaml_writes_them(obj: dict[str, Any]) -> None:
    assert yamlio.dump([obj]) == reference_dump([obj])
    assert yaml.load(yamlio.dump([obj]), Loader=_ReferenceLoader) == obj


def test_most_rendered_objects_take_the_fast_path() -> None:
    objects = list(render(resolve_file(REPO / "Pulumi.prod.yaml")).objects)
    fast = [o for o in objects if yamlio._block(o) is not None]
    # prod's MPI TrainJob runs on EFA, whose mpirun flags (`^ucx`, `tcp,self`) PyYAML writes; so are Volcano Queues,
    # whose pulumi.com/waitFor JSONPath (`{.status.state}`) must be quoted.
    assert {o["kind"] for o in fast} >= {"TrainJob", "NodePool", "EC2NodeClass", "Namespace"}


def test_anchors_merge_keys_and_tags_read_as_pyyaml_reads_them() -> None:
    text = "base: &base {gpus: 8, zone: us-east-1a}\npools:\n- {<<: *base, name: a}\n- *base\nn: !!str 5\nt: 2026-12-01T11:30:00Z\n"
    assert yamlio.load_with_nodes(text)[0] == yaml.load(text, Loader=_ReferenceLoader)
    recursive = "a: &a [1, *a]\n"
    data = yamlio.load_with_nodes(recursive)[0]
    assert data["a"][1] is data["a"], "a list inside itself is left to PyYAML's constructor"
