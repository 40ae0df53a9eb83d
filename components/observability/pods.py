"""The training jobs' GPU pods in PromQL: which pods they are, by the labels kube-state-metrics carries over, and how
a GPU's DCGM series is joined to the job whose pod holds it.

kube-state-metrics exports a pod's Kubernetes labels on kube_pod_labels only for the keys its
--metric-labels-allowlist names (`metricLabelsAllowlist` in its chart), each as `label_<key>` with every character
that is not a letter, digit or underscore made an underscore (kube-state-metrics docs/metrics/workload/pod-metrics.md).
"""

from __future__ import annotations

import re

from components.manifests.meta import INSTANCE_LABEL, ROLE_LABEL
from components.observability import dcgm, metrics
from components.wellknown import POOL_LABEL

GPU_ROLES = ("master", "worker", "chief")
"""The `gpu-training/role` of the pods that hold a job's GPUs (PyTorchJob master and workers, TFJob chief and
workers, MPIJob, Indexed Job and TrainJob workers); the MPI launcher holds none, a fabric check is no job."""
POD_LABEL_KEYS = (INSTANCE_LABEL, ROLE_LABEL, POOL_LABEL)
"""The pod labels kube-state-metrics must export for the pack: the job, the role and the pool."""


def ksm_label(key: str) -> str:
    """The label kube-state-metrics gives a pod label key on kube_pod_labels (app.kubernetes.io/instance ->
    label_app_kubernetes_io_instance)."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)


JOB = ksm_label(INSTANCE_LABEL)
ROLE = ksm_label(ROLE_LABEL)
POOL = ksm_label(POOL_LABEL)
ALLOWLIST = f"pods=[{','.join(POD_LABEL_KEYS)}]"
"""kube-state-metrics' --metric-labels-allowlist entry the pack needs."""


def running_job_pods(matchers: str = "") -> str:
    """Each running GPU pod of a training job, valued 1, labelled namespace, pod, the job and its pool; `matchers`
    (PromQL label matchers of kube_pod_labels) picks some."""
    roles = "|".join(GPU_ROLES)
    extra = f", {matchers}" if matchers else ""
    return (
        f'max by (namespace, pod, {JOB}, {POOL}) ({metrics.POD_LABELS}{{{ROLE}=~"{roles}"{extra}}})'
        f' * on (namespace, pod) group_left () max by (namespace, pod) ({metrics.POD_PHASE}{{phase="Running"}} == 1)'
    )


def as_gpu_holders(expr: str) -> str:
    """`expr` (labelled namespace and pod) relabelled as the DCGM series name the pod holding a GPU."""
    renamed = f'label_replace({expr}, "{dcgm.NAMESPACE}", "$1", "namespace", "(.*)")'
    return f'label_replace({renamed}, "{dcgm.POD}", "$1", "pod", "(.*)")'


def on_job_gpus(gpu_expr: str, matchers: str = "") -> str:
    """`gpu_expr` (DCGM series) restricted to the GPUs running training job pods hold (those `matchers` picks),
    each labelled with its job and pool; the value is `gpu_expr`'s."""
    holders = as_gpu_holders(running_job_pods(matchers))
    return f"({gpu_expr}) * on ({dcgm.NAMESPACE}, {dcgm.POD}) group_left ({JOB}, {POOL}) {holders}"
