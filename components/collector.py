"""The cyclic garbage collector's settings for our processes: the command line, the Pulumi program and the plugin."""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 100)
"""Collect the youngest objects every 50,000 allocations (Python's default is 700), the older as often as before
relative to it. A render, a check or a Pulumi program builds large trees of plain objects that are never cyclic
garbage: at the default, a 1,000-job render spent a fifth of its time rescanning them, and a 500-job program under
Pulumi's mocks 6-7 full collections (about 1.4 s of its 4 s of CPU) walking the SDKs' objects."""


def tune() -> None:
    """Set the collector's thresholds for a process of ours (once, at its start)."""
    gc.set_threshold(*THRESHOLDS)
