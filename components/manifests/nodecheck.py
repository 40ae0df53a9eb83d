"""The node check's objects: its namespace's service account and rights on nodes, its scripts, and one
DaemonSet per checked pool that runs on the pool's nodes that have no result yet."""

from __future__ import annotations

from typing import Any

from components.images import mirror_object
from components.manifests.fabriccheck import script
from components.manifests.meta import metadata
from components.manifests.pod import SHM_VOLUME, env_list, shm_volume, tolerations
from components.models.nodepool import nccl_bytes
from components.nodecheck import (
    DCGM_WAIT_SECONDS,
    FAILED_TAINT,
    GKE_DRIVER_DIR,
    KUBECTL_IMAGE,
    LEGACY_TAINT,
    NVLINK_SIZES,
    RESULT_LABEL,
    RUNTIME_CLASS,
    STARTUP_TAINT,
    NodeCheck,
)
from components.wellknown import NODE_CHECK_KEY
from components.wellknown import NODE_CHECK_NAMESPACE as NAMESPACE

SERVICE_ACCOUNT = "node-check"
ROLE = "gpu-training-node-check"
SCRIPTS_CONFIGMAP = "node-check-scripts"
SCRIPTS = ("node-check.sh", "node-verdict.sh", "nccl-verdict.sh")
SCRIPTS_DIR = "/etc/node-check"
RESULTS_DIR = "/results"
CHECK_LABEL = "gpu-training/node-check-pool"
FINGERPRINT_ANNOTATION = "gpu-training/node-check-inputs"
# GKE's device plugin mounts the host's driver folder here in containers that request GPUs; the check, which
# requests none, mounts it itself.
_GKE_NVIDIA_DIR = "/usr/local/nvidia"
_GKE_NVIDIA = {"LD_LIBRARY_PATH": f"{_GKE_NVIDIA_DIR}/lib64", "PATH": f"{_GKE_NVIDIA_DIR}/bin:/usr/bin:/bin"}
# What NVIDIA's container runtime reads to give a container GPUs: all of them, with every driver capability
# (DCGM's diagnostics need compute and utility; the all_reduce compute).
_NVIDIA_RUNTIME = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "all"}


def objects(checks: list[NodeCheck]) -> list[dict[str, Any]]:
    """Everything the checks need, in apply order: RBAC and scripts once, then a DaemonSet per pool."""
    if not checks:
        return []
    replaces = any(c.replaces_failed for c in checks)
    return [
        service_account(),
        cluster_role(replaces_failed=replaces),
        cluster_role_binding(),
        configmap(),
        *(daemonset(c) for c in checks),
    ]


def service_account() -> dict[str, Any]:
    """The identity the verdict updates nodes as."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(SERVICE_ACCOUNT, NAMESPACE)}


def cluster_role(*, replaces_failed: bool = False) -> dict[str, Any]:
    """What the verdict may do: read and label, annotate and untaint nodes, set their condition, post events;
    on Karpenter pools, find a failed node's NodeClaim and delete it."""
    rules: list[dict[str, Any]] = [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
        # kubectl reads the status subresource before it patches it.
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    ]
    if replaces_failed:
        # A NodeClaim names its node only in its status: the verdict lists them to find the node's own.
        rules.append({"apiGroups": ["karpenter.sh"], "resources": ["nodeclaims"], "verbs": ["list", "delete"]})
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(ROLE),
        "rules": rules,
    }


def cluster_role_binding() -> dict[str, Any]:
    """The role, granted to the check's service account."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(ROLE),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}],
    }


def configmap() -> dict[str, Any]:
    """node-check.sh (the steps), node-verdict.sh (the judge) and nccl-verdict.sh (the NVLink test's judge)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(SCRIPTS_CONFIGMAP, NAMESPACE),
        "data": {name: script(name) for name in SCRIPTS},
    }


def environment(check: NodeCheck) -> dict[str, str]:
    """What the steps and the verdict read: the GPUs, levels, DCGM engine, NICs and floors of the pool."""
    nics = check.nics
    return {
        "RESULTS": RESULTS_DIR,
        "EXPECT_GPUS": str(check.pool.gpus_per_node),
        "DCGM_LEVEL": str(check.dcgm_level),
        "DCGM_ENGINE": check.dcgm_engine,
        "DCGM_WAIT": str(DCGM_WAIT_SECONDS),
        "RDMA_NAMES": " ".join(nics.rdma_names),
        "RDMA_COUNT": str(nics.rdma_count),
        "NETDEVS": " ".join(nics.netdevs),
        "MIN_LINK_GBPS": str(int(nics.min_gbps)),
        "FLOOR_GBS": f"{check.floor_gbs:g}",
        "NVLINK_MIN": NVLINK_SIZES[0],
        "MAX_BYTES": str(nccl_bytes(NVLINK_SIZES[1])),
        "NCCL_TESTS": check.tests,
        "CHECK_TIMEOUT": str(check.timeout_minutes * 60),
        "NVLINK_FABRIC": "1" if check.pool.nvlink_domain_nodes else "",
        "STARTUP_TAINT": STARTUP_TAINT.key,
        "LEGACY_TAINT": LEGACY_TAINT.key,
        "FAILED_TAINT": f"{FAILED_TAINT.key}={FAILED_TAINT.value}:{FAILED_TAINT.effect}",
        "REPLACE_FAILED": "nodeclaim" if check.replaces_failed else "",
    }


def daemonset(check: NodeCheck) -> dict[str, Any]:
    """The pool's check: on each of its nodes that has the check's label and no result, the steps in order
    (GPU and NICs, then NVLink), privileged and seeing every GPU without requesting one (nodecheck.GpuAccess),
    then the verdict, which labels the node and so ends the pod; every image through the pool's mirror."""
    pool = check.pool
    labels = {CHECK_LABEL: pool.name}
    env = env_list(environment(check))
    node = [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    gke = check.gpu_access == "gke-host"
    gpu_env = env_list(_GKE_NVIDIA if gke else _NVIDIA_RUNTIME)
    mounts = [
        {"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True},
        {"name": "results", "mountPath": RESULTS_DIR},
    ]
    gpu_mounts = [
        {"name": SHM_VOLUME, "mountPath": "/dev/shm"},
        *([{"name": "nvidia", "mountPath": _GKE_NVIDIA_DIR, "readOnly": True}] if gke else []),
    ]

    def step(name: str, image: str, steps: list[str], *, gpu: bool) -> dict[str, Any]:
        run = " && ".join(f"sh {SCRIPTS_DIR}/node-check.sh {s}" for s in steps)
        container: dict[str, Any] = {
            "name": name,
            "image": image,
            "command": ["sh", "-c", run],
            "env": [*node, *env, *(gpu_env if gpu else [])],
            "volumeMounts": [*mounts, *(gpu_mounts if gpu else [])],
        }
        if gpu:
            # Every GPU's device nodes without a device-plugin grant; DCGM's diagnostics also need the GPUs'
            # admin interfaces, and the XID check the kernel's ring buffer.
            container["securityContext"] = {"privileged": True}
        return container

    init = [step("gpu", check.dcgm_image, ["gpu", "nics"], gpu=True)]
    if check.nvlink_test:
        init.append(step("nvlink", check.image, ["nvlink"], gpu=True))
    verdict = step("verdict", pool.kubectl_image or KUBECTL_IMAGE, ["verdict", "hold"], gpu=False)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": RESULT_LABEL, "operator": "DoesNotExist"}]}]
            }
        }
    }
    volumes: list[dict[str, Any]] = [
        {"name": "scripts", "configMap": {"name": SCRIPTS_CONFIGMAP, "defaultMode": 0o555}},
        {"name": "results", "emptyDir": {}},
        shm_volume("1Gi"),
    ]
    if gke:
        volumes.append({"name": "nvidia", "hostPath": {"path": GKE_DRIVER_DIR, "type": "Directory"}})
    spec: dict[str, Any] = {
        "serviceAccountName": SERVICE_ACCOUNT,
        # The NIC check reads the node's own interfaces, which only the host's network shows.
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "nodeSelector": {**pool.node_selector, NODE_CHECK_KEY: "required"},
        "affinity": affinity,
        # The startup taint (and an earlier release's) is the one thing besides the pool's own taints that this
        # pod tolerates, and nothing else may: a node is held until this pod says so.
        "tolerations": tolerations([*pool.taints, STARTUP_TAINT, LEGACY_TAINT]),
        "terminationGracePeriodSeconds": 5,
        "initContainers": init,
        "containers": [verdict],
        "volumes": volumes,
    }
    if check.gpu_access == "runtime-class":
        spec["runtimeClassName"] = RUNTIME_CLASS
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        # The check runs whenever a node joins, for minutes (DCGM level 2) to an hour: `pulumi up` does not wait
        # for it as for a rollout.
        "metadata": metadata(check.name, NAMESPACE, labels=labels, annotations={"pulumi.com/skipAwait": "true"}),
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {
                    "labels": {**labels},
                    "annotations": {FINGERPRINT_ANNOTATION: check.fingerprint()},
                },
                "spec": spec,
            },
        },
    }
    return mirror_object(pool.registry_mirror, daemonset)
