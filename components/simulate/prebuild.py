"""Build every engine the `simulate` and engine test tiers run, and etcd's seed of CRDs, ahead of them: a fresh
CI machine starts this in the background while it lints and runs the fast tests, so the builds overlap work that
uses one core.

    python -m components.simulate.prebuild
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor

from components.simulate import controlplane, engines, pulumicli, seed
from components.simulate.client import ClientError
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
    """Build each engine not in the cache yet, one after another, its modules downloaded ahead of it meanwhile;
    1 when one fails (the tiers then say why)."""
    started = time.monotonic()

    def progress(message: str) -> None:
        print(f"[{time.monotonic() - started:5.0f}s] {message}", flush=True)

    missing = [engine for engine in ALL if not engines.is_built(engine)]
    failed = 0
    # Downloads wait on the network, builds on the cores: a few downloads run while each engine compiles, so no
    # build waits for its modules but the first.
    with ThreadPoolExecutor(max_workers=4) as pool:
        downloads = {engine.name: pool.submit(engines.download_modules, engine) for engine in missing}
        for engine in missing:
            try:
                downloads[engine.name].result()
                engines.build(engine, progress)
            except engines.BuildError as exc:
                print(f"could not build {engine.name}: {exc}", file=sys.stderr, flush=True)
                failed = 1
    print(f"[{time.monotonic() - started:5.0f}s] every engine is in {engines.cache_dir() / 'engines'}", flush=True)
    try:
        made = seed.etcd(engines.build(engines.KUBERNETES), seed.definitions(), progress)
        progress(f"etcd's seed with every CRD is {made}")
    except (engines.BuildError, controlplane.StartError, ClientError) as exc:
        print(f"could not make etcd's seed (each control plane then installs the CRDs itself): {exc}", flush=True)
        failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
