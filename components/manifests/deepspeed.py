"""The DeepSpeed ConfigMap a job mounts and passes as --deepspeed_config."""

from __future__ import annotations

import json
from typing import Any

from components.manifests.meta import job_labels, metadata
from components.manifests.plan import JobPlan
from components.manifests.pod import deepspeed_configmap_name


def configmap(plan: JobPlan) -> dict[str, Any] | None:
    """The ConfigMap holding ds_config.json, or None when the job has no DeepSpeed config."""
    if plan.spec.deepspeed is None:
        return None
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(deepspeed_configmap_name(plan), plan.namespace, labels=job_labels(plan.name)),
        "data": {"ds_config.json": json.dumps(plan.spec.deepspeed.config, indent=2, sort_keys=True) + "\n"},
    }
