"""PyTorchJob (kubeflow.org/v1): Master + Workers running torchrun, or elastic Workers."""

from __future__ import annotations

from typing import Any

from components.manifests import failure, gang, torchrun
from components.manifests.meta import job_labels, metadata
from components.manifests.plan import JobPlan
from components.manifests.pod import worker_template

CONTAINER = "pytorch"  # the Training Operator finds the training container by this name


def pytorchjob(plan: JobPlan) -> dict[str, Any]:
    """The PyTorchJob of a pytorch-launcher job."""
    elastic = plan.spec.elastic
    # Elastic jobs meet at worker-0:rdzvPort, which the operator sets as PET_RDZV_ENDPOINT.
    endpoint = "$(PET_RDZV_ENDPOINT)" if elastic else "$(MASTER_ADDR):$(MASTER_PORT)"
    args = torchrun.args(plan, rdzv_endpoint=endpoint)

    grouped = not elastic and plan.nodes > 1  # Master and Worker pod sets share one domain

    def replica(role: str, replicas: int) -> dict[str, Any]:
        return {
            "replicas": replicas,
            "restartPolicy": plan.restart_policy,
            "template": worker_template(
                plan, role=role, container=CONTAINER, command=["torchrun"], args=args, group=grouped
            ),
        }

    replicas: dict[str, Any] = {}
    if elastic:
        replicas["Worker"] = replica("worker", plan.nodes)
    else:
        replicas["Master"] = replica("master", 1)
        if plan.nodes > 1:
            replicas["Worker"] = replica("worker", plan.nodes - 1)

    spec: dict[str, Any] = {"nprocPerNode": str(plan.gpus_per_node)}
    if elastic:
        spec["elasticPolicy"] = {
            "minReplicas": elastic.min_nodes,
            "maxReplicas": elastic.max_nodes,
            "maxRestarts": elastic.max_restarts,
            "rdzvBackend": "c10d",
        }
    run_policy = failure.run_policy(plan, backoff_limit=failure.operator_backoff_limit(plan))
    policy = gang.scheduling_policy(plan, plan.min_nodes)
    if policy:
        run_policy["schedulingPolicy"] = policy
    spec["runPolicy"] = run_policy
    spec["pytorchReplicaSpecs"] = replicas
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": metadata(plan.name, plan.namespace, labels={**job_labels(plan.name), **gang.queue_labels(plan)}),
        "spec": spec,
    }
