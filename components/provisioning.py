"""Capacity-aware admission: pools whose nodes are provisioned on demand and all at once, before Kueue admits a job.

Kueue's ProvisioningRequest admission check (GA since Kueue 0.14; kubernetes-sigs/kueue v0.19.2
site/content/en/docs/concepts/admission_check/provisioning_request.md, pkg/controller/admissionchecks/provisioning)
reserves a job's quota, then asks the cluster's autoscaler for every node its GPU pods need in one
ProvisioningRequest (autoscaling.x-k8s.io/v1), and admits the job only once the request is Provisioned. Who serves
the request is the cloud's:
- GKE: its own autoscaler, for node pools with queued provisioning (DWS flex-start with queued provisioning), class
  `queued-provisioning.gke.io`. Such a node pool is flex-start, scales from zero, takes no reservation and no compact
  placement (cluster-toolkit modules/compute/gke-node-pool/main.tf preconditions on enable_queued_provisioning and
  enable_flex_start), and GKE taints its nodes `cloud.google.com/gke-queued=true:NoSchedule`, which the pods tolerate
  (cluster-toolkit examples/gke-consumption-options/dws-flex-start-queued-provisioning/nccl-jobset-example.yaml).
- EKS: the Cluster Autoscaler, with --enable-provisioning-requests, for managed node groups, class
  `best-effort-atomic-scale-up.autoscaling.x-k8s.io` (Cluster Autoscaler 1.30.2 and later; kubernetes/autoscaler
  cluster-autoscaler/FAQ.md "Supported ProvisioningClasses"). Karpenter serves no ProvisioningRequest.
- An existing cluster: whatever its autoscaler serves, which the stack cannot know, so the pool names the class.
"""

from __future__ import annotations

from components.errors import Issue
from components.models.nodepool import NodePoolSpec, Taint

CONTROLLER = "kueue.x-k8s.io/provisioning-request"
"""The controllerName of Kueue's ProvisioningRequest admission checks (apis/kueue/v1beta2
provisioningrequestconfig_types.go ProvisioningRequestControllerName)."""
GKE_CLASS = "queued-provisioning.gke.io"
"""GKE's class for node pools with queued provisioning (GKE's "flex-start with queued provisioning" guide)."""
ATOMIC_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
"""The Cluster Autoscaler's class that scales a node group up by the whole request at once, or not at all where the
cloud provider can (AtomicIncreaseSize); elsewhere it asks for the whole request in one increase."""
CHECK_CAPACITY_CLASS = "check-capacity.autoscaling.x-k8s.io"
"""The Cluster Autoscaler's class that only checks the request fits the nodes already there (books them 10 min)."""
AUTOSCALER_CLASSES = (ATOMIC_CLASS, CHECK_CAPACITY_CLASS)
"""The classes the Cluster Autoscaler serves (cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1
types.go)."""
AUTOSCALER_LEAST = "v1.30.2"
"""The first Cluster Autoscaler with the best-effort-atomic-scale-up class (FAQ.md, "Supported ProvisioningClasses")."""
GKE_QUEUED_TAINT = Taint(key="cloud.google.com/gke-queued", value="true", effect="NoSchedule")
"""The taint GKE puts on every node of a queued-provisioning node pool itself; the pool's pods tolerate it."""
MANAGED_RESOURCE = "nvidia.com/gpu"
"""What the requests are for: a pod set without GPUs (an MPIJob's launcher) stays out of the request and is
scheduled on the nodes already there (ProvisioningRequestConfig managedResources; kubernetes-sigs/kueue#2260)."""
BACKOFF_BASE_SECONDS = 60
BACKOFF_MAX_SECONDS = 1800
"""Kueue's retry backoff after a failed request: 60 s doubling up to 30 minutes (its defaults, stated)."""


def default_class(provider: str) -> str | None:
    """The class the provider's autoscaler serves for a pool this stack makes; None on an existing cluster."""
    return {"gcp": GKE_CLASS, "aws": ATOMIC_CLASS}.get(provider)


def resolve(spec: NodePoolSpec, provider: str, provisioner: str | None, path: str) -> tuple[str | None, list[Issue]]:
    """The pool's provisioning class (None when its capacity is not queued), and what stops it."""
    queued = spec.queued_provisioning
    key = f"{path}.queuedProvisioning"
    if not queued.enabled:
        # Only what differs from its default: a spec written back as config (defaults included) stays valid.
        fields = type(queued).model_fields
        stated = sorted(f for f in queued.model_fields_set - {"enabled"} if getattr(queued, f) != fields[f].default)
        if stated:
            name = fields[stated[0]].alias or stated[0]
            return None, [Issue(f"{key}.{name}", "has no effect while queuedProvisioning is off: drop it")]
        return None, []
    issues: list[Issue] = []
    derived = default_class(provider)
    name = queued.class_name or derived
    if provider == "existing" and name is None:
        issues.append(
            Issue(
                f"{key}.className",
                "is required on an existing cluster: the ProvisioningRequest class its autoscaler serves (e.g. "
                f"{ATOMIC_CLASS} with the Cluster Autoscaler's --enable-provisioning-requests, {GKE_CLASS} on GKE)",
            )
        )
    if provider == "gcp" and queued.class_name not in (None, GKE_CLASS):
        issues.append(
            Issue(f"{key}.className", f"GKE's queued node pools are provisioned through {GKE_CLASS}: drop className")
        )
    if provider == "aws" and queued.class_name not in (None, *AUTOSCALER_CLASSES):
        issues.append(
            Issue(
                f"{key}.className",
                f"the Cluster Autoscaler serves {' and '.join(AUTOSCALER_CLASSES)}: drop className for {ATOMIC_CLASS}",
            )
        )
    if provider == "aws" and provisioner == "karpenter":
        issues.append(
            Issue(
                f"{path}.provisioner",
                "Karpenter serves no ProvisioningRequest (it makes nodes for pending pods, not for requests): use "
                "provisioner: nodegroup, the default with queuedProvisioning, whose Cluster Autoscaler serves them",
            )
        )
    capacity = spec.capacity.type
    if provider == "gcp" and "capacity" in spec.model_fields_set and capacity != "flex-start":
        issues.append(
            Issue(
                f"{path}.capacity.type",
                f"GKE's queued provisioning is DWS flex-start capacity, not {capacity} (no reservation, no spot): "
                "set flex-start (the default with queuedProvisioning), or drop queuedProvisioning",
            )
        )
    return (name if not issues else None), issues


def capacity(spec: NodePoolSpec, provider: str) -> str:
    """The pool's capacity type: flex-start on a GKE pool with queued provisioning that states none."""
    queued = spec.queued_provisioning.enabled and provider == "gcp" and "capacity" not in spec.model_fields_set
    return "flex-start" if queued else spec.capacity.type


def describe(provisioning_class: str) -> str:
    """What a job on a pool with this class waits for, in words."""
    what = {
        GKE_CLASS: "GKE's Dynamic Workload Scheduler provisions all its nodes at once (flex-start, up to 7 days)",
        ATOMIC_CLASS: "the Cluster Autoscaler scales the node group up by all its nodes at once",
        CHECK_CAPACITY_CLASS: "the Cluster Autoscaler finds room for all its pods on the nodes already there",
    }.get(provisioning_class, "the cluster's autoscaler provisions all its nodes")
    return f"Kueue admits a job once a ProvisioningRequest ({provisioning_class}) is provisioned: {what}"
