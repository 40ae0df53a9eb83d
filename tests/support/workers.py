"""A job's worker pods as they will run, whatever its kind: a TrainJob's merged with its runtime as Trainer
merges them, a v1 job's from its replica specs (components/rules/pods.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.rules.pods import templates
from components.rules.podtemplate import PodTemplate
from components.rules.subjects import from_objects

JOB_KINDS = ("TrainJob", "PyTorchJob", "MPIJob", "TFJob")


def worker_pod(objects: Iterable[Mapping[str, Any]], name: str | None = None) -> PodTemplate:
    """The GPU worker pods of the training job named `name` (the only one when None): metadata and spec."""
    objects = [dict(o) for o in objects if isinstance(o, Mapping) and "kind" in o]
    (job,) = [o for o in objects if o["kind"] in JOB_KINDS and name in (None, o["metadata"]["name"])]
    pods = templates(job, from_objects(objects))
    return max(pods, key=lambda p: (p.gpus, p.replicas))


def worker_spec(objects: Iterable[Mapping[str, Any]], name: str | None = None) -> dict[str, Any]:
    """The pod spec of the GPU worker pods of the training job named `name` (the only one when None)."""
    return worker_pod(objects, name).spec


def workload(objects: Iterable[Mapping[str, Any]], name: str | None = None) -> dict[str, Any]:
    """The training job named `name` (the only one when None), whatever its kind."""
    (job,) = [o for o in objects if o.get("kind") in JOB_KINDS and name in (None, o["metadata"]["name"])]
    return dict(job)
