"""Waiting in simulate and engine tests for what the cluster's controllers do in their own time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from components.simulate.client import Client
    from components.simulate.controlplane import ControlPlane

POLL = 0.5
"""Seconds between looks."""


def until(
    what: str,
    check: Callable[[], Any],
    seen: Callable[[], Any] | None = None,
    *,
    wait: float,
    poll: float = POLL,
    plane: ControlPlane | None = None,
) -> Any:
    """check()'s first truthy value within `wait` seconds, looked for every `poll`; else fail naming `what`, and
    what seen() finds (the objects, events or logs that say why). With `plane`, a process of it that exits ends
    the wait at once (ControlPlane.check_alive's StartError)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if plane is not None:
            plane.check_alive()
        if found := check():
            return found
        time.sleep(poll)
    pytest.fail(f"{what}: not within {wait:.0f} s" + (f"\n{seen()}" if seen is not None else ""))


def holds(what: str, check: Callable[[], Any], *, seconds: float, poll: float = POLL) -> None:
    """check() stays truthy for `seconds`, looked at every `poll`; else fail at the first look it is not, naming
    `what` (a check may assert itself, for a message of its own)."""
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < seconds:
        assert check(), f"{what}: no longer so after {elapsed:.1f} s"
        time.sleep(poll)


def claims_bound(client: Client, *, wait: float) -> None:
    """Return once every PersistentVolumeClaim of the cluster is Bound (to its stand-in volume, simulate/volumes.py),
    so that pods wait on nothing but their node."""

    def unbound() -> list[str]:
        claims = client.list("v1", "PersistentVolumeClaim")
        return [
            f"{c['metadata']['namespace']}/{c['metadata']['name']}"
            for c in claims
            if c["status"].get("phase") != "Bound"
        ]

    until("every claim Bound", lambda: not unbound(), lambda: f"unbound: {unbound()}", wait=wait)
