"""Fields the API server refuses to change in place, per kind we emit: a change to one means a replacement.

pulumi-kubernetes knows the immutable fields of the core kinds (a Job's pod template) and replaces the
object itself; for custom resources it updates in place, and the server's transition rules
(`self == oldSelf`) then refuse the update, failing `pulumi up`. These are those rules, read from the
CRDs at the versions `components/versions.py` pins (kubeflow/trainer v2.3.0 and v1.9.4
manifests/base/crds, sigs.k8s.io/kueue v0.19.2 config/components/crd/bases, sigs.k8s.io/jobset v0.12.0,
sigs.k8s.io/dra-driver-nvidia-gpu v0.5.0 deployments/helm/dra-driver-nvidia-gpu/crds);
tests/simulate checks them against the real CRDs, so a new rule upstream fails a test, not a deploy.
"""

from __future__ import annotations

from typing import Any

_RUNTIME_SPEC = ("failurePolicy", "network", "replicatedJobs", "startupPolicy", "successPolicy", "volumeClaimPolicies")

IMMUTABLE: dict[tuple[str, str], tuple[str, ...]] = {
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): tuple(
        f"spec.{f}"
        for f in ("trainer", "runtimeRef", "runtimePatches", "initializer", "managedBy", "activeDeadlineSeconds")
    ),
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"): tuple(
        f"spec.template.spec.{f}" for f in _RUNTIME_SPEC
    ),
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): tuple(f"spec.template.spec.{f}" for f in _RUNTIME_SPEC),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): tuple(f"spec.{f}" for f in _RUNTIME_SPEC),
    ("kubeflow.org/v1", "PyTorchJob"): ("spec.runPolicy.schedulingPolicy.queue",),
    ("kubeflow.org/v1", "TFJob"): ("spec.runPolicy.schedulingPolicy.queue",),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): ("spec.clusterQueue",),
    ("kueue.x-k8s.io/v1beta2", "Topology"): ("spec.levels",),
    # Once a flavor names a topology, its node labels, tolerations and topology are fixed.
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): ("spec.nodeLabels", "spec.tolerations", "spec.topologyName"),
    ("kueue.x-k8s.io/v1beta2", "AdmissionCheck"): ("spec.controllerName",),
    # A ComputeDomain's whole spec is fixed ("A computeDomain.spec is immutable"); ours holds only the name of its
    # channel's template, which follows the job's.
    ("resource.nvidia.com/v1beta1", "ComputeDomain"): ("spec",),
}
"""(apiVersion, kind) -> the field paths (Pulumi property paths) a change to which replaces the object.
A listed path covers the fields under it: replacing on `spec.runtimePatches` covers its containers."""


def replace_paths(obj: dict[str, Any]) -> tuple[str, ...]:
    """The property paths of `obj` whose change must replace it rather than update it."""
    return IMMUTABLE.get((obj.get("apiVersion", ""), obj.get("kind", "")), ())
