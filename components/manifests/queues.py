"""Queues of GPU capacity: Volcano Queues, or Kueue ResourceFlavors, ClusterQueues and LocalQueues, with the
ProvisioningRequest admission checks of pools provisioned all at once."""

from __future__ import annotations

from typing import Any

from components import efadra, gpudirect, nvlink, provisioning, quantity
from components.fabric import EFA_RESOURCE
from components.manifests.meta import metadata
from components.manifests.pod import GPU_RESOURCE
from components.models.platform import QueueSpec
from components.pool import Pool
from components.topology import Topology

KUEUE_API = "kueue.x-k8s.io/v1beta2"
DEFAULT_FLAVOR = "default-flavor"
# One cohort for every ClusterQueue of the stack unless a queue names its own: without a cohort a
# ClusterQueue can neither borrow nor lend (v1beta2 `spec.cohortName`, kubernetes-sigs/kueue v0.19.2
# apis/kueue/v1beta2/clusterqueue_types.go).
DEFAULT_COHORT = "gpu-training"
# Queues budget GPUs. For nodes whose size the catalog does not know, CPU and memory get a bound
# no node reaches, so that only GPUs limit admission.
_UNBOUNDED_CPU_PER_NODE = 1024
_UNBOUNDED_MEMORY_GIB_PER_NODE = 16384


# Kueue's default is `Never` for all three (apis/kueue/v1beta2/clusterqueue_types.go), which leaves
# PriorityClasses inert:
# - withinClusterQueue LowerPriority: a job that does not fit its queue's quota evicts lower-priority
#   jobs of the same queue;
# - reclaimWithinCohort Any: a queue below its quota takes back what others borrowed, whatever
#   their priority (with fair sharing, only from queues above their fair share);
# - borrowWithinCohort LowerPriority: a borrowing job may evict lower-priority jobs of other queues.
#   It is for classical preemption (the field's description in the CRD): while the manager's fair
#   sharing is on, reclaimWithinCohort already lets a borrower preempt (canPreemptWhileBorrowing in
#   pkg/scheduler/flavorassigner/flavorassigner.go) and fair-share rules pick the victims.
# The CRD refuses borrowWithinCohort with reclaimWithinCohort Never (its x-kubernetes-validations).
def preemption() -> dict[str, Any]:
    """A ClusterQueue's preemption policies (a fresh copy for each queue)."""
    return {
        "withinClusterQueue": "LowerPriority",
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }


# Volcano's PodGroup webhook refuses a group on a queue that is not Open yet, and its queue controller opens a
# new queue a moment after it is created: `pulumi up` waits for that before the jobs that use the queue (seen in
# simulate; pulumi-kubernetes >= 4.18 reads this annotation on any kind).
QUEUE_OPEN = {"pulumi.com/waitFor": "jsonpath={.status.state}=Open"}


def volcano_queue(queue: QueueSpec) -> dict[str, Any]:
    """A Volcano Queue capped at the queue's GPUs, which `pulumi up` waits to see Open."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": metadata(queue.name, annotations=QUEUE_OPEN),
        "spec": {
            "weight": queue.weight,
            "reclaimable": queue.reclaimable,
            "capability": quantity.quantities({GPU_RESOURCE: queue.gpus}),
        },
    }


def default_flavor() -> dict[str, Any]:
    """The untainted ResourceFlavor for CPU-only pods of a job, such as an MPI launcher."""
    return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": metadata(DEFAULT_FLAVOR), "spec": {}}


def default_flavor_quota(resource: str) -> str:
    """The default flavor's quota of a resource: CPU and memory no node reaches, none of any other."""
    if resource == "cpu":
        return quantity.stored(_UNBOUNDED_CPU_PER_NODE)
    if resource == "memory":
        return quantity.stored(f"{_UNBOUNDED_MEMORY_GIB_PER_NODE}Gi")
    return "0"


def resource_flavor(pool: Pool) -> dict[str, Any]:
    """The Kueue ResourceFlavor of a pool: its node labels and taints."""
    spec: dict[str, Any] = {"nodeLabels": dict(pool.node_selector)}
    if pool.taints:
        spec["nodeTaints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints]
    if pool.topology is not None:
        spec["topologyName"] = pool.topology.name
    return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": metadata(pool.name), "spec": spec}


def kueue_topology(topology: Topology) -> dict[str, Any]:
    """A Kueue Topology: the node labels of its levels, coarsest first, the hostname last."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "Topology",
        "metadata": metadata(topology.name),
        "spec": {"levels": [{"nodeLabel": level.node_label} for level in topology.levels]},
    }


# Kueue (v0.19, KueueDRAIntegration on by default) counts the devices a workload's resource claims ask for as a
# logical resource that a ClusterQueue must cover, and refuses a workload whose DeviceClass no mapping names
# ("DeviceClass X is not mapped in DRA configuration", pkg/dra/claims.go); found in simulate. The devices come with
# the node, so the quota is what the pool's nodes have.
_DRA_RESOURCES = {
    nvlink.CHANNEL_DEVICE_CLASS: "gpu-training/imex-channel",
    gpudirect.RDMA_DEVICE_CLASS: "gpu-training/rdma-nic",
    efadra.DEVICE_CLASS: "gpu-training/efa",
}


def claimed_devices(pool: Pool) -> dict[str, int]:
    """The DeviceClasses a worker on the pool claims devices of, and how many per node."""
    found = {nvlink.CHANNEL_DEVICE_CLASS: 1} if pool.nvlink_domain_nodes else {}
    if pool.dranet:
        found[gpudirect.RDMA_DEVICE_CLASS] = pool.gpu_nics
    if pool.efa_dra:
        found[efadra.DEVICE_CLASS] = pool.efa_interfaces
    return found


def device_class_mappings(pools: list[Pool]) -> list[dict[str, Any]]:
    """Kueue's `resources.deviceClassMappings`: each DeviceClass the pools' workers claim, as the logical resource
    their ClusterQueues cover."""
    classes = sorted({device_class for pool in pools for device_class in claimed_devices(pool)})
    return [{"name": _DRA_RESOURCES[c], "deviceClassNames": [c]} for c in classes]


def pool_capacity(pool: Pool) -> dict[str, str]:
    """What a full pool offers, per resource a worker on it requests."""
    nodes = pool.max_nodes
    capacity: dict[str, str | int] = {
        "cpu": (pool.vcpus or _UNBOUNDED_CPU_PER_NODE) * nodes,
        "memory": f"{(pool.memory_gib or _UNBOUNDED_MEMORY_GIB_PER_NODE) * nodes}Gi",
        GPU_RESOURCE: pool.gpus_per_node * nodes,
    }
    if pool.fabric == "efa" and not pool.efa_dra:
        capacity[EFA_RESOURCE] = pool.efa_interfaces * nodes
    if pool.rdma_resource:
        capacity[pool.rdma_resource] = pool.gpus_per_node * nodes
    for net in pool.networks:
        if net.resource_name:
            capacity[net.resource_name] = pool.gpus_per_node * nodes
    for device_class, count in claimed_devices(pool).items():
        capacity[_DRA_RESOURCES[device_class]] = count * nodes
    return quantity.quantities(capacity)


def admission_check_name(pool: Pool) -> str:
    """The name of the pool's ProvisioningRequest AdmissionCheck and of its ProvisioningRequestConfig."""
    return f"{pool.name}-provisioning"


def provisioning_request_config(pool: Pool) -> dict[str, Any]:
    """The ProvisioningRequestConfig of a pool provisioned through ProvisioningRequests: its class, only the GPU pod
    sets (an MPIJob's launcher stays out, kueue#2260), identical pod sets merged into one (a PyTorchJob's master and
    workers), and the pool's retries with Kueue's backoff."""
    if pool.provisioning_class is None:
        raise ValueError(f"pool {pool.name} is not provisioned through ProvisioningRequests")
    return {
        "apiVersion": KUEUE_API,
        "kind": "ProvisioningRequestConfig",
        "metadata": metadata(admission_check_name(pool)),
        "spec": {
            "provisioningClassName": pool.provisioning_class,
            "managedResources": [provisioning.MANAGED_RESOURCE],
            # GKE's queued provisioning takes one pod set per request; merged, a master and its workers are one.
            "podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements",
            "retryStrategy": {
                "backoffLimitCount": pool.provisioning_retries,
                "backoffBaseSeconds": provisioning.BACKOFF_BASE_SECONDS,
                "backoffMaxSeconds": provisioning.BACKOFF_MAX_SECONDS,
            },
        },
    }


def admission_check(pool: Pool) -> dict[str, Any]:
    """The AdmissionCheck that holds a job on the pool until its ProvisioningRequest is provisioned."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "AdmissionCheck",
        "metadata": metadata(admission_check_name(pool)),
        "spec": {
            "controllerName": provisioning.CONTROLLER,
            "parameters": {
                "apiGroup": KUEUE_API.partition("/")[0],
                "kind": "ProvisioningRequestConfig",
                "name": admission_check_name(pool),
            },
        },
    }


def cluster_queue(queue: QueueSpec, pools: list[Pool]) -> dict[str, Any]:
    """A Kueue ClusterQueue: the queue's GPUs on each of its pools, other resources up to pool size,
    in its cohort, preempting lower priorities and reclaiming what it lent."""
    capacities = {pool.name: pool_capacity(pool) for pool in pools}
    covered: list[str] = []
    for capacity in capacities.values():
        covered += [r for r in capacity if r not in covered]
    flavors = []
    for pool in pools:
        capacity = capacities[pool.name]
        resources = []
        for resource in covered:
            quota = capacity.get(resource, "0")
            entry: dict[str, Any] = {"name": resource, "nominalQuota": quantity.stored(quota)}
            if resource == GPU_RESOURCE:
                entry.update(_gpu_quota(queue, int(quota)))
            resources.append(entry)
        flavors.append({"name": pool.name, "resources": resources})
    # Launchers (mpirun) need no GPU and tolerate no GPU taint: the untainted flavor admits them.
    flavors.append(
        {
            "name": DEFAULT_FLAVOR,
            "resources": [{"name": r, "nominalQuota": default_flavor_quota(r)} for r in covered],
        }
    )
    spec: dict[str, Any] = {
        "cohortName": queue.cohort or DEFAULT_COHORT,
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "preemption": preemption(),
        # Used while the manager's fairSharing is on: borrowed GPUs are shared in this proportion.
        "fairSharing": {"weight": quantity.stored(queue.weight)},  # a Quantity in Kueue's API
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
    }
    queued = [pool for pool in pools if pool.provisioning_class is not None]
    if queued:
        # Each check only where a job lands on its pool's flavor: a job on another pool, or a launcher alone on the
        # default flavor, is admitted on quota as before.
        spec["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": admission_check_name(p), "onFlavors": [p.name]} for p in queued]
        }
    return {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": metadata(queue.name), "spec": spec}


def _gpu_quota(queue: QueueSpec, pool_gpus: int) -> dict[str, str]:
    """The queue's GPUs on one pool, and its borrowing and lending limits there when set."""
    nominal = min(queue.gpus, pool_gpus)
    quota = {"nominalQuota": nominal}
    if queue.borrowing_limit is not None:
        quota["borrowingLimit"] = queue.borrowing_limit
    if queue.lending_limit is not None:
        # Kueue's webhook refuses a lendingLimit above the nominalQuota.
        quota["lendingLimit"] = min(queue.lending_limit, nominal)
    return {field: quantity.stored(value) for field, value in quota.items()}


def local_queue(queue: QueueSpec, namespace: str) -> dict[str, Any]:
    """A Kueue LocalQueue: how jobs in a namespace submit to a ClusterQueue."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": metadata(queue.name, namespace),
        "spec": {"clusterQueue": queue.name},
    }
