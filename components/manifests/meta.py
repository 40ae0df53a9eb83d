"""Object metadata shared by every builder: names, labels, the managed-by mark."""

from __future__ import annotations

import hashlib
import re
from typing import Any

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-training"}
INSTANCE_LABEL = "app.kubernetes.io/instance"
ROLE_LABEL = "gpu-training/role"


def metadata(
    name: str,
    namespace: str | None = None,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """ObjectMeta with our managed-by label; empty label and annotation maps are left out."""
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {**MANAGED_BY, **(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def job_labels(job: str) -> dict[str, str]:
    """The labels every object of one TrainingJob carries."""
    return {INSTANCE_LABEL: job}


def volume_name(claim: str, kind: str = "claim") -> str:
    """The pod volume of a claim (or a Secret or ConfigMap, by `kind`): `claim-<name>`, distinct for distinct
    objects and from the job's own volumes."""
    base = re.sub(r"[^a-z0-9-]", "-", claim)
    if base == claim and len(base) <= 62 - len(kind):
        return f"{kind}-{base}"
    # Dots were replaced or the name was cut: a digest of the claim keeps names apart.
    digest = hashlib.sha256(claim.encode()).hexdigest()[:8]
    return f"{kind}-{base[: 53 - len(kind)].strip('-')}-{digest}"


def key(obj: dict[str, Any]) -> str:
    """`Kind/namespace/name` (or `Kind/name` when cluster-scoped): how objects are named in output."""
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{obj['kind']}/{ns}/{meta['name']}" if ns else f"{obj['kind']}/{meta['name']}"
