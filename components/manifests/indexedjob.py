"""An Indexed Job with a headless Service: torchrun across nodes without any operator."""

from __future__ import annotations

from typing import Any

from components.manifests import failure, gang, torchrun
from components.manifests.meta import INSTANCE_LABEL, job_labels, metadata
from components.manifests.plan import JobPlan
from components.manifests.pod import worker_template
from components.manifests.ports import container_port, service_port

CONTAINER = "trainer"
INDEX_ENV = "JOB_COMPLETION_INDEX"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
# pulumi-kubernetes waits for a Job to complete (ten minutes, then fails `pulumi up`) and checks it again
# on refresh; a training run lasts hours, so `up` only creates it.
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}


def service_name(plan: JobPlan) -> str:
    """The headless Service that gives each pod a DNS name: <job>-<index>.<service>."""
    return plan.name


def rendezvous_host(plan: JobPlan) -> str:
    """The DNS name of pod 0, which hosts the c10d rendezvous."""
    return f"{plan.name}-0.{service_name(plan)}"


def job(plan: JobPlan) -> dict[str, Any]:
    """The Indexed Job: one pod per node, rank from the completion index."""
    host, port = rendezvous_host(plan), plan.spec.port
    args = torchrun.args(plan, rdzv_endpoint=f"{host}:{port}", node_rank=f"$({INDEX_ENV})")
    extra_env = [
        index_env(),
        {"name": "MASTER_ADDR", "value": host},
        {"name": "MASTER_PORT", "value": str(port)},
    ]
    template = worker_template(
        plan,
        role="worker",
        container=CONTAINER,
        command=["torchrun"],
        args=args,
        restart_policy=plan.restart_policy,
        extra_env=extra_env,
        podgroup=plan.name if plan.scheduler == "volcano" else None,
    )
    template["spec"]["subdomain"] = service_name(plan)
    template["spec"]["containers"][0]["ports"] = [container_port("rdzv", port)]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(
            plan.name,
            plan.namespace,
            labels={**job_labels(plan.name), **gang.queue_labels(plan)},
            annotations=SKIP_AWAIT,
        ),
        "spec": {
            "completionMode": "Indexed",
            "completions": plan.nodes,
            "parallelism": plan.nodes,
            **failure.indexed_job_policy(plan),
            "template": template,
        },
    }


def index_env() -> dict[str, Any]:
    """JOB_COMPLETION_INDEX, the pod's index, from the annotation the Job controller sets."""
    return {"name": INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX_ANNOTATION}']"}}}


def service(plan: JobPlan) -> dict[str, Any]:
    """The job's headless Service, on its rendezvous port."""
    return headless_service(
        service_name(plan), plan.namespace, job=plan.name, labels=job_labels(plan.name), port=("rdzv", plan.spec.port)
    )


def headless_service(
    name: str, namespace: str, *, job: str, labels: dict[str, str], port: tuple[str, int]
) -> dict[str, Any]:
    """A headless Service naming each pod of an Indexed Job `<job>-<index>.<name>`; it publishes pods
    before they are ready, so ranks can find each other while they start."""
    port_name, number = port
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(name, namespace, labels=labels),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {INSTANCE_LABEL: job},
            "ports": [service_port(port_name, number)],
        },
    }
