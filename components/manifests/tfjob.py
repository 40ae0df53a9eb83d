"""TFJob (kubeflow.org/v1): a Chief and Workers; the operator writes TF_CONFIG."""

from __future__ import annotations

from typing import Any

from components.manifests import failure, gang
from components.manifests.meta import job_labels, metadata
from components.manifests.plan import JobPlan
from components.manifests.pod import worker_template

CONTAINER = "tensorflow"  # the Training Operator finds the training container by this name


def tfjob(plan: JobPlan) -> dict[str, Any]:
    """The TFJob of a tensorflow-launcher job."""

    def replica(role: str, replicas: int) -> dict[str, Any]:
        return {
            "replicas": replicas,
            "restartPolicy": plan.restart_policy,
            "template": worker_template(plan, role=role, container=CONTAINER, command=plan.program),
        }

    replicas = {"Chief": replica("chief", 1)}
    if plan.nodes > 1:
        replicas["Worker"] = replica("worker", plan.nodes - 1)
    run_policy = failure.run_policy(plan, backoff_limit=failure.operator_backoff_limit(plan))
    policy = gang.scheduling_policy(plan, plan.nodes)
    if policy:
        run_policy["schedulingPolicy"] = policy
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": metadata(plan.name, plan.namespace, labels={**job_labels(plan.name), **gang.queue_labels(plan)}),
        "spec": {"runPolicy": run_policy, "tfReplicaSpecs": replicas},
    }
