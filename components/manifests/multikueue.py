"""Kueue's MultiKueue, as a fleet makes it: on the manager the MultiKueueClusters (each worker's kubeconfig in a
Secret of Kueue's namespace), a MultiKueueConfig and an AdmissionCheck per queue, the queues mirroring the workers'
and the jobs marked for MultiKueue; on each worker the ServiceAccount MultiKueue acts as, with the least RBAC it
needs, and the Secret that holds its token.

Facts from kubernetes-sigs/kueue v0.19.2 (the pinned Kueue, components/versions.py) unless said otherwise:
- v1beta2 is the served storage version of MultiKueueCluster, MultiKueueConfig and AdmissionCheck
  (config/components/crd/bases/kueue.x-k8s.io_multikueueclusters.yaml:315-316, _multikueueconfigs.yaml:116-117,
  _admissionchecks.yaml:298-299; `+kubebuilder:storageversion` in apis/kueue/v1beta2/multikueue_types.go:117,187).
- The AdmissionCheck's controller is `kueue.x-k8s.io/multikueue` (apis/kueue/v1beta2/multikueue_types.go:37); a
  ClusterQueue takes one such check, not per flavor (apis/kueue/v1beta2/clusterqueue_types.go:42-43).
- A MultiKueueCluster's kubeconfig is read from a Secret in Kueue's own namespace, under the key `kubeconfig`
  (multikueue_types.go:24 and 53-66; pkg/controller/admissionchecks/multikueue/multikueuecluster.go:1063-1080).
"""

from __future__ import annotations

import copy
from typing import Any

from components import quantity
from components.manifests.meta import metadata
from components.manifests.queues import (
    DEFAULT_COHORT,
    DEFAULT_FLAVOR,
    KUEUE_API,
    cluster_queue,
    default_flavor_quota,
    resource_flavor,
)
from components.models.platform import QueueSpec
from components.pool import Pool
from components.wellknown import KUEUE_NAMESPACE

MULTIKUEUE_API = KUEUE_API
"""kueue.x-k8s.io/v1beta2: what v0.19.2 serves and stores for every MultiKueue kind."""
CONTROLLER = "kueue.x-k8s.io/multikueue"
"""The AdmissionCheck controller name of MultiKueue, and the `managedBy` of a job it dispatches."""
KUBECONFIG_KEY = "kubeconfig"
"""The key of a MultiKueueCluster's Secret that holds the kubeconfig."""
WORKER_ACCOUNT = "gpu-training-multikueue"
"""The ServiceAccount (in Kueue's namespace), ClusterRole and ClusterRoleBinding MultiKueue acts as on a worker."""
TOKEN_TYPE = "kubernetes.io/service-account-token"
"""A Secret the token controller fills with a long-lived token of the ServiceAccount it names."""
SERVICE_ACCOUNT_ANNOTATION = "kubernetes.io/service-account.name"

# What the manager's Kueue does on a worker to dispatch TrainJobs, and nothing else:
# - Workloads: it creates each job's Workload there (workload.go:819, 945), reads it (:353), lists its own by origin
#   label (multikueuecluster.go:693) and watches them (:342), updates them to sync the spec and drop the finalizer
#   (workload.go:524, 173), and deletes them (:178).
# - Workload status: it patches the admission of a Workload evicted on the manager (workload.go:584-590) and
#   updates it to open a preemption gate (:645).
# - TrainJobs: it reads and creates the job there (pkg/controller/jobs/trainjob/trainjob_multikueue_adapter.go:51,
#   80), deletes it (:87), and lists and watches TrainJobs (:109-111), a watch every worker must grant or the
#   cluster is not connected (multikueuecluster.go:351-366). Their status is read with the object (:51, :59).
# Kueue's own example role (site/static/examples/multikueue/create-multikueue-kubeconfig.sh) grants the same for
# each job kind it dispatches; the manager's Kueue here dispatches TrainJobs only (components/addons/scheduler.py).
WORKER_RULES: tuple[dict[str, Any], ...] = (
    {
        "apiGroups": ["kueue.x-k8s.io"],
        "resources": ["workloads"],
        "verbs": ["create", "delete", "get", "list", "update", "watch"],
    },
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get", "patch", "update"]},
    {
        "apiGroups": ["trainer.kubeflow.org"],
        "resources": ["trainjobs"],
        "verbs": ["create", "delete", "get", "list", "watch"],
    },
)
"""The least a MultiKueue manager needs on a worker to dispatch TrainJobs."""


def kubeconfig_secret_name(worker: str) -> str:
    """The Secret on the manager, in Kueue's namespace, that holds a worker's kubeconfig."""
    return f"multikueue-{worker}"


def token_secret_name(rotation: str | None = None) -> str:
    """The Secret on a worker that holds the MultiKueue ServiceAccount's token, of one rotation."""
    return f"{WORKER_ACCOUNT}-token" + (f"-{rotation}" if rotation else "")


def multikueue_cluster(worker: str) -> dict[str, Any]:
    """The MultiKueueCluster of a worker: its kubeconfig in the Secret `multikueue-<worker>` of Kueue's namespace."""
    return {
        "apiVersion": MULTIKUEUE_API,
        "kind": "MultiKueueCluster",
        "metadata": metadata(worker),
        "spec": {
            "clusterSource": {
                "kubeConfig": {"location": kubeconfig_secret_name(worker), "locationType": "Secret"},
            }
        },
    }


def multikueue_config(name: str, workers: list[str]) -> dict[str, Any]:
    """The MultiKueueConfig of a queue: the workers its jobs may go to, most preferred first."""
    return {
        "apiVersion": MULTIKUEUE_API,
        "kind": "MultiKueueConfig",
        "metadata": metadata(name),
        "spec": {"clusters": list(workers)},
    }


def admission_check(name: str) -> dict[str, Any]:
    """The AdmissionCheck of a queue: MultiKueue, dispatching to the workers of the MultiKueueConfig of its name."""
    return {
        "apiVersion": MULTIKUEUE_API,
        "kind": "AdmissionCheck",
        "metadata": metadata(name),
        "spec": {
            "controllerName": CONTROLLER,
            "parameters": {"apiGroup": MULTIKUEUE_API.partition("/")[0], "kind": "MultiKueueConfig", "name": name},
        },
    }


def kubeconfig_secret(worker: str, encoded: Any) -> dict[str, Any]:
    """The Secret on the manager that holds a worker's kubeconfig, `encoded` (base64, a Pulumi secret at deploy
    time): made only by `pulumi up`, never rendered."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(kubeconfig_secret_name(worker), KUEUE_NAMESPACE),
        "type": "Opaque",
        "data": {KUBECONFIG_KEY: encoded},
    }


def worker_access(rotation: str | None = None) -> list[dict[str, Any]]:
    """What MultiKueue acts as on a worker: a ServiceAccount in Kueue's namespace, the ClusterRole of WORKER_RULES
    bound to it, and a Secret the token controller fills with its token (no data here: the cluster writes it)."""
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": WORKER_ACCOUNT}
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": metadata(WORKER_ACCOUNT, KUEUE_NAMESPACE),
            "automountServiceAccountToken": False,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": metadata(WORKER_ACCOUNT),
            "rules": [copy.deepcopy(rule) for rule in WORKER_RULES],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": metadata(WORKER_ACCOUNT),
            "roleRef": role_ref,
            "subjects": [{"kind": "ServiceAccount", "name": WORKER_ACCOUNT, "namespace": KUEUE_NAMESPACE}],
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata(
                token_secret_name(rotation),
                KUEUE_NAMESPACE,
                annotations={SERVICE_ACCOUNT_ANNOTATION: WORKER_ACCOUNT},
            ),
            "type": TOKEN_TYPE,
        },
    ]


def dispatched(workload: dict[str, Any]) -> dict[str, Any]:
    """A TrainJob as the manager holds it: `spec.managedBy` is MultiKueue's, so the manager's Trainer leaves it
    alone (kubeflow/trainer v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go:141-152; its controller skips such a
    job, pkg/controller/trainjob_controller.go:89) and Kueue dispatches it (Kueue's TrainJob adapter dispatches only
    a job whose managedBy is MultiKueue's: pkg/controller/jobs/trainjob/trainjob_multikueue_adapter.go:90-100)."""
    if workload["kind"] != "TrainJob":
        raise ValueError(f"a fleet dispatches TrainJobs, not {workload['kind']}")
    marked = copy.deepcopy(workload)
    marked["spec"] = {**marked["spec"], "managedBy": CONTROLLER}
    return marked


def manager_flavor(pool: Pool) -> dict[str, Any]:
    """The pools of one name across a queue's workers as one ResourceFlavor of the manager (named as the pool, with
    its node labels, taints and topology), so that the manager admits a job on the flavor of the pool its pods
    select, whichever worker then runs it."""
    return resource_flavor(pool)


def manager_cluster_queue(name: str, shares: list[tuple[str, QueueSpec, list[Pool]]]) -> dict[str, Any]:
    """The manager's ClusterQueue of a queue: per pool name, what the workers' queues of that name hold on their
    pools of that name, summed (quota, borrowing and lending limits, as each worker's own ClusterQueue has them);
    the untainted default flavor for launchers; and the queue's MultiKueue check. `shares`: per worker having the
    queue, its name, its QueueSpec and the pools the queue draws on there; the first gives the cohort and weight.

    One flavor per pool, not per worker's pool: the manager charges a job to the first flavor with room, whichever
    worker MultiKueue then hands it to, so a flavor per worker left a job only one worker could hold pending behind
    quota charged for a job another worker ran (seen in simulate). Summed, the manager admits while any worker may
    have room; each worker's own ClusterQueue then decides.

    The manager does not preempt: each worker's ClusterQueue does, and preemption across the manager and the
    workers is what Kueue's MultiKueueOrchestratedPreemption gate coordinates (alpha and off in v0.19.2,
    pkg/features/kube_features.go:840-842)."""
    covered: list[str] = []
    summed: dict[str, dict[str, dict[str, str]]] = {}  # flavor -> resource -> field -> quantity
    entries: dict[tuple[str, str], list[dict[str, Any]]] = {}  # each worker's entry of a flavor's resource
    for _worker, queue, pools in shares:
        # Without its ProvisioningRequest checks: on the manager only MultiKueue admits (the worker provisions).
        bare = [p.model_copy(update={"provisioning_class": None}) for p in pools]
        group = cluster_queue(queue, bare)["spec"]["resourceGroups"][0]
        covered += [r for r in group["coveredResources"] if r not in covered]
        for flavor in group["flavors"]:
            if flavor["name"] == DEFAULT_FLAVOR:
                continue
            resources = summed.setdefault(flavor["name"], {})
            for entry in flavor["resources"]:
                entries.setdefault((flavor["name"], entry["name"]), []).append(entry)
                fields = resources.setdefault(entry["name"], {})
                for field, value in entry.items():
                    if field != "name":
                        fields[field] = quantity.add(fields[field], value) if field in fields else str(value)
    for resources in summed.values():  # as Kueue's webhook writes them back (quantity.stored)
        for fields in resources.values():
            fields.update({field: quantity.stored(value) for field, value in fields.items()})
    for (flavor, resource), given in entries.items():
        # No borrowing or lending limit is no limit: a sum holds one only where every worker sets it.
        for limit in ("borrowingLimit", "lendingLimit"):
            if not all(limit in e for e in given):
                summed[flavor][resource].pop(limit, None)
    # Every flavor of a resource group covers the group's resources, in its order (Kueue's webhook).
    aligned = [
        {"name": flavor, "resources": [{"name": r, **resources.get(r, {"nominalQuota": "0"})} for r in covered]}
        for flavor, resources in summed.items()
    ]
    aligned.append(
        {"name": DEFAULT_FLAVOR, "resources": [{"name": r, "nominalQuota": default_flavor_quota(r)} for r in covered]}
    )
    first = shares[0][1]
    spec: dict[str, Any] = {
        "cohortName": first.cohort or DEFAULT_COHORT,
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "fairSharing": {"weight": quantity.stored(first.weight)},
        "resourceGroups": [{"coveredResources": covered, "flavors": aligned}],
        "admissionChecksStrategy": {"admissionChecks": [{"name": name}]},
    }
    return {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": metadata(name), "spec": spec}
