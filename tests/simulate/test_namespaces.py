"""Stand-in namespaces: those the stack's add-ons and monitoring provide, and never one the stack makes itself."""

from __future__ import annotations

from pathlib import Path

from components.render import render
from components.resolution import resolve_file
from components.simulate import namespaces
from tests.addons.stacks import stack_file
from tests.support.schemas import assert_valid

REPO = Path(__file__).resolve().parents[2]


def test_the_pack_s_namespace_gets_a_stand_in_and_the_stack_s_own_do_not() -> None:
    rendered = render(resolve_file(REPO / "Pulumi.prod.yaml"))
    found = namespaces.stand_ins(rendered)
    assert [n["metadata"]["name"] for n in found] == ["monitoring"], "kube-prometheus-stack's"
    assert_valid(*found)
    declared = {o["metadata"]["name"] for o in rendered.objects if o["kind"] == "Namespace"}
    assert declared and not declared & {n["metadata"]["name"] for n in found}


def test_your_prometheus_s_namespace_is_provided_too() -> None:
    found = namespaces.stand_ins(render(resolve_file(REPO / "Pulumi.dev.yaml")))
    assert [n["metadata"]["name"] for n in found] == ["monitoring"]


def test_a_namespace_nothing_provides_gets_none() -> None:
    rendered = render(stack_file("dev", monitoring={}))
    assert namespaces.stand_ins(rendered) == []
    assert "kube-system" not in namespaces.provided(render(resolve_file(REPO / "Pulumi.prod.yaml")))
