"""Build every engine the `simulate` and engine test tiers run, ahead of them: a fresh CI machine starts this
in the background while it lints and runs the fast tests, so the builds overlap work that uses one core.

    python -m components.simulate.prebuild
"""

from __future__ import annotations

import sys
import time

from components.simulate import engines, pulumicli
from components.simulate.simulation import CONTROLLERS

ALL: tuple[engines.Engine, ...] = (
    engines.KUBERNETES,
    engines.KWOK,
    engines.KUBECTL,
    engines.PROMTOOL,
    *(controller.ENGINE for controller in CONTROLLERS),
    *pulumicli.ENGINES,
    pulumicli.CODEGEN,
)
"""Every engine the tiers build: the control plane, kwok, kubectl, promtool, each controller, and the Pulumi
engines."""


def main() -> int:
    """Build each engine not in the cache yet, one after another; 1 when one fails (the tiers then say why)."""
    started = time.monotonic()
    failed = 0
    for engine in ALL:
        try:
            engines.build(engine, lambda message: print(f"[{time.monotonic() - started:5.0f}s] {message}", flush=True))
        except engines.BuildError as exc:
            print(f"could not build {engine.name}: {exc}", file=sys.stderr, flush=True)
            failed = 1
    print(f"[{time.monotonic() - started:5.0f}s] every engine is in {engines.cache_dir() / 'engines'}", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
