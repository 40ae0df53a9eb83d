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
* TrainJob: the runtime's JobSet restarts all Jobs together (trainingruntime.py), and a node fault
  (an eviction, a drain, a lost node: the pod's DisruptionTarget condition) restarts them without counting
  against maxRestarts (`jobset_failure_policy`).

`node_fault` says, per job, what one node fault costs under these settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.manifests.plan import JobPlan

# Counted restarts: the Training Operator counts container restarts under these pod restart policies.
_COUNTED = ("OnFailure", "Always")
CLEAN_POD_POLICY = "Running"
"""Delete a finished job's pods that still run: a failed job's ranks hang in collectives holding GPUs."""
DISRUPTION = "DisruptionTarget"
"""The pod condition Kubernetes sets on a pod it evicts or preempts (not the program's fault): the scheduler's
preemption, the Eviction API (a drain, a node repair), the taint manager and pod GC on a lost node, the kubelet's
node-pressure eviction and graceful shutdown (Kubernetes "Disruptions": pod disruption conditions)."""
POD_FAILURE_POLICY = "PodFailurePolicy"
"""The reason of a Job failed by a podFailurePolicy FailJob rule (batch/v1 JobReasonPodFailurePolicy), one of the
reasons JobSet v0.12.0 accepts in onJobFailureReasons (pkg/webhooks/jobset_webhook.go validOnJobFailureReasons)."""
NODE_FAULT_RULE = "NodeFault"
"""The JobSet failure-policy rule that restarts a TrainJob for a node fault without counting it."""
RESTART_STRATEGY = "Recreate"
"""JobSet's restart strategy for TrainJobs: each child Job is made again once its pods are gone (v0.12.0's
default). InPlaceRestart is not used: it needs JobSet's alpha InPlaceRestart gate, which the JobSet chart the
Trainer chart installs cannot turn on (its ConfigMap writes no featureGates and the manager reads gates only from
that file), plus an agent sidecar in every pod and Kubernetes' container restart rules (KEP-467)."""


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


def child_job_failure_policy() -> dict[str, Any]:
    """The podFailurePolicy of a TrainJob's child Jobs: a disrupted pod fails its Job by the policy (reason
    PodFailurePolicy), which the JobSet's NodeFault rule tells apart from the program's faults (the pods'
    restartPolicy is Never, which a podFailurePolicy needs)."""
    fail = {"action": "FailJob", "onPodConditions": [{"type": DISRUPTION, "status": "True"}]}
    return {"rules": [fail]}


def jobset_failure_policy(plan: JobPlan) -> dict[str, Any]:
    """A TrainJob's JobSet failurePolicy: every child Job recreated on any fault; a program fault counts against
    maxRestarts (the job's retries), a node fault does not.

    JobSet v0.12.0's other actions are not used: RestartJob (recreate one child Job) needs its alpha RestartJob
    gate, which the installed chart cannot turn on (see RESTART_STRATEGY), and would gain nothing on a torch
    runtime, whose nodes Trainer v2.3 runs as one child Job (its JobSet builder pins the trainer's replicas to 1).
    A rule left unmatched restarts the JobSet and counts (the API's default, RestartJobSet).
    """
    node_fault = {
        "name": NODE_FAULT_RULE,
        "action": "RestartJobSetAndIgnoreMaxRestarts",
        "onJobFailureReasons": [POD_FAILURE_POLICY],
    }
    return {"maxRestarts": plan.spec.backoff_limit, "restartStrategy": RESTART_STRATEGY, "rules": [node_fault]}


@dataclass(frozen=True, slots=True)
class NodeFault:
    """What one node fault (an eviction, a drain, a lost node) costs a job: the pods made again, the pods whose
    ranks restart inside their running pod, and the limit the fault uses up."""

    pods: int
    """The job's pods."""
    recreated: int
    """Pods deleted and made again (rescheduled, images pulled, ranks rejoined); 0 when the job fails."""
    in_place: int
    """Pods left running whose ranks restart inside them."""
    counts: str | None
    """What the fault uses up of which retry limit, as `1 of backoffLimit 3`; None when nothing."""
    how: str
    """Which controller does what, in a few words."""
    placement: str = ""
    """What Kueue's topology-aware scheduling does besides, for a job it places."""

    @property
    def fails(self) -> bool:
        """Whether one node fault ends the job."""
        return self.recreated == 0

    def describe(self) -> str:
        """One line: what is made again, what restarts in place, what it uses up, and Kueue's part."""
        if self.fails:
            return f"fails the job ({self.how})"
        done = f"recreates {self.recreated} of {self.pods} pods"
        if self.in_place:
            done += f", restarts {self.in_place} in place"
        used = f"uses up {self.counts}" if self.counts else "counted against no retry limit"
        return f"{done} ({self.how}); {used}" + (f"; {self.placement}" if self.placement else "")


def node_fault(plan: JobPlan) -> NodeFault:
    """What one node fault costs the job, by its launcher and the settings this module gives its object."""
    launcher = plan.spec.launcher
    total = pods(plan) + (1 if launcher == "mpi" else 0)
    rest = total - 1
    torchrun = f"1 of torchrun's --max_restarts {plan.spec.in_place_restarts}"
    tas = _kueue_placement(plan, total)
    if launcher == "trainjob":
        how = f"JobSet's {NODE_FAULT_RULE} rule recreates every child Job; maxRestarts counts only program faults"
        return NodeFault(total, total, 0, None, how, tas)
    if launcher == "indexed":
        if plan.restart_policy == "Never":
            how = "the Job replaces the disrupted index uncounted; torchrun restarts the other ranks"
            return NodeFault(total, 1, rest, torchrun, how, tas)
        return NodeFault(total, 1, rest, f"1 of backoffLimit {plan.spec.backoff_limit * total}", "the Job", tas)
    if launcher in ("pytorch", "tensorflow"):
        if plan.restart_policy not in _COUNTED:
            return NodeFault(total, 0, 0, None, "restartPolicy Never: the Training Operator fails the job", tas)
        if launcher == "pytorch":
            how = "the Training Operator makes the lost pod again; torchrun restarts the other ranks"
            return NodeFault(total, 1, rest, torchrun, how, tas)
        how = "the Training Operator makes the lost pod again; the other workers' containers restart as they fail"
        return NodeFault(total, 1, rest, f"{rest} of backoffLimit {operator_backoff_limit(plan)}", how, tas)
    # mpi-operator v0.8.2 (mpi_job_controller.go) fails the MPIJob on any worker the kubelet evicted (phase Failed,
    # reason Evicted); a drain or a lost node deletes the pod instead, and the operator makes it again.
    how = (
        "the MPI Operator makes the lost pod again; mpirun exits and the launcher's Job reruns it over every worker; "
        "a kubelet eviction (node pressure) fails the MPIJob instead"
    )
    return NodeFault(total, 1, rest, f"1 of backoffLimit {plan.spec.backoff_limit}", how, tas)


def _kueue_placement(plan: JobPlan, total: int) -> str:
    """Kueue's part when it places the job by topology: it swaps the failed node in the job's assignment, and
    when none fits evicts and re-admits the whole job (failed-node replacement and its fail-fast)."""
    if plan.scheduler != "kueue" or plan.placement is None:
        return ""
    return f"Kueue swaps the node in its topology assignment, or evicts and re-admits all {total} pods if none fits"


def _ttl(plan: JobPlan) -> dict[str, int]:
    """ttlSecondsAfterFinished when the job sets one (opt-in: Pulumi would recreate a deleted job)."""
    ttl = plan.spec.ttl_seconds_after_finished
    return {} if ttl is None else {"ttlSecondsAfterFinished": ttl}
