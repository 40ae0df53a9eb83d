"""The plugin's inputs back into what the Python components take.

The component provider hands a front class its inputs with the schema's keys in snake_case, enums as
enum members and every number as a float (the wire has one number type). These functions turn them back
into config data as a stack file writes it (camelCase keys, enum values, whole numbers as ints), so the
config models validate them exactly as they validate a stack file, and report mistakes by config path.
"""

import typing
from enum import Enum
from typing import Any

import pulumi
from pulumi.provider.experimental.util import camel_case


def config_data(value: Any, tp: Any) -> Any:
    """`value`, typed `tp` (a generated TypedDict or part of one), as config data; free-form maps keep their
    keys."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if isinstance(value, pulumi.Output):
        return value
    if tp is Any:
        return _json_numbers(value)
    if origin in (typing.NotRequired, typing.Required) or (origin is typing.Union and type(None) in args):
        return config_data(value, next(a for a in args if a is not type(None)))
    if typing.is_typeddict(tp) and isinstance(value, dict):
        hints = tp.__annotations__  # evaluated (get_type_hints fails on pulumi.Input's forward reference)
        return {camel_case(k): config_data(v, hints.get(k, Any)) for k, v in value.items() if v is not None}
    if origin is list and isinstance(value, list):
        return [config_data(v, args[0]) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: config_data(v, args[1]) for k, v in value.items()}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float) and value.is_integer() and tp is int:
        return int(value)
    return value


def _json_numbers(value: Any) -> Any:
    """Free-form data (a DeepSpeed config, a pool) with whole numbers as ints: `"stage": 3.0` is not what the
    user wrote. (A float written as 1.0 becomes 1.)"""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_json_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_numbers(v) for k, v in value.items()}
    return value


def training_job(args: Any, tp: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A TrainingJob's inputs as (the spec's config fields, the component's keywords: pool, scheduler, queue,
    storage)."""
    fields = config_data(dict(args), tp)
    keywords = {
        "pool": fields.pop("pool"),
        "scheduler": fields.pop("schedulerType", "none"),
        "queue": fields.pop("defaultQueue", None),
        "storage": fields.pop("storage", None),
    }
    return fields, keywords


def platform(args: Any, tp: Any) -> dict[str, Any]:
    """A Platform's inputs as stack config keys."""
    return config_data(dict(args), tp)
