"""A fleet's manager and worker objects as the simulate tests build them until render makes them (issue 39): our own
reduction of what Kueue's MultiKueue needs, from the workers' rendered stacks.

The shapes are Kueue's (kubernetes-sigs/kueue v0.19.2; its docs "Setup a MultiKueue environment" and "Run TrainJobs in
Multi-Cluster"): a MultiKueueCluster per worker whose kubeconfig is a Secret in Kueue's namespace
(apis/kueue/v1beta2/multikueue_types.go:24, 53-66), a MultiKueueConfig and an AdmissionCheck of controller
`kueue.x-k8s.io/multikueue` per queue (multikueue_types.go:37), a ClusterQueue per queue that takes that check
(apis/kueue/v1beta2/clusterqueue_types.go) and the workers' ResourceFlavors, the workers' LocalQueues (a Workload copy keeps its LocalQueue's name:
pkg/controller/admissionchecks/multikueue/workload.go:1348-1356), their runtimes (the manager's Kueue builds a
TrainJob's pods from its runtime: pkg/controller/jobs/trainjob/trainjob_controller.go:199-240) and each TrainJob
with `spec.managedBy: kueue.x-k8s.io/multikueue`.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from decimal import Decimal
from typing import Any

import yaml

from components import quantity
from components.render import Rendered
from components.simulate import kueue
from components.simulate.fleet import KUEUE_API, MULTIKUEUE, TOKEN_TYPE

KUEUE_NAMESPACE = "kueue-system"
ACCOUNT = "gpu-training-multikueue"
DEFAULT_FLAVOR = "default-flavor"
TRAINJOB_FRAMEWORK = "trainer.kubeflow.org/trainjob"

WORKER_RULES: tuple[dict[str, Any], ...] = (
    # The manager creates, reads, lists, watches, updates and deletes its Workloads' copies on a worker
    # (multikueue/workload.go, multikueuecluster.go's watch and GC) and patches their status.
    {
        "apiGroups": ["kueue.x-k8s.io"],
        "resources": ["workloads"],
        "verbs": ["create", "delete", "get", "list", "update", "watch"],
    },
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get", "patch", "update"]},
    # It creates, reads and deletes the TrainJob there and watches TrainJobs
    # (pkg/controller/jobs/trainjob/trainjob_multikueue_adapter.go: SyncJob, DeleteRemoteObject, GetEmptyList).
    {
        "apiGroups": ["trainer.kubeflow.org"],
        "resources": ["trainjobs"],
        "verbs": ["create", "delete", "get", "list", "watch"],
    },
)
"""The least a MultiKueue manager needs on a worker to dispatch TrainJobs."""


def _meta(name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, **({"namespace": namespace} if namespace else {}), **extra}


def worker_access() -> list[dict[str, Any]]:
    """What the manager acts as on a worker: a ServiceAccount in Kueue's namespace bound to WORKER_RULES, and a
    Secret its token controller fills with the account's token."""
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(ACCOUNT, KUEUE_NAMESPACE)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _meta(ACCOUNT),
            "rules": [copy.deepcopy(r) for r in WORKER_RULES],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(ACCOUNT),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ACCOUNT},
            "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": KUEUE_NAMESPACE}],
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": _meta(
                f"{ACCOUNT}-token", KUEUE_NAMESPACE, annotations={"kubernetes.io/service-account.name": ACCOUNT}
            ),
            "type": TOKEN_TYPE,
        },
    ]


def _of_kind(rendered: Rendered, kind: str) -> list[dict[str, Any]]:
    return [o for o in rendered.objects if o["kind"] == kind]


def _manager_queue(name: str, shares: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The manager's ClusterQueue of a queue: each flavor the workers' queues of that name have (a pool's, alike on
    every worker that has the pool) with the sum of their quotas, and the queue's MultiKueue check.

    Summed, not one flavor per worker: the manager charges a job to the first flavor that fits, whichever worker then
    runs it, so a flavor per worker would hold a job that one worker alone can take behind quota another worker's job
    was charged to (seen on the fleet branch's example: an 8-node job pending on the manager while its one worker
    was idle)."""
    covered: list[str] = []
    totals: dict[str, dict[str, Decimal]] = {}
    for _, queue in shares:
        group = queue["spec"]["resourceGroups"][0]
        covered += [r for r in group["coveredResources"] if r not in covered]
        for flavor in group["flavors"]:
            summed = totals.setdefault(flavor["name"], {})
            for entry in flavor["resources"]:
                summed[entry["name"]] = summed.get(entry["name"], Decimal(0)) + quantity.parse(entry["nominalQuota"])
    # Every flavor of a resource group covers the group's resources, in its order (Kueue's webhook); the default
    # flavor, for pods that take no GPU, last.
    order = [f for f in totals if f != DEFAULT_FLAVOR] + [f for f in totals if f == DEFAULT_FLAVOR]
    flavors = [
        {
            "name": flavor,
            "resources": [
                {"name": r, "nominalQuota": quantity.canonical(str(totals[flavor].get(r, Decimal(0))))} for r in covered
            ],
        }
        for flavor in order
    ]
    return {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": _meta(name),
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
            "admissionChecksStrategy": {"admissionChecks": [{"name": name}]},
        },
    }


def manager_objects(workers: dict[str, Rendered], jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The manager's objects for `workers` (by name, in preference order) and `jobs` (TrainJobs as a worker's stack
    renders them): namespaces, flavors, MultiKueue objects, queues, runtimes, and the jobs marked for MultiKueue."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()

    def add(obj: dict[str, Any]) -> None:
        key = (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if key not in seen:
            seen.add(key)
            out.append(obj)

    for rendered in workers.values():
        for obj in _of_kind(rendered, "Namespace"):
            add(copy.deepcopy(obj))
    queues: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for worker, rendered in workers.items():
        flavors = {f["metadata"]["name"]: f for f in _of_kind(rendered, "ResourceFlavor")}
        for queue in _of_kind(rendered, "ClusterQueue"):
            queues.setdefault(queue["metadata"]["name"], []).append((worker, queue))
            for entry in queue["spec"]["resourceGroups"][0]["flavors"]:
                add(copy.deepcopy(flavors[entry["name"]]))
        add(
            {
                "apiVersion": KUEUE_API,
                "kind": "MultiKueueCluster",
                "metadata": _meta(worker),
                "spec": {
                    "clusterSource": {"kubeConfig": {"location": f"multikueue-{worker}", "locationType": "Secret"}}
                },
            }
        )
    for name, shares in queues.items():
        add(
            {
                "apiVersion": KUEUE_API,
                "kind": "MultiKueueConfig",
                "metadata": _meta(name),
                "spec": {"clusters": [worker for worker, _ in shares]},
            }
        )
        add(
            {
                "apiVersion": KUEUE_API,
                "kind": "AdmissionCheck",
                "metadata": _meta(name),
                "spec": {
                    "controllerName": MULTIKUEUE,
                    "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": name},
                },
            }
        )
        add(_manager_queue(name, shares))
    for rendered in workers.values():
        for kind in ("LocalQueue", "ClusterTrainingRuntime"):
            for obj in _of_kind(rendered, kind):
                add(copy.deepcopy(obj))
    for job in jobs:
        marked = copy.deepcopy(job)
        marked["spec"]["managedBy"] = MULTIKUEUE
        add(marked)
    return out


def manager(rendered: Rendered, workers: dict[str, Rendered], jobs: list[dict[str, Any]]) -> Rendered:
    """The manager's stack (Kueue and Trainer, no pool) with the fleet's objects, its Kueue managing TrainJobs only
    and without all-or-nothing admission.

    TrainJobs only: MultiKueue watches the kind of every integration the manager enables on every worker, and holds a
    worker unconnected until each watch is up (multikueuecluster.go:349-366), which the least RBAC would refuse. No
    waitForPodsReady: a TrainJob's pods are ready when its JobSet's are (trainjob_controller.go:343-358), and its
    JobSet is on the worker, so on the manager blockAdmission would admit one job at a time, forever."""
    found = kueue.release(rendered)
    assert found is not None, "the manager's stack installs Kueue"
    config = yaml.safe_load(found.values["managerConfig"]["controllerManagerConfigYaml"])
    config["integrations"] = {"frameworks": [TRAINJOB_FRAMEWORK]}
    config.pop("waitForPodsReady", None)
    values = {**found.values, "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config)}}
    releases = tuple(replace(r, values=values) if r is found else r for r in rendered.addons.releases)
    objects = [*rendered.objects, *manager_objects(workers, jobs)]
    return replace(rendered, objects=tuple(objects), addons=replace(rendered.addons, releases=releases))
