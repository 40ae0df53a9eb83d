"""What a fault does to a job: retries counted the way each operator counts them, clean-up, watchdogs.

`backoffLimit` in a TrainingJob means whole-job retries. Each launcher's object states it in its
controller's own unit:

* PyTorchJob / TFJob (Training Operator v1): with restartPolicy OnFailure the operator fails a job when
  the restarts of every container of its running pods add up to backoffLimit (kubeflow/trainer v1.9.4,
  pkg/core/job.go PastBackoffLimit). One fault stops every rank, so one whole-job retry restarts one
  container per pod: the limit is scaled by the pods.
* Indexed Job (batch/v1): every failed pod counts; a fault fails every index, so the limit is scaled
  by the pods too. Evictions and preemptions (the DisruptionTarget condition) do not count
  (Kubernetes "Handling Pod and container failures": podFailurePolicy).
* MPIJob: only the launcher runs to completion; its Job's failures are the retries.
* TrainJob: the runtime's JobSet restarts all Jobs together (trainingruntime.py).
"""

from __future__ import annotations

from typing import Any

from components.manifests.plan import JobPlan

# Counted restarts: the Training Operator counts container restarts under these pod restart policies.
_COUNTED = ("OnFailure", "Always")
CLEAN_POD_POLICY = "Running"
"""Delete a finished job's pods that still run: a failed job's ranks hang in collectives holding GPUs."""
DISRUPTION = "DisruptionTarget"
"""The pod condition Kubernetes sets on a pod it evicts or preempts (not the program's fault)."""


def pods(plan: JobPlan) -> int:
    """The GPU pods one whole-job retry restarts: every node's (the most an elastic job runs on)."""
    elastic = plan.spec.elastic
    return elastic.max_nodes if elastic else plan.nodes


def operator_backoff_limit(plan: JobPlan) -> int:
    """runPolicy.backoffLimit of a PyTorchJob or TFJob: whole-job retries times the pods when the operator
    counts container restarts, else the retries as stated."""
    if plan.restart_policy in _COUNTED:
        return plan.spec.backoff_limit * pods(plan)
    return plan.spec.backoff_limit


def run_policy(plan: JobPlan, *, backoff_limit: int) -> dict[str, Any]:
    """A Kubeflow runPolicy: the retries, the clean-up of running pods, and the job's time to live."""
    return {"backoffLimit": backoff_limit, "cleanPodPolicy": CLEAN_POD_POLICY, **_ttl(plan)}


def indexed_job_policy(plan: JobPlan) -> dict[str, Any]:
    """backoffLimit (whole-job retries times the pods) of an Indexed Job, and a podFailurePolicy under which
    evictions and preemptions are not counted (it needs restartPolicy Never, the indexed default)."""
    policy: dict[str, Any] = {"backoffLimit": plan.spec.backoff_limit * pods(plan)}
    if plan.restart_policy == "Never":
        ignore = {"action": "Ignore", "onPodConditions": [{"type": DISRUPTION, "status": "True"}]}
        policy["podFailurePolicy"] = {"rules": [ignore]}
    return {**policy, **_ttl(plan)}


def _ttl(plan: JobPlan) -> dict[str, int]:
    """ttlSecondsAfterFinished when the job sets one (opt-in: Pulumi would recreate a deleted job)."""
    ttl = plan.spec.ttl_seconds_after_finished
    return {} if ttl is None else {"ttlSecondsAfterFinished": ttl}
