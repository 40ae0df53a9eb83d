"""An etcd data folder that already holds every CRD the stacks install: each control plane starts from a copy.

Creating the add-ons' 47 CRDs (3.5 MB of schemas) costs the API server 10 to 20 s on two cores; an API server
that finds them in etcd serves them a second after it is ready. So the CRDs are applied once per machine, into a
control plane whose etcd data is then kept in the cache, keyed by the Kubernetes engine and the definitions, and
every later control plane (each test's, each `simulate`) starts from a copy of it. Each plane is still new: its own
processes, certificates, token and ports, and its own copy of the data, removed when it stops.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from components.simulate import apply, controlplane, crds, engines, karpenter, training_operator, volcano


def definitions() -> list[dict[str, Any]]:
    """What the seed holds: every CRD of the stacks' add-ons (crds.py), then those that the Volcano chart and the
    Training Operator's overlay install at start and the add-ons' lack (the shared ones are the same documents, but
    the overlay's MPIJob v1, which the MPI Operator's v2beta1 keeps out), and the KWOKNodeClass that simulate's
    Karpenter launches through."""
    held = list(crds.every_definition())
    names = {crd["metadata"]["name"] for crd in held}
    for crd in [*volcano.chart_crds(), *training_operator.crds(), *karpenter.crds()]:
        if crd["metadata"]["name"] not in names:
            held.append(crd)
            names.add(crd["metadata"]["name"])
    return held


def folder(definitions: Iterable[dict[str, Any]]) -> Path:
    """Where the seed of these definitions, at the pinned Kubernetes, lives in the cache."""
    digest = hashlib.sha256(engines.key(engines.KUBERNETES).encode())
    for crd in definitions:
        digest.update(apply.digest_of(crd).encode())
    return engines.cache_dir() / "seeds" / f"etcd-{digest.hexdigest()[:12]}"


def etcd(
    binaries: dict[str, Path], definitions: list[dict[str, Any]], progress: Callable[[str], None] = lambda _: None
) -> Path:
    """The seed's etcd data folder, made first (one control plane, the CRDs applied) when the cache lacks it."""
    target = folder(definitions)
    if (target / "member").is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # One maker at a time (test workers, two terminals): the others wait, then find it.
    with (target.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "member").is_dir():
            return target
        scratch = Path(tempfile.mkdtemp(prefix=".seed-", dir=target.parent))
        try:
            progress("installing the add-ons' CRDs into a new seed (first run only)")
            plane = controlplane.start(scratch / "plane", binaries)
            try:
                apply.install_crds(plane.client(), definitions)
            finally:
                plane.stop(keep_data=True)
            shutil.rmtree(target, ignore_errors=True)
            (scratch / "plane" / controlplane.ETCD_DATA).rename(target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return target
