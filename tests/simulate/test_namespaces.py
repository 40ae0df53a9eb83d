"""Stand-in namespaces: what the add-ons' installs would create for the stack's objects, and nothing the stack or
every cluster has."""

from __future__ import annotations

from pathlib import Path

from components.render import render
from components.simulate import namespaces
from components.validation import resolve_file
from tests.support.schemas import assert_valid

REPO = Path(__file__).resolve().parents[2]


def test_the_pack_s_namespace_gets_a_stand_in_and_the_stack_s_own_do_not() -> None:
    objects = list(render(resolve_file(REPO / "Pulumi.prod.yaml")).objects)
    found = namespaces.stand_ins(objects)
    assert [n["metadata"]["name"] for n in found] == ["monitoring"]
    assert_valid(*found)
    declared = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
    assert not declared & {n["metadata"]["name"] for n in found}


def test_built_in_namespaces_are_left_alone() -> None:
    objects = [{"kind": "DaemonSet", "metadata": {"name": "x", "namespace": "kube-system"}}]
    assert namespaces.stand_ins(objects) == []
