"""The prebuild covers every engine a tier builds, so a CI machine's background build leaves the tiers nothing."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from components.render import render
from components.resolution import resolve_file
from components.simulate import engines, prebuild, pulumicli, simulation

REPO = Path(__file__).resolve().parents[2]


def _names(found: Iterable[engines.Engine]) -> set[str]:
    return {e.name for e in found}


@pytest.mark.parametrize("stack", sorted(REPO.glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_every_engine_a_stack_simulates_on_is_prebuilt(stack: Path) -> None:
    assert _names(simulation.engines_for(render(resolve_file(stack)))) <= _names(prebuild.ALL)


def test_the_pulumi_engines_kubectl_and_every_controller_are_prebuilt_once() -> None:
    assert _names([*pulumicli.ENGINES, pulumicli.CODEGEN, engines.KUBECTL]) <= _names(prebuild.ALL)
    assert _names([c.ENGINE for c in simulation.CONTROLLERS]) <= _names(prebuild.ALL)
    names = [e.name for e in prebuild.ALL]
    assert len(names) == len(set(names))
