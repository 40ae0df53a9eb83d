"""components/immutable.py against the real CRDs: every field their transition rules freeze is replaced on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from components.immutable import IMMUTABLE
from components.render import render
from components.resolution import resolve_file
from tests.support.stacks import STACK_FILES

pytestmark = pytest.mark.simulate


def _frozen(schema: dict[str, Any], path: str = "") -> Iterator[str]:
    """Paths (dotted, arrays elided) whose schema carries an unconditional `self == oldSelf` rule."""
    for rule in schema.get("x-kubernetes-validations") or []:
        if rule.get("rule", "").replace(" ", "") == "self==oldSelf":
            yield path.lstrip(".")
    for name, sub in (schema.get("properties") or {}).items():
        yield from _frozen(sub, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _frozen(schema[key], path)


def _emitted() -> set[tuple[str, str]]:
    return {(o["apiVersion"], o["kind"]) for s in STACK_FILES for o in render(resolve_file(s)).objects}


def test_every_field_a_crd_freezes_is_replaced_on(definitions: list[dict[str, Any]]) -> None:
    emitted = _emitted() | set(IMMUTABLE)
    missing = []
    for crd in definitions:
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            api_version = f"{group}/{version['name']}"
            if (api_version, kind) not in emitted:
                continue
            covered = IMMUTABLE.get((api_version, kind), ())
            for path in _frozen(version["schema"]["openAPIV3Schema"]):
                if not any(path == c or path.startswith(c + ".") for c in covered):
                    missing.append(f"{kind} {api_version}: {path}")
    assert not missing, "frozen by the CRD but updated in place by Pulumi: add to components/immutable.py"


def test_the_check_finds_a_frozen_field() -> None:
    schema = {
        "properties": {"spec": {"properties": {"a": {"x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}
    }
    assert list(_frozen(schema)) == ["spec.a"]
