"""Resource names are state: each stack's URNs are pinned, so a rename shows up here and needs an alias.

After an intended rename, add `aliases=[pulumi.Alias(name=old)]` to the resource and regenerate with
UPDATE_NAMES=1 python -m pytest tests/test_names.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import stacks
from tests.support.pulumi_mocks import RecordingMonitor, run, use_stack

REPO = Path(__file__).resolve().parents[1]
NAMES = Path(__file__).resolve().parent / "data" / "names"


@pytest.mark.parametrize("stack_file", sorted(REPO.glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_resource_names_are_stable(pulumi_mocks: RecordingMonitor, monkeypatch, stack_file: Path) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, stack_file)
    run(lambda: stacks.run(stacks.load()))
    urns = sorted({r.urn.split("::", 2)[2] for r in pulumi_mocks.registrations})
    pinned = NAMES / f"{stack_file.stem.removeprefix('Pulumi.')}.txt"
    if os.environ.get("UPDATE_NAMES"):
        pinned.write_text("\n".join(urns) + "\n")
    assert urns == pinned.read_text().splitlines(), "a resource was renamed: give it an alias, then UPDATE_NAMES=1"
