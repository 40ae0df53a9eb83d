"""The names each launcher's controller derives from a job's name (pods, Services, hostnames), and the longest job
name whose derived names Kubernetes accepts.

What each controller makes, read at the pinned versions (components/versions.py; Go modules in ~/go/pkg/mod):
- Training Operator v1.9.4 (PyTorchJob, TFJob): a pod and a headless Service per replica, both named
  `<job>-<replica type, lowercase>-<index>` (pkg/controller.v1/common/util.go:50 GenGeneralName, used for pods at
  pkg/controller.v1/common/pod.go:414 and for Services at pkg/controller.v1/common/service.go:243). A Service's
  name is a DNS-1035 label (kubernetes v1.35.4 pkg/apis/core/validation/validation.go:290 ValidateServiceName), so the
  operator's Service create fails past 63 characters, though its webhook admitted the job
  (pkg/webhooks/pytorch/pytorchjob_webhook.go:79 checks the job's own name only).
- MPI Operator v0.8.0 (MPIJob v2beta1): worker pods `<job>-worker-<index>` with that hostname, and the launcher's Job
  `<job>-launcher` whose pods take it as hostname, under the Service `<job>` (pkg/controller/mpi_job_controller.go:84-85
  suffixes, :1453 workerName, :1486 and :1574 Hostname/Subdomain); its validation wants
  `<job>-worker-<replicas-1>` to be a DNS-1035 label (pkg/apis/kubeflow/validation/validation.go:63-64).
- Indexed Job (batch/v1): pods `<job>-<index>-<5 random>` with hostname `<job>-<index>` under the headless Service
  `<job>`; the API server refuses a Job whose `<job>-<completions-1>` is no DNS-1123 label (kubernetes v1.35.4
  pkg/apis/batch/validation/validation.go:156-163).
- TrainJob (Kubeflow Trainer v2.3 on JobSet v0.12.0): pods `<job>-<replicated job>-<job index>-<pod index>-<5
  random>`, which JobSet's webhook wants to be a DNS-1035 label (pkg/webhooks/jobset_webhook.go:243-250, a
  placeholder suffix `-abcde`); each replicated job has one replica (job index 0).
The job's other objects take names of up to 253 characters (the `<job>-deepspeed` ConfigMap, the `<job>-channel`
claim template), and a ComputeDomain names its daemons by its UID (dra-driver-nvidia-gpu v0.5.0
cmd/compute-domain-controller/daemonset.go:209), so none of them bounds the name further.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.errors import Issue
from components.models.job import MPI_RUNTIMES, TrainingJobSpec

MAX_LABEL = 63
"""A DNS-1123 or DNS-1035 label: hostnames, Service names, label values (k8s.io/apimachinery validation)."""
NODE = "node"
"""The replicated job of a TrainJob's nodes, and the container name Trainer looks for in every pod."""
LAUNCHER = "launcher"
"""The replicated job of an MPI or DeepSpeed TrainJob's launcher (mpirun)."""
_RANDOM = "-abcde"
"""The five random characters a generated pod name ends with, as JobSet's webhook stands them in."""


@dataclass(frozen=True, slots=True)
class Derived:
    """A name a controller derives from the job's name, and what it names."""

    name: str
    what: str


def derived_names(spec: TrainingJobSpec) -> list[Derived]:
    """The longest name of each kind the job's controller derives from its name (at its most nodes)."""
    job, nodes = spec.name, spec.most_nodes
    if spec.launcher in ("pytorch", "tensorflow"):
        first = "master" if spec.launcher == "pytorch" else "chief"
        if spec.elastic is not None:  # an elastic PyTorchJob has Workers only, up to maxNodes of them
            return [Derived(f"{job}-worker-{nodes - 1}", "pod and headless Service")]
        names = [Derived(f"{job}-{first}-0", "pod and headless Service")]
        if nodes > 1:
            names.append(Derived(f"{job}-worker-{nodes - 2}", "pod and headless Service"))
        return names
    if spec.launcher == "mpi":
        return [
            Derived(f"{job}-worker-{nodes - 1}", "worker pod hostname"),
            Derived(f"{job}-launcher", "launcher hostname"),
        ]
    if spec.launcher == "indexed":
        return [Derived(f"{job}-{nodes - 1}", "pod hostname")]
    runtime = spec.training_runtime or "torch"
    pods = {NODE: max(nodes - 1, 1), LAUNCHER: 1} if runtime in MPI_RUNTIMES else {NODE: nodes}
    return [
        Derived(f"{job}-{replicated}-0-{count - 1}{_RANDOM}", "JobSet pod name (its last 5 characters random)")
        for replicated, count in pods.items()
    ]


def longest_name(spec: TrainingJobSpec) -> int:
    """The longest job name whose derived names all fit a label."""
    return MAX_LABEL - max(len(d.name) - len(spec.name) for d in derived_names(spec))


def name_issues(spec: TrainingJobSpec, path: str = "") -> list[Issue]:
    """A job name whose derived pod, Service or hostname names would pass 63 characters."""
    p = f"{path}." if path else ""
    issues: list[Issue] = []
    longest = max(derived_names(spec), key=lambda d: len(d.name))
    if len(longest.name) <= MAX_LABEL:
        return issues
    fits = longest_name(spec)
    fix = (
        f"shorten it to at most {fits} characters"
        if fits >= 1
        else f"no name fits at {spec.most_nodes} nodes: ask for fewer"
    )
    issues.append(
        Issue(
            f"{p}name",
            f"the {spec.launcher} launcher names a {longest.what} '{longest.name}' ({len(longest.name)} characters) "
            f"from job name '{spec.name}' ({len(spec.name)}), past Kubernetes' {MAX_LABEL}: {fix}",
        )
    )
    return issues
