"""The JobSet that Kubeflow Trainer makes for a TrainJob, as simulate tests read it from the cluster."""

from __future__ import annotations

from typing import Any

from components.simulate.client import Client

API = "jobset.x-k8s.io/v1alpha2"
NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
"""On the JobSet's Jobs and pods: the JobSet's name."""
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
"""On the JobSet's Jobs and pods: the replicated job (the runtime's `node`, `launcher`) they are of."""


def path(trainjob: dict[str, Any]) -> str:
    """The API path of the JobSet Trainer makes for `trainjob`: its name, in its namespace."""
    meta = trainjob["metadata"]
    return f"/apis/{API}/namespaces/{meta['namespace']}/jobsets/{meta['name']}"


def made(client: Client, trainjob: dict[str, Any]) -> dict[str, Any]:
    """The JobSet Trainer made for `trainjob`, as stored; fails when there is none."""
    stored = client.get(path(trainjob))
    assert stored is not None, f"Trainer made no JobSet for {trainjob['metadata']['name']}"
    return stored


def pods(client: Client, trainjob: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods of the JobSet Trainer made for `trainjob`."""
    meta = trainjob["metadata"]
    return client.list("v1", "Pod", meta["namespace"], f"{NAME_LABEL}={meta['name']}")
