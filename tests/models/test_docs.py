"""Every config field documents itself: what it is, and its default or that it is required."""

from __future__ import annotations

import inspect

import pytest
from pydantic import BaseModel

import components.models as models
from components.models.base import Spec


def _specs() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    todo = [m for m in vars(models).values() if inspect.isclass(m) and issubclass(m, Spec) and m is not Spec]
    while todo:
        model = todo.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for field in model.model_fields.values():
            for arg in _classes(field.annotation):
                if issubclass(arg, Spec):
                    todo.append(arg)
    return sorted(found.values(), key=lambda m: m.__name__)


def _classes(annotation: object) -> list[type]:
    out = [annotation] if inspect.isclass(annotation) else []
    for arg in getattr(annotation, "__args__", ()) or ():
        out += _classes(arg)
    return out


@pytest.mark.parametrize("model", _specs(), ids=lambda m: m.__name__)
def test_every_field_states_its_default_or_that_it_is_required(model: type[BaseModel]) -> None:
    assert model.__doc__, f"{model.__name__} has no docstring"
    for name, field in model.model_fields.items():
        doc = field.description or ""
        assert doc, f"{model.__name__}.{name} has no docstring"
        if field.is_required():
            assert "Required" in doc or "Discriminator" in doc, f"{model.__name__}.{name}: say it is required"
        else:
            # Optional in the schema but required in some cases ("Required for macvlan") is stated too.
            assert "Default" in doc or "Required" in doc, f"{model.__name__}.{name}: state the default"
