"""One bad manifest or config per rule: a correct object from our builders, broken in one way."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from components.manifests import trainingjob
from components.manifests.plan import plan
from components.rules.rule import Settings, Subject
from components.rules.subjects import from_objects, from_pools
from tests.support.factories import EFA_RESOURCES, job, pool

Mutation = Callable[[dict[str, Any]], None]


def good(fabric: str = "roce", launcher: str = "pytorch") -> list[dict[str, Any]]:
    """A 2-node job on a RoCE pool under Volcano, with a claim: every rule passes."""
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "ckpt", "namespace": "training"},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Ti"}}},
    }
    spec = job(
        launcher=launcher,
        volumes=[{"claim": "ckpt", "mountPath": "/checkpoints"}],
        backoffLimit=3,
        resources=EFA_RESOURCES if fabric == "efa" else {},
    )
    return [claim, *trainingjob.objects(plan(spec, pool(fabric), "volcano", "research"))]


def _worker(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    return _worker(obj)["spec"]["containers"][0]


def _set_env(obj: dict[str, Any], name: str, value: str) -> None:
    env = _container(obj)["env"]
    env[:] = [e for e in env if e["name"] != name] + [{"name": name, "value": value}]


def _no_tolerations(obj: dict[str, Any]) -> None:
    del _worker(obj)["spec"]["tolerations"]


def _gpu_request_differs(obj: dict[str, Any]) -> None:
    _container(obj)["resources"]["requests"]["nvidia.com/gpu"] = 4


def _no_shm(obj: dict[str, Any]) -> None:
    _container(obj)["volumeMounts"] = [m for m in _container(obj)["volumeMounts"] if m["mountPath"] != "/dev/shm"]


def _not_gang(obj: dict[str, Any]) -> None:
    del obj["spec"]["runPolicy"]["schedulingPolicy"]
    for replica in obj["spec"]["pytorchReplicaSpecs"].values():
        del replica["template"]["spec"]["schedulerName"]


def _nccl_on_eth0(obj: dict[str, Any]) -> None:
    _set_env(obj, "NCCL_SOCKET_IFNAME", "eth0")


def _rdma_without_device(obj: dict[str, Any]) -> None:
    for section in ("limits", "requests"):
        del _container(obj)["resources"][section]["rdma/rdma_shared_device_a"]


def _latest_image(obj: dict[str, Any]) -> None:
    _container(obj)["image"] = "registry.example.com/training:latest"


def _host_network(obj: dict[str, Any]) -> None:
    _worker(obj)["spec"]["hostIPC"] = True


def _no_backoff(obj: dict[str, Any]) -> None:
    del obj["spec"]["runPolicy"]["backoffLimit"]


def _debug_info(obj: dict[str, Any]) -> None:
    _set_env(obj, "NCCL_DEBUG", "INFO")


def _claim_rwo(objects: list[dict[str, Any]]) -> None:
    objects[0]["spec"]["accessModes"] = ["ReadWriteOnce"]


def _no_fabric_network(obj: dict[str, Any]) -> None:
    """The workers lose their RoCE network (and bootstrap on eth0, so that only the attachment is wrong)."""
    del _worker(obj)["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    _set_env(obj, "NCCL_SOCKET_IFNAME", "eth0")


WORKLOAD_CASES: dict[str, tuple[Mutation, Settings]] = {
    "gpu-placement": (_no_tolerations, Settings()),
    "gpu-requests-equal-limits": (_gpu_request_differs, Settings()),
    "shared-memory": (_no_shm, Settings()),
    "gang-scheduling": (_not_gang, Settings(gang_scheduler="volcano")),
    "nccl-socket-interface": (_nccl_on_eth0, Settings()),
    "rdma-devices": (_rdma_without_device, Settings()),
    "pinned-images": (_latest_image, Settings()),
    "host-namespaces": (_host_network, Settings()),
    "job-robustness": (_no_backoff, Settings()),
    "nccl-debug-production": (_debug_info, Settings(production=True)),
}
"""Per rule, the one change that breaks it, and the settings the rule needs to look."""


def bad_objects(rule: str) -> tuple[list[Subject], Settings]:
    """The corpus case of a rule: the subjects and settings under which it (and ideally only it) fires."""
    objects = good()
    if rule == "checkpoint-rwx":
        _claim_rwo(objects)
        return from_objects(objects), Settings()
    if rule == "fabric-attached":
        # The rule needs to know the pool's fabric: the stack's pools are subjects too, as in `check --stack`.
        workload = copy.deepcopy(objects[-1])
        _no_fabric_network(workload)
        return from_objects([*objects[:-1], workload]) + from_pools(
            [pool("roce", networks=[], rails=EIGHT_RAILS)]
        ), Settings()
    mutate, settings = WORKLOAD_CASES[rule]
    workload = copy.deepcopy(objects[-1])
    mutate(workload)
    return from_objects([*objects[:-1], workload]), settings


EIGHT_RAILS = {
    "count": 8,
    "type": "macvlan",
    "interfaces": "ens{n}f0",
    "devices": "mlx5_{i}",
    "range": "192.168.0.0/16",
}
"""A RoCE pool's rails, one per GPU: a pool the rdma-rails rule has nothing to say about."""

CLOUD_CASES: dict[str, Subject] = {
    "rdma-rails": Subject(
        "NodePool/h100",
        "NodePool",
        {
            "gpus": 8,
            "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            "existing": True,
            "fabric": "roce",
            "rdma_advice": ["pool 'h100' (roce) attaches 1 rail for 8 GPUs per node, so 7 GPUs share another's NIC"],
        },
    ),
    "gpu-pool-taints": Subject(
        "NodePool/p5", "NodePool", {"gpus": 8, "taints": [], "efa": False, "placement_group": False, "zones": None}
    ),
    "efa-placement": Subject(
        "NodePool/p5",
        "NodePool",
        {
            "gpus": 8,
            "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            "efa": True,
            "placement_group": False,
            "zones": 1,
        },
    ),
    "storage-retained": Subject(
        "StorageClass/nfs",
        "StorageClass",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "nfs"},
            "provisioner": "nfs.csi.k8s.io",
        },
    ),
}
