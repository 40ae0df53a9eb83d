"""Stand-in volumes: a simulated cluster has no storage driver, so each claim gets a PersistentVolume bound to it."""

from __future__ import annotations

from typing import Any


def stand_ins(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One PersistentVolume per PersistentVolumeClaim among `objects` (that no object of theirs already
    provides), pre-bound to the claim, of its class, size and access modes."""
    provided = {o["metadata"]["name"] for o in objects if o.get("kind") == "PersistentVolume"}
    volumes = []
    for claim in (o for o in objects if o.get("kind") == "PersistentVolumeClaim"):
        meta, spec = claim["metadata"], claim.get("spec", {})
        name = spec.get("volumeName") or f"simulated-{meta['namespace']}-{meta['name']}"
        if name in provided:
            continue
        volumes.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name, "labels": {"gpu-training/simulated": "true"}},
                "spec": {
                    "capacity": {"storage": spec.get("resources", {}).get("requests", {}).get("storage", "1Gi")},
                    "accessModes": spec.get("accessModes", ["ReadWriteOnce"]),
                    "storageClassName": spec.get("storageClassName", ""),
                    "claimRef": {"namespace": meta["namespace"], "name": meta["name"]},
                    "persistentVolumeReclaimPolicy": "Retain",
                    "hostPath": {"path": f"/simulated/{meta['namespace']}/{meta['name']}"},
                },
            }
        )
    return volumes
