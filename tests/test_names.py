"""Resource names are state: every URN a stack's state may hold is pinned, and the program must still answer
to it, by its URN or through an alias, as the engine matches old state (aliases given, and aliases inherited
from a parent's older URN). A rename without an alias, or a resource added, shows up here.

After an intended change, regenerate with UPDATE_NAMES=1 python -m pytest tests/test_names.py: the file keeps
the older URNs the program still answers to (through aliases) and adds the new ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import stacks
from tests.support.pulumi_mocks import RecordingMonitor, Registration, run, use_stack

REPO = Path(__file__).resolve().parents[1]
NAMES = Path(__file__).resolve().parent / "data" / "names"
RETIRED = {
    "tls:index/privateKey:PrivateKey": "the fabric check's ssh key is made in the program since 0.3.0 (no TLS "
    "provider to install); `pulumi up` deletes the old key resource, which lives only in the state",
}
"""Types of resources that releases made and this one no longer does, and why deleting them on upgrade is safe."""


def retired(urn: str) -> bool:
    """Whether `urn` names a resource of a retired type, which an upgrade deletes on purpose."""
    return any(f"${type_}::" in urn or urn.startswith(f"{type_}::") for type_ in RETIRED)


def engine_urns(registrations: list[Registration]) -> dict[str, str]:
    """Each registration's URN as the engine makes it (type chain and name): the parent's whole type chain, and
    no root stack type. Pulumi's mock monitor puts only the parent's own type there, the stack's included."""
    urns: dict[str, str] = {}
    for r in registrations:
        parent = urns.get(r.parent, "")
        urns[r.urn] = f"{_type_chain(parent)}${r.type}::{r.name}" if parent else f"{r.type}::{r.name}"
    return urns


def _type_chain(urn: str) -> str:
    return urn.rsplit("::", 1)[0]


def _alias(registration: Registration, parent: str, spec: object, urns: dict[str, str]) -> str:
    """The URN an alias spec names (the engine's collapseAliasToUrn)."""
    name = getattr(spec, "name", "") or registration.name
    type_ = getattr(spec, "type", "") or registration.type
    if getattr(spec, "noParent", False):
        parent = ""
    elif getattr(spec, "parentUrn", ""):
        parent = urns.get(spec.parentUrn, "")
    chain = f"{_type_chain(parent)}${type_}" if parent else type_
    return f"{chain}::{name}"


def names(registrations: list[Registration]) -> dict[str, list[str]]:
    """Every URN each registration answers to, by its own: that URN, the aliases given, and the aliases it
    inherits from each older URN of its parent (the engine's inheritedChildAlias)."""
    urns = engine_urns(registrations)
    found: dict[str, list[str]] = {}
    for r in registrations:
        urn, parent = urns[r.urn], urns.get(r.parent, "")
        own = [
            urn,
            *(_alias(r, parent, a.spec, urns) if a.HasField("spec") else a.urn.split("::", 2)[2] for a in r.aliases),
        ]
        for old_parent in found.get(parent, [])[1:]:
            parent_name, old_name = parent.rsplit("::", 1)[1], old_parent.rsplit("::", 1)[1]
            name = old_name + r.name[len(parent_name) :] if r.name.startswith(parent_name) else r.name
            own.append(f"{_type_chain(old_parent)}${r.type}::{name}")
        found[urn] = list(dict.fromkeys(own))
    return found


def answered(registrations: list[Registration], pinned: set[str]) -> dict[str, str]:
    """Which registration (by its URN) answers each URN of `pinned`; no URN is claimed twice."""
    matched: dict[str, str] = {}
    for urn, known in names(registrations).items():
        for old in pinned.intersection(known):
            assert old not in matched, f"{old} is claimed by {matched[old]} and {urn}"
            matched[old] = urn
    return matched


@pytest.mark.parametrize("stack_file", sorted(REPO.glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_resource_names_are_stable(pulumi_mocks: RecordingMonitor, monkeypatch, stack_file: Path) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, stack_file)
    run(lambda: stacks.run(stacks.load()))
    registrations = pulumi_mocks.registrations
    current = set(engine_urns(registrations).values())
    path = NAMES / f"{stack_file.stem.removeprefix('Pulumi.')}.txt"
    pinned = {urn for urn in path.read_text().splitlines() if not retired(urn)}
    matched = answered(registrations, pinned)
    if os.environ.get("UPDATE_NAMES"):
        path.write_text("\n".join(sorted(set(matched) | current)) + "\n")
        return
    lost = sorted(pinned - set(matched))
    assert not lost, f"the program no longer answers to these URNs of existing state: alias them: {lost}"
    new = sorted(current - pinned)
    assert not new, f"new resources (if intended, UPDATE_NAMES=1): {new}"


def test_a_child_keeps_its_urn_through_its_parents_alias() -> None:
    """The alias resolution above, on the move this project made: top-level resources put under a component."""

    class Spec:
        noParent = True

    class Alias:
        spec = Spec()

        def HasField(self, name: str) -> bool:
            return name == "spec"

    stack = "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev"
    component = Registration("t:index:Platform", "platform", "urn:pulumi:dev::p::t:index:Platform::platform", {}, stack)
    moved = Registration(
        "t:index:Cluster", "c", "urn:pulumi:dev::p::t:index:Platform$t:index:Cluster::c", {}, component.urn
    )
    moved.aliases = [Alias()]
    child = Registration(
        "aws:eks:Cluster",
        "c-eks",
        "urn:pulumi:dev::p::t:index:Platform$t:index:Cluster$aws:eks:Cluster::c-eks",
        {},
        moved.urn,
    )
    old = {"t:index:Cluster::c", "t:index:Cluster$aws:eks:Cluster::c-eks"}
    assert answered([component, moved, child], old) == {
        "t:index:Cluster::c": "t:index:Platform$t:index:Cluster::c",
        "t:index:Cluster$aws:eks:Cluster::c-eks": "t:index:Platform$t:index:Cluster$aws:eks:Cluster::c-eks",
    }
    unaliased = Registration(moved.type, moved.name, moved.urn, {}, component.urn)
    assert answered([component, unaliased, child], old) == {}, "without the alias both old URNs are lost"
