"""Every launcher on every fabric under every scheduler renders objects the cluster accepts.

The sweep builds a whole stack per combination, renders it as `python -m components render`
does, and checks every emitted object, platform and job alike: against its schema (core kinds
with kubernetes-validate in strict mode, custom resources with their CRD schema), and against the
rules the API server and the operators apply beyond the schema (hugepages need cpu or memory, a
gang must be able to form, Kueue must be able to give every pod a flavor). A hypothesis test then
draws job specs from the valid space and checks the objects and the job's shape.
"""

from __future__ import annotations

import copy
import json
import re
import string
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from components import quantity
from components.config import parse_stack
from components.errors import ConfigError
from components.models.job import nccl_env_name
from components.render import Rendered, render
from components.resolution import resolve
from tests.support.schemas import assert_valid

GPU = "nvidia.com/gpu"
EFA = "vpc.amazonaws.com/efa"
RDMA = "rdma/rdma_shared_device_a"
MULTUS = "k8s.v1.cni.cncf.io/networks"
KUEUE_LABEL = "kueue.x-k8s.io/queue-name"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
WORKLOAD_KINDS = {"PyTorchJob", "TFJob", "MPIJob", "Job"}
P5_EFA_DEVICES = 32  # p5.48xlarge: 32 EFA interfaces

AWS = {
    "provider": "aws",
    "name": "train",
    "region": "us-east-1",
    "availabilityZones": ["us-east-1a", "us-east-1b"],
    "vpc": {"cidr": "10.0.0.0/16"},
}
EXISTING = {"provider": "existing", "name": "lab"}
GKE = {"provider": "gcp", "name": "train", "project": "ml-project", "region": "us-central1"}
EXISTING_POOL = {"name": "gpu", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": {"nvidia.com/gpu.present": "true"}}

MACVLAN = {
    "name": "roce-network",
    "type": "macvlan",
    "master": "enp94s0f0",
    "ipam": {"type": "whereabouts", "range": "192.168.10.0/24"},
}
IB_SRIOV = {
    "name": "ib-network",
    "type": "ib-sriov",
    "resourceName": "nvidia.com/mlnx_ib_vf",
    "pkey": "0x00FF",
    "ipam": {"type": "whereabouts", "range": "192.168.20.0/24"},
    "interface": "ib0",
}
SRIOV = {
    "name": "sriov-network",
    "type": "sriov",
    "resourceName": "nvidia.com/mlnx_sriov_vf",
    "vlan": 100,
    "ipam": {"type": "whereabouts", "range": "192.168.30.0/24"},
}

# fabric -> (cluster, pool, network config, how a worker pod on it looks)
FABRICS: dict[str, dict[str, Any]] = {
    "efa": {
        "cluster": AWS,
        "pool": {"name": "gpu", "instanceType": "p5.48xlarge", "maxNodes": 4, "zone": "us-east-1a"},
        "network": {},
        "nad": None,
    },
    "infiniband": {"cluster": EXISTING, "pool": {**EXISTING_POOL, "fabric": "infiniband"}, "network": {}, "nad": None},
    "infiniband-ib-sriov": {
        "cluster": EXISTING,
        "pool": {**EXISTING_POOL, "fabric": "infiniband", "networks": ["ib-network"]},
        # The VF carries the RDMA device: no shared device plugin.
        "network": {"networks": [IB_SRIOV], "rdma": {"sharedDevicePlugin": False}},
        "nad": IB_SRIOV,
    },
    "infiniband-sriov": {
        "cluster": EXISTING,
        "pool": {**EXISTING_POOL, "fabric": "infiniband", "networks": ["sriov-network"]},
        "network": {"networks": [SRIOV]},
        "nad": SRIOV,
    },
    "roce-macvlan": {
        "cluster": EXISTING,
        "pool": {**EXISTING_POOL, "fabric": "roce", "networks": ["roce-network"]},
        "network": {"networks": [MACVLAN]},
        "nad": MACVLAN,
    },
    "tcp": {"cluster": EXISTING, "pool": {**EXISTING_POOL, "fabric": "tcp"}, "network": {}, "nad": None},
    **{
        fabric: {
            "cluster": GKE,
            "pool": {"name": "gpu", "machineType": machine, "maxNodes": 4, "zone": "us-central1-a"},
            "network": {},
            "nad": None,
        }
        for fabric, machine in (("tcpx", "a3-highgpu-8g"), ("tcpxo", "a3-megagpu-8g"), ("rdma", "a4-highgpu-8g"))
    },
}
GPU_NICS = {"tcpx": 4, "tcpxo": 8, "rdma": 8}
GKE_INTERFACES = "networking.gke.io/interfaces"

DEEPSPEED = {"config": {"train_batch_size": 256, "bf16": {"enabled": True}, "zero_optimization": {"stage": 3}}}
VOLUMES = [
    {"claim": "checkpoints", "mountPath": "/checkpoints"},
    {"claim": "datasets", "mountPath": "/data", "readOnly": True},
]
RESOURCES = {"cpu": "32", "memory": "256Gi"}

# launcher id -> the job (features vary: DeepSpeed in some, volumes in some, resources in some)
LAUNCHERS: dict[str, dict[str, Any]] = {
    "pytorch": {"launcher": "pytorch", "nodes": 2, "deepspeed": DEEPSPEED, "nccl": {"debug": "INFO"}},
    "pytorch-elastic": {
        "launcher": "pytorch",
        "nodes": 2,
        "elastic": {"minNodes": 2, "maxNodes": 4, "maxRestarts": 5},
        "volumes": VOLUMES,
    },
    "mpi": {"launcher": "mpi", "nodes": 2, "deepspeed": DEEPSPEED, "resources": RESOURCES},
    "tensorflow": {"launcher": "tensorflow", "nodes": 3, "volumes": VOLUMES, "resources": RESOURCES},
    "indexed": {"launcher": "indexed", "nodes": 4, "volumes": VOLUMES, "deepspeed": DEEPSPEED, "shmSize": "32Gi"},
}
SCHEDULERS = ["volcano", "kueue", "none"]


# --- building stacks -------------------------------------------------------------------------


def stack_config(launcher: str, fabric: str, scheduler: str) -> dict[str, Any]:
    """A whole stack config (as Pulumi config gives it) for one combination."""
    f = FABRICS[fabric]
    aws = f["cluster"]["provider"] == "aws"
    if aws:
        storage = [
            {"name": "checkpoints", "backend": "efs", "size": "1Ti"},
            {"name": "datasets", "backend": "fsx-lustre", "size": "2400Gi", "s3ImportPath": "s3://datasets/imagenet"},
        ]
    else:
        storage = [
            {"name": "checkpoints", "backend": "nfs", "server": "nfs.lab", "share": "/exports/ckpt", "size": "2Ti"},
            {"name": "datasets", "backend": "storageClass", "className": "fast-ssd", "size": "10Ti"},
        ]
    job: dict[str, Any] = {
        "name": "train",
        "image": "registry.example.com/training:v2",
        "command": ["train.py", "--epochs=3"],
        **copy.deepcopy(LAUNCHERS[launcher]),
    }
    if fabric == "efa":
        # An EFA worker requests huge pages, which Kubernetes accepts only beside a cpu or memory
        # request (see test_efa_worker_without_cpu_or_memory_is_refused_or_sized).
        job.setdefault("resources", {"memory": "1024Gi"})
    config: dict[str, Any] = {
        "cluster": f["cluster"],
        "nodePools": [f["pool"]],
        "network": f["network"],
        "storage": {"volumes": storage},
        "scheduler": {"type": scheduler},
        "jobs": [job],
    }
    if scheduler != "none":
        config["scheduler"]["queues"] = [{"name": "research", "gpus": 32}]
        job["scheduler"] = {"queue": "research"}
    return copy.deepcopy(config)


def render_config(config: dict[str, Any]) -> Rendered:
    return render(resolve(parse_stack(config)))


# --- reading objects -------------------------------------------------------------------------


def workload(rendered: Rendered) -> dict[str, Any]:
    (found,) = [o for o in rendered.objects if o["kind"] in WORKLOAD_KINDS]
    return found


def roles(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """role -> {replicas, template} of a workload (an Indexed Job is one role of `completions` pods)."""
    spec = obj["spec"]
    if obj["kind"] == "Job":
        return {"Indexed": {"replicas": spec["completions"], "template": spec["template"]}}
    key = next(k for k in ("pytorchReplicaSpecs", "tfReplicaSpecs", "mpiReplicaSpecs") if k in spec)
    return spec[key]


def workers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The roles whose pods hold GPUs."""
    return {
        role: r
        for role, r in roles(obj).items()
        if any(GPU in c.get("resources", {}).get("limits", {}) for c in r["template"]["spec"]["containers"])
    }


def main(template: dict[str, Any]) -> dict[str, Any]:
    return template["spec"]["containers"][0]


def argv(container: dict[str, Any]) -> list[str]:
    return [*container.get("command", []), *container.get("args", [])]


def env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def flag(args: list[str], name: str) -> str:
    (value,) = [a.split("=", 1)[1] for a in args if a.startswith(f"{name}=")]
    return value


def templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [r["template"] for r in roles(obj).values()] if obj["kind"] in WORKLOAD_KINDS else []


# --- rules beyond the schema -----------------------------------------------------------------


def api_server_problems(obj: dict[str, Any]) -> list[str]:
    """What the API server would refuse (or a pod would trip over) that a schema cannot see."""
    problems: list[str] = []
    name = f"{obj['kind']}/{obj['metadata']['name']}"
    for role, spec in roles(obj).items() if obj["kind"] in WORKLOAD_KINDS else []:
        pod = spec["template"]["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for c in pod["containers"]:
            where = f"{name} {role} container {c['name']}"
            res = c.get("resources", {})
            lim, req = res.get("limits", {}), res.get("requests", {})
            both = {**req, **lim}
            # pkg/apis/core/validation: "HugePages require cpu or memory".
            if any(k.startswith("hugepages-") for k in both) and not ({"cpu", "memory"} & both.keys()):
                problems.append(f"{where}: requests {sorted(both)}: HugePages require cpu or memory")
            # Extended resources and hugepages cannot be overcommitted: requests equal limits.
            for key, value in req.items():
                if key not in ("cpu", "memory", "ephemeral-storage"):
                    if key not in lim or quantity.parse(str(lim[key])) != quantity.parse(str(value)):
                        problems.append(f"{where}: {key} request {value} must equal its limit {lim.get(key)}")
                elif key in lim and quantity.parse(str(value)) > quantity.parse(str(lim[key])):
                    problems.append(f"{where}: {key} request {value} exceeds its limit {lim[key]}")
            for mount in c.get("volumeMounts", []):
                if mount["name"] not in volumes:
                    problems.append(f"{where}: mounts undeclared volume {mount['name']}")
                elif mount["mountPath"] == "/dev/shm" and "memory" in lim:
                    size = volumes[mount["name"]].get("emptyDir", {}).get("sizeLimit")
                    if size and quantity.parse(size) >= quantity.parse(lim["memory"]):
                        problems.append(f"{where}: /dev/shm of {size} does not fit in the memory limit {lim['memory']}")
    return problems


def gang_problems(obj: dict[str, Any]) -> list[str]:
    """A gang the operator and the scheduler can never complete."""
    problems: list[str] = []
    name = f"{obj['kind']}/{obj['metadata']['name']}"
    if obj["kind"] == "MPIJob":
        spec = obj["spec"]
        policy = spec.get("runPolicy", {}).get("schedulingPolicy")
        worker_replicas = spec["mpiReplicaSpecs"]["Worker"]["replicas"]
        if (
            policy
            and spec.get("launcherCreationPolicy") == "WaitForWorkersReady"
            and policy.get("minAvailable", worker_replicas + 1) > worker_replicas
        ):
            # kubeflow/mpi-operator#608: the launcher waits for ready workers, the gang waits for the launcher.
            problems.append(
                f"{name}: launcherCreationPolicy WaitForWorkersReady with a gang of "
                f"{policy.get('minAvailable')} > {worker_replicas} workers never starts"
            )
    return problems


def tolerated(taint: dict[str, Any], tolerations: list[dict[str, Any]]) -> bool:
    """Whether a toleration matches the taint (core/v1 Toleration.ToleratesTaint)."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def kueue_problems(rendered: Rendered) -> list[str]:
    """A Kueue-managed workload is admitted only if every pod set fits a flavor of its ClusterQueue:
    all the resources it requests covered ("resource X unavailable in ClusterQueue"), the flavor's
    NoSchedule/NoExecute taints tolerated ("untolerated taint"), its node labels not contradicted
    by the pod's nodeSelector (kueue pkg/scheduler/flavorassigner, checkFlavorForPodSets)."""
    problems: list[str] = []
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in rendered.objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    for obj in rendered.objects:
        queue = obj["metadata"].get("labels", {}).get(KUEUE_LABEL)
        if queue is None:
            continue
        namespace = obj["metadata"]["namespace"]
        local = [
            q
            for q in by_kind.get("LocalQueue", [])
            if q["metadata"]["name"] == queue and q["metadata"]["namespace"] == namespace
        ]
        if not local:
            problems.append(f"{obj['kind']}/{obj['metadata']['name']}: no LocalQueue {namespace}/{queue}")
            continue
        (cluster_queue,) = [
            q for q in by_kind.get("ClusterQueue", []) if q["metadata"]["name"] == local[0]["spec"]["clusterQueue"]
        ]
        flavors = {f["metadata"]["name"]: f for f in by_kind.get("ResourceFlavor", [])}
        for role, spec in roles(obj).items():
            pod = spec["template"]["spec"]
            wanted = {k for c in pod["containers"] for k in c.get("resources", {}).get("requests", {})}
            fits = []
            for group in cluster_queue["spec"]["resourceGroups"]:
                if not wanted <= set(group["coveredResources"]):
                    continue
                for entry in group["flavors"]:
                    taints = flavors[entry["name"]]["spec"].get("nodeTaints", [])
                    hard = [t for t in taints if t["effect"] in ("NoSchedule", "NoExecute")]
                    labels = flavors[entry["name"]]["spec"].get("nodeLabels", {})
                    selector = {k: v for k, v in pod.get("nodeSelector", {}).items() if k in labels}
                    tolerates = all(tolerated(t, pod.get("tolerations", [])) for t in hard)
                    if tolerates and selector.items() <= labels.items():
                        fits.append(entry["name"])
            if not fits:
                problems.append(
                    f"{obj['kind']}/{obj['metadata']['name']} {role}: no flavor of ClusterQueue "
                    f"{cluster_queue['metadata']['name']} covers {sorted(wanted)} with taints the pods tolerate"
                )
    return problems


def assert_accepted(rendered: Rendered, *, operators: bool = True) -> None:
    """Every object validates against its schema and the API server's rules; with `operators`,
    nothing the gang scheduler or Kueue would strand either."""
    assert_valid(*rendered.objects)
    problems = [p for obj in rendered.objects for p in api_server_problems(obj)]
    if operators:
        problems += [p for obj in rendered.objects for p in gang_problems(obj)] + kueue_problems(rendered)
    assert not problems, "\n".join(problems)


# --- the sweep -------------------------------------------------------------------------------


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("fabric", list(FABRICS))
@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_every_object_validates(launcher: str, fabric: str, scheduler: str) -> None:
    config = stack_config(launcher, fabric, scheduler)
    rendered = render_config(config)
    job = config["jobs"][0]
    obj = workload(rendered)
    kinds = [o["kind"] for o in rendered.objects]

    # The shape every combination shares: the right kind, whole GPU nodes, the pool's fabric.
    expected_kind = {"pytorch": "PyTorchJob", "mpi": "MPIJob", "tensorflow": "TFJob", "indexed": "Job"}
    assert obj["kind"] == expected_kind[job["launcher"]]
    gpu_roles = workers(obj)
    assert sum(r["replicas"] for r in gpu_roles.values()) == job["nodes"]
    nad = FABRICS[fabric]["nad"]
    for role in gpu_roles.values():
        template = role["template"]
        c = main(template)
        lim, e = c["resources"]["limits"], env(c)
        assert lim[GPU] == c["resources"]["requests"][GPU] == "8"
        assert template["spec"]["nodeSelector"]
        assert any(t["key"] == GPU for t in template["spec"]["tolerations"])
        annotations = template["metadata"].get("annotations", {})
        if fabric == "efa":
            assert lim[EFA] == str(P5_EFA_DEVICES)
            assert not any(k.startswith("hugepages-") for k in lim)
            assert e["FI_EFA_USE_HUGE_PAGE"] == "0"
            assert (e["FI_PROVIDER"], e["FI_EFA_USE_DEVICE_RDMA"], e["FI_EFA_FORK_SAFE"]) == ("efa", "1", "1")
        elif fabric == "tcp":
            assert (e["NCCL_IB_DISABLE"], e["NCCL_SOCKET_IFNAME"]) == ("1", "eth0")
        elif fabric == "rdma" and GKE_INTERFACES not in annotations:
            # GKE 1.35, the default, attaches the RDMA NICs itself (accelerator network profile, DRA).
            assert template["spec"]["resourceClaims"] and "ResourceClaimTemplate" in kinds
            assert "Network" not in kinds
        elif fabric in GPU_NICS:
            attached = json.loads(annotations[GKE_INTERFACES])
            assert len(attached) == 1 + GPU_NICS[fabric]
            assert {"GKENetworkParamSet", "Network"} <= set(kinds)
            assert e["NCCL_SOCKET_IFNAME"] == "eth0"
            sidecars = template["spec"].get("initContainers", [])
            assert [s["restartPolicy"] for s in sidecars] == (["Always"] if fabric != "rdma" else [])
        else:
            assert e["NCCL_IB_DISABLE"] == "0"
            assert e["NCCL_IB_HCA"]
            assert "IPC_LOCK" in c["securityContext"]["capabilities"]["add"]
            assert "NCCL_IB_GID_INDEX" not in e, "NCCL picks the GID; a fixed index is wrong under macvlan"
            assert ("NCCL_IB_ADDR_RANGE" in e) == (fabric.startswith("roce") and nad is not None)
        if fabric == "rdma":
            # gIB runs untuned without its machine's profile, which the installer puts under /usr/local/gib.
            assert re.fullmatch(r"/usr/local/gib/configs/tuner_config_[a-z0-9]+\.txtpb", e["NCCL_TUNER_CONFIG_PATH"])
        if nad is None:
            assert MULTUS not in annotations
            assert "NetworkAttachmentDefinition" not in kinds
            if fabric == "infiniband":
                assert lim[RDMA] == "1" and e["NCCL_SOCKET_IFNAME"] == "eth0"
        else:
            assert nad["name"] in annotations[MULTUS]
            assert e["NCCL_SOCKET_IFNAME"] == nad.get("interface", "net1")
            if "resourceName" in nad:
                assert lim[nad["resourceName"]] == "1"
            assert (RDMA in lim) == (fabric != "infiniband-ib-sriov")
            assert "NetworkAttachmentDefinition" in kinds
        if "deepspeed" in job and obj["kind"] != "MPIJob":
            assert any(a.startswith("--deepspeed_config=") for a in argv(c))

    # Gang scheduling and queues, as the stack's scheduler says.
    pod_specs = [t["spec"] for t in templates(obj)]
    run_policy = obj["spec"].get("runPolicy", {})
    min_nodes = job.get("elastic", {}).get("minNodes", job["nodes"])
    if scheduler == "volcano":
        assert "Queue" in kinds
        assert all(p.get("schedulerName") == "volcano" for p in pod_specs)
        if obj["kind"] == "Job":
            group = next(o for o in rendered.objects if o["kind"] == "PodGroup")
            assert group["spec"]["minMember"] == job["nodes"]
            assert obj["spec"]["template"]["metadata"]["annotations"][VOLCANO_GROUP] == group["metadata"]["name"]
        else:
            policy = run_policy["schedulingPolicy"]
            assert policy["queue"] == "research"
            assert policy["minAvailable"] == min_nodes, "the GPU pods (an MPIJob launcher joins them once ready)"
    else:
        assert "PodGroup" not in kinds and "Queue" not in kinds
        assert "schedulingPolicy" not in run_policy
        assert not any(p.get("schedulerName") for p in pod_specs)
    if scheduler == "kueue":
        assert obj["metadata"]["labels"][KUEUE_LABEL] == "research"
        assert {"ResourceFlavor", "ClusterQueue", "LocalQueue"} <= set(kinds)
    else:
        assert KUEUE_LABEL not in obj["metadata"].get("labels", {})

    # The stack's storage and namespace come with it, and everything is accepted.
    assert kinds[0] == "Namespace"
    assert kinds.count("PersistentVolumeClaim") == 2
    assert_accepted(rendered)


def test_efa_worker_without_cpu_or_memory_is_refused_or_sized() -> None:
    """`HugePages require cpu or memory` (API server): an EFA job that names neither is either a
    config error naming `resources`, or renders with a cpu or memory request of its own."""
    config = stack_config("pytorch", "efa", "none")
    del config["jobs"][0]["resources"]
    try:
        rendered = render_config(config)
    except ConfigError as exc:
        assert any(".resources" in issue.path for issue in exc.issues), str(exc)
        return
    assert_accepted(rendered)


# --- property test ---------------------------------------------------------------------------

POOL_GPUS = 8
POOL_MAX_NODES = 8
_RESERVED_ENV = ("NCCL_", "FI_", "PET_", "MASTER_", "JOB_", "PATH", "LD_", "TF_CONFIG", "WORLD_SIZE", "RANK")
ENV_NAMES = st.from_regex(r"\A[A-Z][A-Z0-9_]{0,15}\Z").filter(lambda n: not n.startswith(_RESERVED_ENV))
ENV_VALUES = st.text(alphabet=string.ascii_letters + string.digits + "-_./:=", max_size=24)
NCCL_SETTINGS = {
    "debug": ["INFO", "WARN", "TRACE"],
    "debugSubsys": ["INIT,NET", "ALL"],
    "buffsize": ["8388608", "4194304"],
    "NCCL_ALGO": ["Ring,Tree", "Ring"],
    "ibTimeout": ["22"],
    "netGdrLevel": ["SYS", "PHB"],
    "NCCL_NTHREADS": ["512"],
}


@st.composite
def memory_quantities(draw: st.DrawFn) -> str:
    # At least 4Gi: a multi-node job needs 1Gi of /dev/shm, which counts against its memory.
    if draw(st.booleans()):
        return f"{draw(st.integers(4, 2048))}Gi"
    return f"{draw(st.integers(4096, 2**20))}Mi"


@st.composite
def job_specs(draw: st.DrawFn) -> dict[str, Any]:
    """A TrainingJobSpec (as config) that fits an 8-GPU, 8-node pool."""
    launcher = draw(st.sampled_from(["pytorch", "mpi", "tensorflow", "indexed"]))
    job: dict[str, Any] = {
        "name": "fuzz",
        "launcher": launcher,
        "image": "registry.example.com/training:v2",
        "command": draw(st.sampled_from([["train.py"], ["python", "train.py", "--lr=1e-4"], ["/opt/bin/train"]])),
    }
    if launcher == "pytorch" and draw(st.booleans()):
        low = draw(st.integers(1, POOL_MAX_NODES))
        high = draw(st.integers(low, POOL_MAX_NODES))
        job["elastic"] = {"minNodes": low, "maxNodes": high, "maxRestarts": draw(st.integers(0, 20))}
        nodes = draw(st.none() | st.integers(low, high))
    else:
        nodes = draw(st.integers(1, POOL_MAX_NODES))
    if nodes is not None:
        job["nodes"] = nodes
    gpus = draw(st.none() | st.integers(1, POOL_GPUS))
    if gpus is not None:
        job["gpusPerNode"] = gpus
    resources = {}
    if draw(st.booleans()):
        resources["cpu"] = draw(st.sampled_from(["500m", "4", "32", "96", 16]))
    memory = draw(st.none() | memory_quantities())
    if memory is not None:
        resources["memory"] = memory
    if resources:
        job["resources"] = resources
    if draw(st.booleans()):
        ceiling = quantity.parse(memory) if memory else Decimal(512 * 2**30)
        shm_mib = draw(st.integers(1024, max(1024, int(ceiling // 2**20) - 1)))
        if memory is None or shm_mib * 2**20 < quantity.parse(memory):
            job["shmSize"] = f"{shm_mib}Mi"
    env = draw(st.dictionaries(ENV_NAMES, ENV_VALUES, max_size=4))
    if env:
        job["env"] = env
    nccl = draw(st.dictionaries(st.sampled_from(sorted(NCCL_SETTINGS)), st.just(None), max_size=3))
    if nccl:
        job["nccl"] = {key: draw(st.sampled_from(NCCL_SETTINGS[key])) for key in nccl}
    return job


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# A small worker: its default /dev/shm must still be at most half of its memory.
@example(
    job={
        "name": "small",
        "launcher": "pytorch",
        "image": "img:1",
        "command": ["train.py"],
        "resources": {"memory": "1Gi"},
    },
    fabric="tcp",
    scheduler="none",
)
@given(
    job=job_specs(),
    fabric=st.sampled_from(["tcp", "infiniband", "roce-macvlan", "infiniband-sriov"]),
    scheduler=st.sampled_from(SCHEDULERS),
)
def test_generated_jobs_validate_and_keep_their_shape(job: dict[str, Any], fabric: str, scheduler: str) -> None:
    config = stack_config("pytorch", fabric, scheduler)
    config["nodePools"][0]["maxNodes"] = POOL_MAX_NODES
    for queue in config.get("scheduler", {}).get("queues", []):  # a queue that can admit the largest job
        queue["gpus"] = POOL_MAX_NODES * POOL_GPUS
    scheduler_block = config["jobs"][0].get("scheduler")
    config["jobs"] = [{**job, **({"scheduler": scheduler_block} if scheduler_block else {})}]
    rendered = render_config(config)
    # Schema and API-server rules; the gang and Kueue rules are the sweep's (one MPIJob bug would
    # otherwise hide every other finding here).
    assert_accepted(rendered, operators=False)

    obj = workload(rendered)
    elastic = job.get("elastic")
    nodes = job.get("nodes", elastic["minNodes"] if elastic else 1)
    gpus = job.get("gpusPerNode", POOL_GPUS)
    gpu_roles = workers(obj)

    # Replicas: one GPU pod per node.
    assert sum(r["replicas"] for r in gpu_roles.values()) == nodes
    if obj["kind"] == "PyTorchJob":
        if elastic:
            assert list(gpu_roles) == ["Worker"]
            policy = obj["spec"]["elasticPolicy"]
            assert (policy["minReplicas"], policy["maxReplicas"], policy["maxRestarts"]) == (
                elastic["minNodes"],
                elastic["maxNodes"],
                elastic["maxRestarts"],
            )
        else:
            assert gpu_roles["Master"]["replicas"] == 1
        assert obj["spec"]["nprocPerNode"] == str(gpus)
    elif obj["kind"] == "TFJob":
        assert gpu_roles["Chief"]["replicas"] == 1
    elif obj["kind"] == "Job":
        assert obj["spec"]["completions"] == obj["spec"]["parallelism"] == nodes
    else:
        assert obj["spec"]["slotsPerWorker"] == gpus
        assert list(gpu_roles) == ["Worker"]

    # World size: what the launcher starts is nodes x GPUs.
    for role in gpu_roles.values():
        c = main(role["template"])
        assert c["resources"]["limits"][GPU] == c["resources"]["requests"][GPU] == str(gpus)
        if obj["kind"] in ("PyTorchJob", "Job"):
            args = argv(c)
            expected_nnodes = f"{elastic['minNodes']}:{elastic['maxNodes']}" if elastic else str(nodes)
            assert flag(args, "--nnodes") == expected_nnodes
            assert flag(args, "--nproc_per_node") == str(gpus)
    if obj["kind"] == "MPIJob":
        launcher = main(obj["spec"]["mpiReplicaSpecs"]["Launcher"]["template"])
        args = argv(launcher)
        assert args[args.index("-np") + 1] == str(nodes * gpus)
        assert GPU not in launcher.get("resources", {}).get("limits", {})

    # The job's environment and NCCL settings reach every GPU pod; /dev/shm is sized as asked.
    for role in gpu_roles.values():
        template = role["template"]
        c = main(template)
        e = env(c)
        for name, value in job.get("env", {}).items():
            assert e[name] == value
        for key, value in job.get("nccl", {}).items():
            assert e[nccl_env_name(key)] == value
        (mount,) = [m for m in c["volumeMounts"] if m["mountPath"] == "/dev/shm"]
        (shm,) = [v for v in template["spec"]["volumes"] if v["name"] == mount["name"]]
        size = quantity.parse(shm["emptyDir"]["sizeLimit"])
        assert shm["emptyDir"]["medium"] == "Memory"
        if "shmSize" in job:
            assert size == quantity.parse(job["shmSize"])
        else:
            # Default: 8Gi per GPU, at most half the worker's memory.
            assert size <= 8 * 2**30 * gpus
            memory = job.get("resources", {}).get("memory")
            if memory is not None:
                assert size <= quantity.parse(memory) / 2, f"default /dev/shm {size} > half of memory {memory}"
        for key in ("cpu", "memory"):
            if key in job.get("resources", {}):
                assert quantity.parse(str(c["resources"]["limits"][key])) == quantity.parse(str(job["resources"][key]))
