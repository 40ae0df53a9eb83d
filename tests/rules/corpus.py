"""One bad manifest or config per rule: a correct object from our builders, broken in one way."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from components.manifests import trainingjob
from components.manifests.plan import plan
from components.manifests.queues import kueue_topology
from components.manifests.trainingruntime import cluster_runtime, pool_plan, pool_runtimes, runtime_names
from components.models.job import Runtime
from components.rules.rule import Settings
from components.rules.subject import Subject
from components.rules.subjects import from_objects, from_pools
from components.topology import HOSTNAME_LABEL, provider_topology
from tests.support.factories import EFA_RESOURCES, gb200, job, pool

Mutation = Callable[[dict[str, Any]], None]


def _claim() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "ckpt", "namespace": "training"},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Ti"}}},
    }


def good(fabric: str = "roce", launcher: str = "pytorch") -> list[dict[str, Any]]:
    """A 2-node job on a RoCE pool under Volcano, with a claim: every rule passes."""
    claim = _claim()
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


def _tolerates_unverified_nodes(obj: dict[str, Any]) -> None:
    _worker(obj)["spec"]["tolerations"].append({"key": "gpu-training/node-check", "operator": "Exists"})


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


def _unexpanded_image(obj: dict[str, Any]) -> None:
    _container(obj)["image"] = "registry.example.com/training:{TAG}"


def _host_network(obj: dict[str, Any]) -> None:
    _worker(obj)["spec"]["hostIPC"] = True


def _small_gang(obj: dict[str, Any]) -> None:
    obj["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] = 1


def _more_ranks_than_gpus(obj: dict[str, Any]) -> None:
    obj["spec"]["nprocPerNode"] = 16


def _wrong_node_count(obj: dict[str, Any]) -> None:
    args = _container(obj)["args"]
    args[:] = ["--nnodes=3" if a.startswith("--nnodes") else a for a in args]


def _shell_variable_in_env(obj: dict[str, Any]) -> None:
    _set_env(obj, "DATA_DIR", "$HOME/data")


FAKE_TOKEN = "hf_" + "aB3dE5gH7jK9mN1p" + "Q2rS4tU6vW8xY0zA2c"
"""A Hugging Face token's shape (made of parts: no token literal sits in the repository for a scanner to find)."""


def _token_in_env(obj: dict[str, Any]) -> None:
    _set_env(obj, "HF_TOKEN", FAKE_TOKEN)


def _checkpoints_in_the_container(obj: dict[str, Any]) -> None:
    _container(obj)["args"] += ["--output_dir", "/workspace/out"]


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
    "gpu-placement": (_no_tolerations, Settings(cluster="existing")),
    "gpu-requests-equal-limits": (_gpu_request_differs, Settings()),
    "unverified-nodes": (_tolerates_unverified_nodes, Settings()),
    "shared-memory": (_no_shm, Settings()),
    "gang-scheduling": (_small_gang, Settings(gang_scheduler="volcano")),
    "processes-per-node": (_more_ranks_than_gpus, Settings()),
    "node-count": (_wrong_node_count, Settings()),
    "env-references": (_shell_variable_in_env, Settings()),
    "literal-credentials": (_token_in_env, Settings()),
    "checkpoint-path": (_checkpoints_in_the_container, Settings()),
    "nccl-socket-interface": (_nccl_on_eth0, Settings()),
    "rdma-devices": (_rdma_without_device, Settings()),
    "pinned-images": (_unexpanded_image, Settings()),
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
    if rule == "duplicate-keys":
        # What YAML loading noted: the worker's env stated twice, the second list kept.
        noted = [(), *[()] * (len(objects) - 2), ("`env` (lines 40 and 52)",)]
        return from_objects(objects, duplicates=noted), Settings()
    mutate, settings = WORKLOAD_CASES[rule]
    workload = copy.deepcopy(objects[-1])
    mutate(workload)
    # Placement is judged against the pools the pods need: the stack's, as in `check --stack`.
    pools = from_pools([pool("roce", networks=[], rails=EIGHT_RAILS)]) if rule == "gpu-placement" else []
    return from_objects([*objects[:-1], workload]) + pools, settings


def _topology_without_hostname() -> list[Subject]:
    """A pool's Kueue Topology and ResourceFlavor, the Topology's host level left out."""
    topology = kueue_topology(provider_topology("aws", "p5.48xlarge", []))
    topology["spec"]["levels"] = [lv for lv in topology["spec"]["levels"] if lv["nodeLabel"] != HOSTNAME_LABEL]
    flavor = {
        "apiVersion": topology["apiVersion"],
        "kind": "ResourceFlavor",
        "metadata": {"name": "p5"},
        "spec": {"nodeLabels": {"gpu-training/pool": "p5"}, "topologyName": topology["metadata"]["name"]},
    }
    return from_objects([topology, flavor])


QUEUE_CASES: dict[str, list[Subject]] = {"tas-hostname-level": _topology_without_hostname()}
"""Per rule on the scheduler's objects, a pool's queue objects broken in one way."""


def _gb200_job(nodes: int, pool_domain: int, *, claims: bool = True) -> list[Subject]:
    """A GB200 job as a TrainingJob emits it, beside its pool's facts with `pool_domain` nodes per NVLink domain."""
    objects = trainingjob.objects(plan(job(name="mnnvl", nodes=nodes), gb200(nvlinkDomainNodes=nodes)))
    if not claims:
        for replica in objects[-1]["spec"]["pytorchReplicaSpecs"].values():
            del replica["template"]["spec"]["resourceClaims"]
    return from_objects(objects) + from_pools([gb200(nvlinkDomainNodes=pool_domain)])


def _karpenter_for_gb200() -> list[Subject]:
    requirement = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p6e-gb200"]}
    nodepool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gb200"},
        "spec": {"template": {"spec": {"requirements": [requirement]}}},
    }
    return from_objects([nodepool])


NVLINK_CASES: dict[str, list[Subject]] = {
    "nvlink-compute-domain": _gb200_job(4, 18, claims=False),
    "nvlink-domain-size": _gb200_job(9, 4),
    "nvlink-karpenter": _karpenter_for_gb200(),
}
"""Per rack-scale NVLink rule, a GB200 job (or pool) broken in one way."""


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
            "rdma_advice": ["pool 'h100' (roce) uses 1 of its nodes' 8 rails: workers attach 1 of the node's 8 rails"],
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
    "gpu-pool-health-agent": Subject(
        "NodePool/h100",
        "NodePool",
        {"gpus": 8, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], "existing": True, "repair": None},
    ),
    "storage-retained": Subject(
        "LustreFileSystem/checkpoints",
        "FileSystem",
        {"type": "aws:fsx/lustreFileSystem:LustreFileSystem", "protected": False},
    ),
}


# TrainJobs: a pool's ClusterTrainingRuntimes and a TrainJob on one of them. A defect of the runtime is reported
# on the runtime alone, one the TrainJob brings on the TrainJob alone.
RUNTIME = "ClusterTrainingRuntime"
TRAINJOB = "TrainJob"


def good_trainjob(fabric: str = "roce", runtime: Runtime = "torch") -> list[dict[str, Any]]:
    """A claim, the pool's ClusterTrainingRuntimes (Volcano) and a 2-node TrainJob on its `runtime` one (or
    on a TrainingRuntime of its own, when it needs one): every rule passes."""
    base = pool(fabric)
    target = base.model_copy(update={"runtimes": runtime_names(base)})
    # DeepSpeed and MPI nodes run the runtime's image: a job with another gets a TrainingRuntime of its own.
    image = {} if runtime == "torch" else {"image": pool_plan(target, runtime, "volcano").spec.image}
    spec = job(
        launcher="trainjob",
        runtime=runtime,
        volumes=[{"claim": "ckpt", "mountPath": "/checkpoints"}],
        resources=EFA_RESOURCES if fabric == "efa" else {},
        **image,
    )
    runtimes = [cluster_runtime(target, r, "volcano") for r in pool_runtimes(target)]
    return [_claim(), *runtimes, *trainingjob.objects(plan(spec, target, "volcano", "research"))]


def _node_pod(runtime: dict[str, Any]) -> dict[str, Any]:
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]


def _node(runtime: dict[str, Any]) -> dict[str, Any]:
    return _node_pod(runtime)["spec"]["containers"][0]


def _runtime_env(runtime: dict[str, Any], name: str, value: str) -> None:
    env = _node(runtime)["env"]
    env[:] = [e for e in env if e["name"] != name] + [{"name": name, "value": value}]


def _trainer_env(trainjob: dict[str, Any], name: str, value: str) -> None:
    env = trainjob["spec"]["trainer"].setdefault("env", [])
    env[:] = [e for e in env if e["name"] != name] + [{"name": name, "value": value}]


def _trainer_token_in_env(trainjob: dict[str, Any]) -> None:
    _trainer_env(trainjob, "HF_TOKEN", FAKE_TOKEN)


def _runtime_no_tolerations(runtime: dict[str, Any]) -> None:
    del _node_pod(runtime)["spec"]["tolerations"]


def _runtime_tolerates_unverified_nodes(runtime: dict[str, Any]) -> None:
    _node_pod(runtime)["spec"]["tolerations"].append({"operator": "Exists"})


def _trainer_gpu_request_differs(trainjob: dict[str, Any]) -> None:
    trainjob["spec"]["trainer"]["resourcesPerNode"]["requests"]["nvidia.com/gpu"] = 4


def _runtime_no_shm(runtime: dict[str, Any]) -> None:
    _node(runtime)["volumeMounts"] = [m for m in _node(runtime)["volumeMounts"] if m["mountPath"] != "/dev/shm"]


def _runtime_no_pod_group(runtime: dict[str, Any]) -> None:
    del runtime["spec"]["podGroupPolicy"]


def _trainer_nccl_on_eth0(trainjob: dict[str, Any]) -> None:
    _trainer_env(trainjob, "NCCL_SOCKET_IFNAME", "eth0")


def _runtime_rdma_without_device(runtime: dict[str, Any]) -> None:
    for section in ("limits", "requests"):
        del _node(runtime)["resources"][section]["rdma/rdma_shared_device_a"]


def _trainer_latest_image(trainjob: dict[str, Any]) -> None:
    trainjob["spec"]["trainer"]["image"] = "registry.example.com/training:latest"


def _runtime_host_ipc(runtime: dict[str, Any]) -> None:
    _node_pod(runtime)["spec"]["hostIPC"] = True


def _runtime_no_restarts(runtime: dict[str, Any]) -> None:
    del runtime["spec"]["template"]["spec"]["failurePolicy"]


def _trainer_debug_info(trainjob: dict[str, Any]) -> None:
    _trainer_env(trainjob, "NCCL_DEBUG", "INFO")


def _runtime_no_fabric_network(runtime: dict[str, Any]) -> None:
    """The runtime's pods lose their RoCE network (and bootstrap on eth0, so that only the attachment is wrong)."""
    del _node_pod(runtime)["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    _runtime_env(runtime, "NCCL_SOCKET_IFNAME", "eth0")


TRAINJOB_CASES: dict[str, tuple[str, Mutation, Settings]] = {
    "gpu-placement": (RUNTIME, _runtime_no_tolerations, Settings()),
    "gpu-requests-equal-limits": (TRAINJOB, _trainer_gpu_request_differs, Settings()),
    "unverified-nodes": (RUNTIME, _runtime_tolerates_unverified_nodes, Settings()),
    "shared-memory": (RUNTIME, _runtime_no_shm, Settings()),
    "gang-scheduling": (RUNTIME, _runtime_no_pod_group, Settings(gang_scheduler="volcano")),
    "nccl-socket-interface": (TRAINJOB, _trainer_nccl_on_eth0, Settings()),
    "rdma-devices": (RUNTIME, _runtime_rdma_without_device, Settings()),
    "pinned-images": (TRAINJOB, _trainer_latest_image, Settings()),
    "host-namespaces": (RUNTIME, _runtime_host_ipc, Settings()),
    "job-robustness": (RUNTIME, _runtime_no_restarts, Settings()),
    "nccl-debug-production": (TRAINJOB, _trainer_debug_info, Settings(production=True)),
    "fabric-attached": (RUNTIME, _runtime_no_fabric_network, Settings()),
    "literal-credentials": (TRAINJOB, _trainer_token_in_env, Settings()),
}
"""Per rule, the object of a TrainJob's (its runtime or itself) that one change breaks, and the settings."""


def bad_trainjob_objects(rule: str) -> tuple[list[Subject], Settings, str]:
    """The TrainJob corpus case of a rule: the subjects, the settings, and the key of the one subject that is
    wrong (the runtime, or the TrainJob)."""
    objects = copy.deepcopy(good_trainjob())
    trainjob = objects[-1]
    runtime = next(o for o in objects if o["metadata"]["name"] == trainjob["spec"]["runtimeRef"]["name"])
    if rule == "checkpoint-rwx":
        _claim_rwo(objects)
        return from_objects(objects), Settings(), from_objects([trainjob])[0].key
    owner, mutate, settings = TRAINJOB_CASES[rule]
    target = runtime if owner == RUNTIME else trainjob
    mutate(target)
    pools = from_pools([pool("roce", networks=[], rails=EIGHT_RAILS)]) if rule == "fabric-attached" else []
    return from_objects(objects) + pools, settings, from_objects([target])[0].key
