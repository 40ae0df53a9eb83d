"""Counts are whole numbers as written, within int32; images are references: across the whole config model."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from components.models import StackConfig, TrainingJobSpec
from components.models.base import INT32_MAX, Count, ImageRef, Number
from tests.support.refusals import refusal
from tests.test_config import stack


def _leaves(annotation: Any) -> list[Any]:
    """The types a field annotation admits, each Annotated kept whole (but one around a union)."""
    if typing.get_origin(annotation) is typing.Annotated and typing.get_origin(typing.get_args(annotation)[0]) in (
        typing.Union,
        types.UnionType,
    ):
        return _leaves(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [leaf for arg in typing.get_args(annotation) for leaf in _leaves(arg)]
    if typing.get_origin(annotation) in (list, dict, tuple):
        return [leaf for arg in typing.get_args(annotation) for leaf in _leaves(arg)]
    return [annotation]


def _fields(model: type[BaseModel], seen: set[type] | None = None) -> list[tuple[str, Any]]:
    """Every (model.field, leaf type) of the model and the models inside it; a field with a `Field(...)` default
    has its Annotated metadata moved to the field, where it is put back."""
    seen = seen if seen is not None else set()
    if model in seen:
        return []
    seen.add(model)
    out: list[tuple[str, Any]] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if field.metadata and typing.get_origin(annotation) is not typing.Annotated:
            annotation = typing.Annotated[annotation, *field.metadata]
        for leaf in _leaves(annotation):
            if isinstance(leaf, type) and issubclass(leaf, BaseModel):
                out += _fields(leaf, seen)
            elif typing.get_origin(leaf) is typing.Annotated:
                out.append((f"{model.__name__}.{name}", leaf))
                for arg in typing.get_args(leaf):
                    if isinstance(arg, type) and issubclass(arg, BaseModel):
                        out += _fields(arg, seen)
            else:
                out.append((f"{model.__name__}.{name}", leaf))
    return out


def _base(leaf: Any) -> Any:
    return typing.get_args(leaf)[0] if typing.get_origin(leaf) is typing.Annotated else leaf


def _is(leaf: Any, shared: Any) -> bool:
    """Whether a leaf type carries every validator of a shared Annotated type."""
    if typing.get_origin(leaf) is not typing.Annotated or _base(leaf) is not _base(shared):
        return False
    return all(v in typing.get_args(leaf)[1:] for v in typing.get_args(shared)[1:])


FIELDS = _fields(StackConfig) + _fields(TrainingJobSpec)


def test_every_integer_of_the_config_model_is_a_count() -> None:
    plain = sorted({name for name, leaf in FIELDS if _base(leaf) is int and not _is(leaf, Count)})
    assert plain == [], f"bare int fields read true as 1 and 2.5 as 2: type them Count ({plain})"
    assert sum(_is(leaf, Count) for _, leaf in FIELDS) >= 25, "the walk reaches the counts"


def test_every_float_of_the_config_model_is_a_number() -> None:
    plain = sorted({name for name, leaf in FIELDS if _base(leaf) is float and not _is(leaf, Number)})
    assert plain == [], f"bare float fields read true as 1.0: type them Number ({plain})"


def test_every_image_of_the_config_model_is_a_reference() -> None:
    images = [(n, leaf) for n, leaf in FIELDS if n.lower().endswith(("image", ".kubectl")) and leaf is not type(None)]
    named = sorted({n for n, leaf in images if not _is(leaf, ImageRef)})
    assert named == [], f"image fields typed plain str take any text: type them ImageRef ({named})"
    assert sum(_is(leaf, ImageRef) for _, leaf in FIELDS) >= 5


@pytest.mark.parametrize(
    ("change", "key", "says"),
    [
        ({"jobs__0__nodes": True}, "jobs[0].nodes", "true is a boolean where a whole number is meant"),
        ({"jobs__0__nodes": 2.5}, "jobs[0].nodes", "2.5 is not a whole number: write 2 or 3"),
        ({"jobs__0__nodes": "2"}, "jobs[0].nodes", "'2' is text where a whole number is meant"),
        ({"jobs__0__backoffLimit": False}, "jobs[0].backoffLimit", "false is a boolean"),
        ({"nodePools__0__maxNodes": 4.0}, "nodePools[0].maxNodes", "4 is not a whole number: write 4"),
        ({"jobs__0__nodes": 2**31}, "jobs[0].nodes", f"past {INT32_MAX}, the largest count the Kubernetes API"),
        (
            {"jobs__0__ttlSecondsAfterFinished": 10**12},
            "jobs[0].ttlSecondsAfterFinished",
            "the largest count the Kubernetes API takes (an int32)",
        ),
        ({"nodePools__0__diskSizeGb": 20000}, "nodePools[0].diskSizeGb", "less than or equal to 16384"),
        (
            {"nodePools__0__fabricCheck": {"minBusBandwidth": True}},
            "nodePools[0].fabricCheck.minBusBandwidth",
            "true is a boolean where a number is meant",
        ),
        ({"jobs__0__image": "registry.example.com/my image:v1"}, "jobs[0].image", "holds whitespace"),
        ({"jobs__0__image": "registry.example.com/Team/Train:v1"}, "jobs[0].image", "write registry.example.com/team"),
        ({"jobs__0__image": "registry.example.com/train:-v1"}, "jobs[0].image", "malformed tag '-v1'"),
        ({"jobs__0__image": "registry.example.com/train@sha256:zz"}, "jobs[0].image", "malformed digest"),
    ],
)
def test_a_count_or_image_that_is_not_one_is_refused_at_its_line(
    tmp_path: Path, change: dict[str, Any], key: str, says: str
) -> None:
    issue, line = refusal(tmp_path, stack(**change))
    assert issue.path == key
    assert says in issue.message
    assert key.rpartition(".")[2].split("[")[0] in line


def test_a_queue_quota_past_int32_is_refused() -> None:
    raw = stack(scheduler={"type": "volcano", "queues": [{"name": "research", "gpus": 2**40}]})
    with pytest.raises(ValueError, match="an int32"):
        StackConfig.model_validate(raw)


def test_yaml_integers_still_read() -> None:
    config = StackConfig.model_validate(stack(jobs__0__nodes=2, jobs__0__backoffLimit=0))
    assert (config.jobs[0].nodes, config.jobs[0].backoff_limit) == (2, 0)


JOB = {"name": "train", "image": "registry.example.com/training:v1", "command": ["train.py"]}


@given(st.booleans() | st.floats(allow_nan=False) | st.text(max_size=12) | st.integers(min_value=INT32_MAX + 1))
def test_no_count_but_a_whole_number_within_int32_is_taken(value: Any) -> None:
    with pytest.raises(ValidationError):
        TrainingJobSpec.model_validate({**JOB, "nodes": value})


@given(st.integers(min_value=1, max_value=INT32_MAX))
def test_every_whole_number_within_int32_is_a_count(value: int) -> None:
    assert TrainingJobSpec.model_validate({**JOB, "nodes": value}).nodes == value


def test_a_queue_weight_past_volcanos_bound_is_refused() -> None:
    raw = stack(scheduler={"type": "volcano", "queues": [{"name": "research", "gpus": 8, "weight": 65536}]})
    with pytest.raises(ValueError, match="65535"):
        StackConfig.model_validate(raw)
