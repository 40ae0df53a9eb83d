"""Waiting in simulate tests for what the cluster's controllers do in their own time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

POLL = 0.5
"""Seconds between looks."""


def until(what: str, check: Callable[[], Any], seen: Callable[[], Any] | None = None, *, wait: float) -> Any:
    """check()'s first truthy value within `wait` seconds; else fail naming `what`, and what seen() finds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(POLL)
    pytest.fail(f"not {what} within {wait:.0f} s" + (f": {seen()}" if seen is not None else ""))
