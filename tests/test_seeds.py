"""The seed documents' manifests, each reproduced from a few lines of stack config.

Every test names the seed file and the manifest it reproduces, writes the short spec a user
would write instead of the page of YAML, renders the whole stack and asserts on what matters
in the seed's manifest, validating every emitted object against its schema. Where the seed is
wrong (a label Volcano never reads, a field the PyTorchJob CRD does not have, a rendezvous host
that does not exist), the test asserts the correct form instead and says why.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import rules
from components.config import load_stack_file, parse_stack
from components.manifests import trainingjob
from components.manifests.fabriccheck import CHECK_LABEL
from components.render import Rendered, render
from components.resolution import resolve
from components.rules.rule import Settings
from components.rules.subjects import from_objects, from_pools
from components.wellknown import NODE_CHECK_NAMESPACE as NAMESPACE
from tests.support.schemas import assert_valid, errors

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
EXISTING = "cluster: {provider: existing, name: lab}\n"
GPU = "nvidia.com/gpu"
RDMA = "rdma/rdma_shared_device_a"
MULTUS = "k8s.v1.cni.cncf.io/networks"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"


# --- helpers ---------------------------------------------------------------------------------


def render_yaml(text: str) -> Rendered:
    """Parse, validate and render a stack config given as YAML; every object must validate."""
    rendered = render(resolve(parse_stack(yaml.safe_load(text))))
    assert_valid(*rendered.objects)
    # The seeds' manifests, as we emit them (corrected where the seed is wrong), pass every mandatory rule.
    subjects = from_objects(rendered.objects) + from_pools(rendered.stack.pools.values())
    findings = rules.run(subjects, Settings(gang_scheduler=rendered.stack.scheduler))
    assert [f for f in findings if f.enforcement == "mandatory"] == []
    return rendered


def find(rendered: Rendered, kind: str, name: str | None = None) -> dict[str, Any]:
    """The one object of `kind` (and `name`) beside the node check's and the fabric check's, which the stacks'
    GPU pools have."""
    found = [
        o
        for o in rendered.objects
        if o["kind"] == kind
        and name in (None, o["metadata"]["name"])
        and o["metadata"].get("namespace") != NAMESPACE
        and CHECK_LABEL not in o["metadata"].get("labels", {})
    ]
    assert len(found) == 1, f"expected one {kind} {name or ''}, got {[o['metadata']['name'] for o in found]}"
    return found[0]


def kinds(rendered: Rendered) -> list[str]:
    return [o["kind"] for o in rendered.objects]


def replicas(workload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The replica specs of a Training/MPI Operator job, by role."""
    spec = workload["spec"]
    key = next(k for k in ("pytorchReplicaSpecs", "tfReplicaSpecs", "mpiReplicaSpecs") if k in spec)
    return spec[key]


def container(template: dict[str, Any]) -> dict[str, Any]:
    containers = template["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def env(c: dict[str, Any]) -> dict[str, Any]:
    """A container's environment: name -> value (or the valueFrom source)."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def limits(c: dict[str, Any]) -> dict[str, Any]:
    return c["resources"]["limits"]


def requests(c: dict[str, Any]) -> dict[str, Any]:
    return c["resources"]["requests"]


def mounts(c: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """mountPath -> volumeMount."""
    return {m["mountPath"]: m for m in c["volumeMounts"]}


def volume(template: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [v for v in template["spec"]["volumes"] if v["name"] == name]
    return found


def shm_size(template: dict[str, Any]) -> str:
    """The sizeLimit of the memory-backed emptyDir mounted at /dev/shm."""
    mount = mounts(container(template))["/dev/shm"]
    empty_dir = volume(template, mount["name"])["emptyDir"]
    assert empty_dir["medium"] == "Memory"
    return empty_dir["sizeLimit"]


def claim_at(template: dict[str, Any], path: str) -> str:
    """The PVC mounted at `path`."""
    mount = mounts(container(template))[path]
    return volume(template, mount["name"])["persistentVolumeClaim"]["claimName"]


def forwarded(args: list[str]) -> set[str]:
    """The variables mpirun forwards with `-x NAME` (or `-x NAME=value`)."""
    names = set()
    for flag, value in itertools.pairwise(args):
        if flag == "-x":
            names.add(value.split("=", 1)[0])
    names |= {a.split(" ", 1)[1].split("=", 1)[0] for a in args if a.startswith("-x ")}
    return names


def after(args: list[str], flag: str) -> str:
    """The value that follows a flag given as two arguments (`-np 32`)."""
    return args[args.index(flag) + 1]


def attached_networks(template: dict[str, Any]) -> list[str]:
    """The NAD names in a pod's Multus annotation (`ns/name@iface` and JSON forms)."""
    value = template["metadata"].get("annotations", {}).get(MULTUS)
    if value is None:
        return []
    if value.lstrip().startswith("["):
        return [n["name"] for n in json.loads(value)]
    return [item.strip().split("/")[-1].split("@")[0] for item in value.split(",")]


def multus_interfaces(template: dict[str, Any]) -> list[str]:
    value = template["metadata"]["annotations"][MULTUS]
    if value.lstrip().startswith("["):
        return [n.get("interface") for n in json.loads(value)]
    return [item.split("@")[1] if "@" in item else None for item in value.split(",")]


def seed_text(prefix: str) -> str:
    if not SEEDS.is_dir():
        pytest.skip(f"seed documents not found at {SEEDS}")
    (path,) = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8")


# --- seed 000 --------------------------------------------------------------------------------


# seeds/000_d60fffd45e26152f.txt: Indexed Job `llm-finetune` + headless Service `finetune-workers`
def test_seed000_indexed_job_llm_finetune() -> None:
    rendered = render_yaml(
        EXISTING
        + """
nodePools:
  - {name: h100, gpusPerNode: 8, maxNodes: 4, fabric: infiniband, nodeSelector: {nvidia.com/gpu.present: "true"}}
scheduler: {type: volcano}
storage:
  volumes:
    - {name: training-checkpoints, backend: nfs, server: nfs.example.internal, share: /exports/checkpoints, size: 2Ti}
    - {name: training-dataset, backend: nfs, server: nfs.example.internal, share: /exports/datasets, size: 10Ti}
jobs:
  - name: llm-finetune
    launcher: indexed
    image: registry.example.com/training:v2.0
    command: [train.py, --model_name=meta-llama/Llama-3.1-70B, --batch_size=4, --output_dir=/checkpoints/run-001]
    nodes: 4
    shmSize: 64Gi
    resources: {memory: 512Gi}
    nccl: {debug: INFO}
    volumes: [{claim: training-checkpoints, mountPath: /checkpoints}, {claim: training-dataset, mountPath: /data}]
"""
    )
    job = find(rendered, "Job", "llm-finetune")
    service = find(rendered, "Service")
    spec, template = job["spec"], job["spec"]["template"]
    pod = template["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 4, 4)
    assert pod["restartPolicy"] == "Never"

    # Headless Service: the pods' subdomain, selecting exactly this job's pods, rendezvous port 29400.
    assert service["spec"]["clusterIP"] == "None"
    assert pod["subdomain"] == service["metadata"]["name"]
    assert service["metadata"]["namespace"] == job["metadata"]["namespace"] == "training"
    assert service["spec"]["selector"].items() <= template["metadata"]["labels"].items()
    assert [p["port"] for p in service["spec"]["ports"]] == [29400]

    c = container(template)
    rdzv_host = f"llm-finetune-0.{pod['subdomain']}"  # pod 0's hostname under the subdomain
    assert [*c.get("command", []), *c.get("args", [])] == [
        "torchrun",
        "--nnodes=4",
        "--nproc_per_node=8",
        "--node_rank=$(JOB_COMPLETION_INDEX)",
        "--rdzv_backend=c10d",
        f"--rdzv_endpoint={rdzv_host}:29400",
        "--max_restarts=3",  # beyond the seed: a transient fault reruns the ranks in place
        "train.py",
        "--model_name=meta-llama/Llama-3.1-70B",
        "--batch_size=4",
        "--output_dir=/checkpoints/run-001",
    ]
    e = env(c)
    index_source = e["JOB_COMPLETION_INDEX"]["fieldRef"]["fieldPath"]
    assert index_source in (
        "metadata.annotations['batch.kubernetes.io/job-completion-index']",
        "metadata.labels['batch.kubernetes.io/job-completion-index']",
    )
    assert (e["MASTER_ADDR"], e["MASTER_PORT"]) == (rdzv_host, "29400")
    # InfiniBand through the RDMA shared device plugin, bootstrapping over eth0: no NAD, no Multus.
    assert (e["NCCL_IB_DISABLE"], e["NCCL_SOCKET_IFNAME"], e["NCCL_DEBUG"]) == ("0", "eth0", "INFO")
    assert MULTUS not in template["metadata"].get("annotations", {})
    assert "NetworkAttachmentDefinition" not in kinds(rendered)
    assert limits(c)[GPU] == requests(c)[GPU] == "8"
    assert limits(c)[RDMA] == "1"
    assert limits(c)["memory"] == "512Gi"

    assert shm_size(template) == "64Gi"
    assert claim_at(template, "/checkpoints") == "training-checkpoints"
    assert claim_at(template, "/data") == "training-dataset"

    # Gang scheduling: the seed's `scheduling.k8s.io/pod-group` label is not what Volcano reads.
    # A PodGroup for the whole job, and the pods name it in the group-name annotation.
    group = find(rendered, "PodGroup")
    assert group["metadata"]["namespace"] == "training"
    assert group["spec"]["minMember"] == 4
    assert template["metadata"]["annotations"][VOLCANO_GROUP] == group["metadata"]["name"]
    assert pod["schedulerName"] == "volcano"
    for labels in (job["metadata"].get("labels", {}), template["metadata"].get("labels", {})):
        assert "scheduling.k8s.io/pod-group" not in labels
    # The group is applied before the pods that join it.
    assert kinds(rendered).index("PodGroup") < kinds(rendered).index("Job")


# seeds/000_d60fffd45e26152f.txt: InfiniBand through the RDMA shared device plugin (`rdma/rdma_shared_device_a: 1`),
# no secondary network. IB verbs need no pod interface, so every HCA the plugin exposes is a rail NCCL uses.
SEED000_IB = (
    EXISTING
    + """
nodePools:
  - {name: h100, gpusPerNode: 8, maxNodes: 4, fabric: infiniband, nodeSelector: {nvidia.com/gpu.present: "true"}RAILS}
scheduler: {type: volcano}
jobs:
  - {name: llm-finetune, launcher: indexed, image: registry.example.com/training:v2.0, command: [train.py], nodes: 4}
"""
)


def rendered_lines(rendered: Rendered) -> tuple[str, str, list[str]]:
    """The summary's pool line and job line, and the warnings render prints."""
    lines = rendered.summary().splitlines()
    (pool_line,) = [line for line in lines if line.startswith("  pool ")]
    (job_line,) = [line for line in lines if "training/llm-finetune" in line]
    return pool_line, job_line, [a for p in rendered.stack.pools.values() for a in p.rdma_advice()]


def test_seed000_infiniband_through_the_shared_plugin_uses_every_rail() -> None:
    # As the seed writes it: no rails declared, so one per GPU is assumed and every one is reached.
    rendered = render_yaml(SEED000_IB.replace("RAILS", ""))
    pool_line, job_line, warnings = rendered_lines(rendered)
    assert "infiniband, 8 of 8 rails, one per GPU assumed, up to 4 nodes" in pool_line
    assert "below the fabric's bandwidth" not in job_line
    # What is left is true and not about bandwidth: the seed's bare NCCL_IB_HCA=mlx5 also matches storage ports.
    assert len(warnings) == 1 and warnings[0].startswith("pool 'h100': NCCL_IB_HCA=mlx5 is a prefix")
    plugin = json.loads(find(rendered, "NicClusterPolicy")["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert "ifNames" not in plugin["configList"][0]["selectors"], "every Mellanox HCA is exposed"

    # With the node's rails stated (devices and speed), the full bandwidth and no warning at all.
    rails = ', rails: {count: 8, devices: "mlx5_{i}", speedGbps: 400}'
    rendered = render_yaml(SEED000_IB.replace("RAILS", rails))
    pool_line, job_line, warnings = rendered_lines(rendered)
    assert "infiniband, 8 of 8 rails, 3200 of 3200 Gbps, up to 4 nodes" in pool_line
    assert "below the fabric's bandwidth" not in job_line
    assert warnings == []
    c = container(find(rendered, "Job", "llm-finetune")["spec"]["template"])
    assert env(c)["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7"
    assert limits(c)[RDMA] == "1" and MULTUS not in find(rendered, "Job")["spec"]["template"]["metadata"].get(
        "annotations", {}
    )


# The seed's ds_config.json, verbatim (numbers in exponent form included).
SEED_DS_CONFIG = """
{
  "train_batch_size": 128,
  "gradient_accumulation_steps": 4,
  "fp16": {"enabled": true},
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "none"},
    "offload_param": {"device": "none"},
    "overlap_comm": true,
    "contiguous_gradients": true,
    "reduce_bucket_size": 5e8,
    "stage3_prefetch_bucket_size": 5e8,
    "stage3_param_persistence_threshold": 1e6
  },
  "communication_data_type": "fp16",
  "gradient_clipping": 1.0
}
"""


# seeds/000_d60fffd45e26152f.txt: DeepSpeed ZeRO-3 Indexed Job `deepspeed-training` + ConfigMap `deepspeed-config`
def test_seed000_deepspeed_zero3() -> None:
    config = yaml.safe_load(
        EXISTING
        + """
nodePools: [{name: h100, gpusPerNode: 8, maxNodes: 4, nodeSelector: {nvidia.com/gpu.present: "true"}}]
jobs:
  - {name: deepspeed-training, launcher: indexed, image: registry.example.com/deepspeed-training:v3.0,
     command: [train.py, --deepspeed], nodes: 4}
"""
    )
    config["jobs"][0]["deepspeed"] = {"config": json.loads(SEED_DS_CONFIG)}
    rendered = render(resolve(parse_stack(config)))
    assert_valid(*rendered.objects)

    config_map = find(rendered, "ConfigMap")
    assert config_map["metadata"]["namespace"] == "training"
    assert json.loads(config_map["data"]["ds_config.json"]) == json.loads(SEED_DS_CONFIG)

    template = find(rendered, "Job", "deepspeed-training")["spec"]["template"]
    c = container(template)
    args = [*c.get("command", []), *c.get("args", [])]
    flag = next(a for a in args if a.startswith("--deepspeed_config="))
    config_path = flag.split("=", 1)[1]
    assert args[-2:] == ["--deepspeed", flag]  # appended after the user's program
    assert args[:3] == ["torchrun", "--nnodes=4", "--nproc_per_node=8"]
    # The flag points at ds_config.json inside the mounted ConfigMap.
    (mount,) = [m for m in c["volumeMounts"] if config_path.startswith(m["mountPath"].rstrip("/") + "/")]
    assert volume(template, mount["name"])["configMap"]["name"] == config_map["metadata"]["name"]
    key = mount.get("subPath") or config_path.removeprefix(mount["mountPath"].rstrip("/") + "/")
    assert key == "ds_config.json"
    assert limits(c)[GPU] == "8"
    assert shm_size(template) == "64Gi"
    assert kinds(rendered).index("ConfigMap") < kinds(rendered).index("Job")


# seeds/000_d60fffd45e26152f.txt: the ZeRO-3 ds_config.json, written in a stack file as a user writes it
def test_seed000_deepspeed_config_numbers_survive_the_stack_file(tmp_path: Path) -> None:
    # `python -m components render` reads Pulumi.<stack>.yaml itself. Pulumi reads `5e8` in that
    # file as a number (YAML 1.2), and DeepSpeed wants a number: the rendered ConfigMap must agree.
    stack_file = tmp_path / "Pulumi.seed.yaml"
    stack_file.write_text(
        """
config:
  gpu-training:cluster: {provider: existing, name: lab}
  gpu-training:nodePools: [{name: h100, gpusPerNode: 8, maxNodes: 4, nodeSelector: {nvidia.com/gpu.present: "true"}}]
  gpu-training:jobs:
    - name: deepspeed-training
      launcher: indexed
      image: registry.example.com/deepspeed-training:v3.0
      command: [train.py, --deepspeed]
      nodes: 4
      deepspeed:
        config:
          train_batch_size: 128
          gradient_accumulation_steps: 4
          fp16: {enabled: true}
          zero_optimization:
            stage: 3
            offload_optimizer: {device: none}
            offload_param: {device: none}
            overlap_comm: true
            contiguous_gradients: true
            reduce_bucket_size: 5e8
            stage3_prefetch_bucket_size: 5e8
            stage3_param_persistence_threshold: 1e6
          communication_data_type: fp16
          gradient_clipping: 1.0
""",
        encoding="utf-8",
    )
    rendered = render(resolve(load_stack_file(stack_file)))
    assert_valid(*rendered.objects)
    written = json.loads(find(rendered, "ConfigMap")["data"]["ds_config.json"])
    zero = written["zero_optimization"]
    for key, number in [
        ("reduce_bucket_size", 5e8),
        ("stage3_prefetch_bucket_size", 5e8),
        ("stage3_param_persistence_threshold", 1e6),
    ]:
        assert zero[key] == number, f"{key}: the stack file says {number:g}, ds_config.json has {zero[key]!r}"
    assert written == json.loads(SEED_DS_CONFIG)


# seeds/000_d60fffd45e26152f.txt: MPIJob `nccl-training` (Horovod/NCCL, kubeflow.org/v2beta1)
def test_seed000_mpijob_horovod() -> None:
    rendered = render_yaml(
        EXISTING
        + """
nodePools: [{name: h100, gpusPerNode: 8, maxNodes: 4, nodeSelector: {nvidia.com/gpu.present: "true"}}]
scheduler: {type: none}
jobs:
  - {name: nccl-training, launcher: mpi, image: registry.example.com/horovod-training:v2.0,
     command: [train.py, --epochs, "10", --batch-size, "64"], nodes: 4, resources: {memory: 512Gi},
     shmSize: 64Gi, nccl: {debug: INFO}}
"""
    )
    mpijob = find(rendered, "MPIJob")
    assert mpijob["apiVersion"] == "kubeflow.org/v2beta1"
    assert mpijob["spec"]["slotsPerWorker"] == 8
    assert mpijob["spec"]["runPolicy"]["cleanPodPolicy"] == "Running"
    roles = replicas(mpijob)
    assert roles["Launcher"]["replicas"] == 1
    assert roles["Worker"]["replicas"] == 4

    launcher = container(roles["Launcher"]["template"])
    args = [*launcher["command"], *launcher.get("args", [])]
    assert args[0] == "mpirun"
    assert "--allow-run-as-root" in args
    assert after(args, "-np") == "32"
    assert {"NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "LD_LIBRARY_PATH"} <= forwarded(args)
    assert (env(launcher)["NCCL_DEBUG"], env(launcher)["NCCL_SOCKET_IFNAME"]) == ("INFO", "eth0")
    assert after(args, "btl_tcp_if_include") == "eth0"  # MPI's own traffic on the pod network
    assert args[-5:] == ["train.py", "--epochs", "10", "--batch-size", "64"]
    assert args[-6] in ("python", "python3")
    assert GPU not in launcher.get("resources", {}).get("limits", {})

    worker_template = roles["Worker"]["template"]
    worker = container(worker_template)
    assert limits(worker)[GPU] == "8"
    assert limits(worker)["memory"] == "512Gi"
    assert shm_size(worker_template) == "64Gi"
    assert env(worker)["NCCL_SOCKET_IFNAME"] == "eth0"


# --- seed 001 --------------------------------------------------------------------------------

ROCE_STACK = (
    EXISTING
    + """
nodePools:
  - {name: a100, gpusPerNode: 4, maxNodes: 2, fabric: roce, networks: [roce-network],
     taints: [{key: nvidia.com/gpu, effect: NoSchedule}], nodeSelector: {nvidia.com/gpu.present: "true"}}
network:
  networks:
    - {name: roce-network, namespace: ml-training, type: macvlan, master: enp94s0f0,
       ipam: {type: whereabouts, range: 192.168.10.0/24}}
scheduler: {type: none}
storage:
  volumes:
    - {name: training-checkpoints, namespace: ml-training, backend: nfs, server: nfs.example.internal,
       share: /exports/checkpoints, size: 2Ti}
"""
)


# seeds/001_056c43c1a9175bae.txt: PyTorchJob `llama-finetune` over RoCE (Multus `roce-network`)
def test_seed001_pytorchjob_roce_multus() -> None:
    rendered = render_yaml(
        ROCE_STACK
        + """
jobs:
  - name: llama-finetune
    namespace: ml-training
    image: my-registry/llama-trainer:v1.2
    command: [train.py, --model_name=meta-llama/Llama-3-8B, --batch_size=8, --gradient_accumulation_steps=4, --fp16,
              --output_dir=/checkpoints/llama-ft]
    nodes: 2
    resources: {cpu: 32, memory: 128Gi}
    shmSize: 64Gi
    nccl: {debug: INFO}
    volumes: [{claim: training-checkpoints, mountPath: /checkpoints}]
"""
    )
    job = find(rendered, "PyTorchJob", "llama-finetune")
    assert job["apiVersion"] == "kubeflow.org/v1"
    assert job["metadata"]["namespace"] == "ml-training"
    assert str(job["spec"]["nprocPerNode"]) == "4"
    roles = replicas(job)
    assert {role: r["replicas"] for role, r in roles.items()} == {"Master": 1, "Worker": 1}
    for role in ("Master", "Worker"):
        template = roles[role]["template"]
        c = container(template)
        assert c["name"] == "pytorch"  # the container the Training Operator configures
        # The seed's layout: command torchrun, flags and program in args.
        assert c["command"] == ["torchrun"]
        assert c["args"] == [
            "--nnodes=2",
            "--nproc_per_node=4",
            "--rdzv_backend=c10d",
            "--rdzv_endpoint=$(MASTER_ADDR):$(MASTER_PORT)",
            "--max_restarts=3",  # beyond the seed: a transient fault reruns the ranks in place
            "train.py",
            "--model_name=meta-llama/Llama-3-8B",
            "--batch_size=8",
            "--gradient_accumulation_steps=4",
            "--fp16",
            "--output_dir=/checkpoints/llama-ft",
        ]
        # RoCE over the Multus secondary interface: NCCL bootstraps on that interface (net1), not eth0.
        assert attached_networks(template) == ["roce-network"]
        e = env(c)
        assert e["NCCL_SOCKET_IFNAME"] == "net1"
        assert multus_interfaces(template) in (["net1"], [None])  # net1 is Multus' first default name
        assert (e["NCCL_IB_DISABLE"], e["NCCL_DEBUG"]) == ("0", "INFO")
        # The seed pins NCCL_IB_GID_INDEX=3. Under macvlan each pod's address sits at its own GID index
        # (multus-cni#1100, NVIDIA/nccl#890), so we leave the index to NCCL (>= 2.21 selects the RoCE v2
        # GID itself) and name the network's subnet so it picks the pod's own interface.
        assert "NCCL_IB_GID_INDEX" not in e
        assert e["NCCL_IB_ADDR_RANGE"] == "192.168.10.0/24"
        assert RDMA in limits(c)
        assert "IPC_LOCK" in c["securityContext"]["capabilities"]["add"]
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in template["spec"][
            "tolerations"
        ]
        assert limits(c)[GPU] == requests(c)[GPU] == "4"
        assert (limits(c)["cpu"], limits(c)["memory"]) == ("32", "128Gi")
        assert claim_at(template, "/checkpoints") == "training-checkpoints"
        assert shm_size(template) == "64Gi"
        assert roles[role]["restartPolicy"] == "OnFailure"
    nad = find(rendered, "NetworkAttachmentDefinition", "roce-network")
    assert nad["metadata"]["namespace"] == "ml-training"


# seeds/001_056c43c1a9175bae.txt: MPIJob `deepspeed-training` (their kubeflow.org/v1, ours v2beta1)
def test_seed001_mpijob_deepspeed() -> None:
    rendered = render_yaml(
        ROCE_STACK
        + """
jobs:
  - {name: deepspeed-training, namespace: ml-training, launcher: mpi, image: my-registry/deepspeed-trainer:v2.0,
     command: [train_deepspeed.py], nodes: 2, resources: {cpu: 32, memory: 128Gi}, shmSize: 64Gi,
     nccl: {debug: INFO}, backoffLimit: 3, deepspeed: {config: {train_batch_size: 64, zero_optimization: {stage: 2}}}}
"""
    )
    mpijob = find(rendered, "MPIJob")
    # The seed's kubeflow.org/v1 MPIJob is the Training Operator's legacy kind; the MPI Operator
    # the platform installs (trainingOperator.mpi) serves kubeflow.org/v2beta1.
    assert mpijob["apiVersion"] == "kubeflow.org/v2beta1"
    assert mpijob["spec"]["slotsPerWorker"] == 4
    assert mpijob["spec"]["runPolicy"]["backoffLimit"] == 3
    roles = replicas(mpijob)
    assert roles["Worker"]["replicas"] == 2
    launcher = container(roles["Launcher"]["template"])
    args = [*launcher["command"], *launcher.get("args", [])]
    assert after(args, "-np") == "8"
    assert {"NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE", "NCCL_DEBUG", "LD_LIBRARY_PATH"} <= forwarded(args)
    # mpirun forwards the launcher's values to the ranks on the workers.
    assert env(launcher)["NCCL_SOCKET_IFNAME"] == "net1"
    assert env(launcher)["NCCL_IB_DISABLE"] == "0"
    assert "train_deepspeed.py" in args
    assert any(a.startswith("--deepspeed_config=") and a.endswith("/ds_config.json") for a in args)

    worker_template = roles["Worker"]["template"]
    worker = container(worker_template)
    assert attached_networks(worker_template) == ["roce-network"]
    assert env(worker)["NCCL_SOCKET_IFNAME"] == "net1"
    assert limits(worker)[GPU] == "4"
    assert (limits(worker)["cpu"], limits(worker)["memory"]) == ("32", "128Gi")
    assert shm_size(worker_template) == "64Gi"
    # The ranks run on the workers, so the DeepSpeed config is mounted there.
    config_map = find(rendered, "ConfigMap")
    assert any(
        v.get("configMap", {}).get("name") == config_map["metadata"]["name"] for v in worker_template["spec"]["volumes"]
    )


# seeds/001_056c43c1a9175bae.txt: elastic PyTorchJob `elastic-training` (2..8 workers, 10 restarts)
def test_seed001_elastic_pytorchjob() -> None:
    rendered = render_yaml(
        EXISTING
        + """
nodePools: [{name: a100, gpusPerNode: 4, maxNodes: 8, nodeSelector: {nvidia.com/gpu.present: "true"}}]
scheduler: {type: none}
jobs:
  - {name: elastic-training, image: my-registry/elastic-trainer:v1, command: [train_elastic.py], nodes: 4,
     elastic: {minNodes: 2, maxNodes: 8, maxRestarts: 10}}
"""
    )
    job = find(rendered, "PyTorchJob")
    policy = job["spec"]["elasticPolicy"]
    assert (policy["minReplicas"], policy["maxReplicas"], policy["maxRestarts"]) == (2, 8, 10)
    assert policy["rdzvBackend"] == "c10d"
    roles = replicas(job)
    assert list(roles) == ["Worker"]  # elastic jobs have no Master
    assert roles["Worker"]["replicas"] == 4
    c = container(roles["Worker"]["template"])
    args = [*c["command"], *c["args"]]
    assert args[:1] == ["torchrun"]
    assert {"--nnodes=2:8", "--nproc_per_node=4", "--rdzv_backend=c10d", "--max_restarts=10"} <= set(args)
    # The seed meets at `elastic-training-master-0`, a pod an elastic job never has. The operator
    # gives every worker the rendezvous endpoint (worker-0) as PET_RDZV_ENDPOINT.
    assert "--rdzv_endpoint=$(PET_RDZV_ENDPOINT)" in args
    assert not any("master-0" in a for a in args)
    assert args[-1] == "train_elastic.py"
    assert limits(c)[GPU] == "4"


# seeds/001_056c43c1a9175bae.txt: NADs roce-network / ib-sriov-network / ib-host-device, PVC training-checkpoints
def test_seed001_network_attachment_definitions_and_checkpoint_pvc() -> None:
    rendered = render_yaml(
        EXISTING
        + """
network:
  networks:
    - {name: roce-network, namespace: ml-training, type: macvlan, master: enp94s0f0,
       ipam: {type: host-local, range: 192.168.10.0/24, rangeStart: 192.168.10.100, rangeEnd: 192.168.10.200,
              routes: [192.168.10.0/24]}}
    - {name: ib-sriov-network, namespace: ml-training, type: ib-sriov, pkey: "0x00FF",
       resourceName: nvidia.com/mlnx_ib_vf, ipam: {type: whereabouts, range: 192.168.20.0/24}}
    - {name: ib-host-device, namespace: ml-training, type: host-device, device: mlx5_0,
       ipam: {type: host-local, range: 192.168.30.0/24}}
storage:
  volumes:
    - {name: training-checkpoints, namespace: ml-training, backend: nfs, server: nfs.example.internal,
       share: /exports/checkpoints, size: 2Ti}
"""
    )
    seed = {
        "roce-network": {
            "cniVersion": "0.3.1",
            "type": "macvlan",
            "master": "enp94s0f0",
            "mode": "bridge",
            "ipam": {
                "type": "host-local",
                "subnet": "192.168.10.0/24",
                "rangeStart": "192.168.10.100",
                "rangeEnd": "192.168.10.200",
                "routes": [{"dst": "192.168.10.0/24"}],
            },
        },
        # The seed also sets "ibKubernetesEnabled": true, which needs the ib-kubernetes daemon; optional.
        "ib-sriov-network": {
            "cniVersion": "0.3.1",
            "type": "ib-sriov",
            "pkey": "0x00FF",
            "link_state": "enable",
            "rdmaIsolation": True,
            "ipam": {"type": "whereabouts", "range": "192.168.20.0/24"},
        },
        "ib-host-device": {
            "cniVersion": "0.3.1",
            "type": "host-device",
            "device": "mlx5_0",
            "ipam": {"type": "host-local", "subnet": "192.168.30.0/24"},
        },
    }
    for name, expected in seed.items():
        nad = find(rendered, "NetworkAttachmentDefinition", name)
        assert nad["metadata"]["namespace"] == "ml-training"
        config = json.loads(nad["spec"]["config"])
        assert {k: config.get(k) for k in expected} == expected, name
    # SR-IOV VFs come from a device plugin; the NAD names its resource for the pods that attach it.
    ib = find(rendered, "NetworkAttachmentDefinition", "ib-sriov-network")
    assert ib["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "nvidia.com/mlnx_ib_vf"

    pvc = find(rendered, "PersistentVolumeClaim", "training-checkpoints")
    assert pvc["metadata"]["namespace"] == "ml-training"
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    assert pvc["spec"]["resources"]["requests"]["storage"] == "2Ti"
    storage_class = find(rendered, "StorageClass", pvc["spec"]["storageClassName"])
    assert storage_class["reclaimPolicy"] == "Retain"  # checkpoints outlive the claim
    assert storage_class["provisioner"] == "nfs.csi.k8s.io"
    assert storage_class["parameters"] == {"server": "nfs.example.internal", "share": "/exports/checkpoints"}
    assert kinds(rendered).index("StorageClass") < kinds(rendered).index("PersistentVolumeClaim")
    assert kinds(rendered)[0] == "Namespace"


# --- seed 002 --------------------------------------------------------------------------------

TCP_STACK = (
    EXISTING + 'nodePools: [{name: gpu, gpusPerNode: 8, maxNodes: 4, nodeSelector: {nvidia.com/gpu.present: "true"}}]\n'
)


# seeds/002_d7ea59d0a3059b6e.txt: PyTorchJob `resnet-distributed-training` (1 Master + 3 Workers x 1 GPU)
def test_seed002_pytorchjob_resnet() -> None:
    rendered = render_yaml(
        TCP_STACK
        + """
scheduler: {type: none}
storage:
  volumes: [{name: imagenet-dataset, backend: storageClass, className: fast-ssd, size: 500Gi, accessMode: ReadOnlyMany}]
jobs:
  - {name: resnet-distributed-training, image: your-registry/distributed-training:v1, command: [train.py],
     nodes: 4, gpusPerNode: 1, resources: {cpu: 4, memory: 16Gi}, nccl: {debug: INFO},
     volumes: [{claim: imagenet-dataset, mountPath: /data, readOnly: true}]}
"""
    )
    # The seed mounts its ReadOnlyMany dataset claim read-write; the corrected form mounts it readOnly.
    job = find(rendered, "PyTorchJob")
    roles = replicas(job)
    assert {role: r["replicas"] for role, r in roles.items()} == {"Master": 1, "Worker": 3}
    assert str(job["spec"]["nprocPerNode"]) == "1"
    for role in roles.values():
        template = role["template"]
        c = container(template)
        assert limits(c) == requests(c)
        assert (limits(c)[GPU], limits(c)["memory"], limits(c)["cpu"]) == ("1", "16Gi", "4")
        assert (env(c)["NCCL_DEBUG"], env(c)["NCCL_SOCKET_IFNAME"]) == ("INFO", "eth0")
        assert claim_at(template, "/data") == "imagenet-dataset"
        assert shm_size(template) == "8Gi"  # 8Gi per GPU, at most half the memory
        assert "--nnodes=4" in c["args"]
        assert "--nproc_per_node=1" in c["args"]
    pvc = find(rendered, "PersistentVolumeClaim", "imagenet-dataset")
    assert pvc["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert pvc["spec"]["storageClassName"] == "fast-ssd"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "500Gi"
    assert "StorageClass" not in kinds(rendered)  # an existing class is used, not made


# seeds/002_d7ea59d0a3059b6e.txt: TFJob `tensorflow-distributed` (Chief + 2 Workers x 1 GPU)
def test_seed002_tfjob() -> None:
    rendered = render_yaml(
        TCP_STACK
        + """
scheduler: {type: none}
jobs:
  - {name: tensorflow-distributed, launcher: tensorflow, image: tensorflow/tensorflow:2.13.0-gpu,
     command: [python, /opt/training/train.py], nodes: 3, gpusPerNode: 1, resources: {memory: 16Gi}}
"""
    )
    job = find(rendered, "TFJob")
    assert job["apiVersion"] == "kubeflow.org/v1"
    roles = replicas(job)
    assert {role: r["replicas"] for role, r in roles.items()} == {"Chief": 1, "Worker": 2}
    for role in roles.values():
        c = container(role["template"])
        assert c["name"] == "tensorflow"
        assert [*c["command"], *c.get("args", [])] == ["python", "/opt/training/train.py"]
        assert limits(c)[GPU] == requests(c)[GPU] == "1"
        assert limits(c)["memory"] == requests(c)["memory"] == "16Gi"
        assert role["restartPolicy"] == "OnFailure"


# The seed's gang-scheduled PyTorchJob, completed with a container so only its own mistake remains.
SEED_GANG_PYTORCHJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "gang-scheduled-training"},
    "spec": {
        "schedulerName": "volcano",
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "template": {
                    "spec": {
                        "schedulerName": "volcano",
                        "containers": [{"name": "pytorch", "image": "your-registry/distributed-training:v1"}],
                    }
                },
            }
        },
    },
}


# seeds/002_d7ea59d0a3059b6e.txt: Volcano gang-scheduled PyTorchJob `gang-scheduled-training`
def test_seed002_volcano_gang_scheduling() -> None:
    # The seed's `spec.schedulerName` is not a PyTorchJob field: the CRD schema rejects it.
    found = errors(SEED_GANG_PYTORCHJOB)
    assert found
    assert any("schedulerName" in e for e in found), found
    without = json.loads(json.dumps(SEED_GANG_PYTORCHJOB))
    del without["spec"]["schedulerName"]
    assert errors(without) == []  # and that is its only mistake

    rendered = render_yaml(
        TCP_STACK
        + """
scheduler: {type: volcano, queues: [{name: research, gpus: 32}]}
jobs:
  - {name: gang-scheduled-training, launcher: pytorch, image: your-registry/distributed-training:v1, command: [train.py],
     nodes: 4, gpusPerNode: 1}
"""
    )
    job = find(rendered, "PyTorchJob")
    assert "schedulerName" not in job["spec"]
    policy = job["spec"]["runPolicy"]["schedulingPolicy"]
    assert policy["minAvailable"] == 4  # the whole job: Master + 3 Workers
    assert policy["queue"] == "research"
    for role in replicas(job).values():
        assert role["template"]["spec"]["schedulerName"] == "volcano"
    queue = find(rendered, "Queue", "research")
    assert queue["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert queue["spec"]["capability"][GPU] == "32"


# --- seed 003 --------------------------------------------------------------------------------


# seeds/003_e479db331d42e81b.txt: elastic PyTorchJob `bert-finetune` (2..8 workers x 8 GPUs, RDMA)
def test_seed003_elastic_bert() -> None:
    rendered = render_yaml(
        EXISTING
        + """
nodePools:
  - {name: h100, gpusPerNode: 8, maxNodes: 8, fabric: infiniband, nodeSelector: {nvidia.com/gpu.present: "true"}}
scheduler: {type: none}
jobs:
  - {name: bert-finetune, image: registry.example.com/training:1.0,
     command: [train.py, --model=bert-large, --batch-size-per-gpu=32], nodes: 4,
     elastic: {minNodes: 2, maxNodes: 8}, resources: {memory: 256Gi}, nccl: {debug: INFO, netGdrLevel: SYS}}
"""
    )
    job = find(rendered, "PyTorchJob", "bert-finetune")
    policy = job["spec"]["elasticPolicy"]
    assert (policy["minReplicas"], policy["maxReplicas"], policy["rdzvBackend"]) == (2, 8, "c10d")
    roles = replicas(job)
    assert list(roles) == ["Worker"]
    assert roles["Worker"]["replicas"] == 4
    c = container(roles["Worker"]["template"])
    args = [*c["command"], *c["args"]]
    assert {"--nproc_per_node=8", "--nnodes=2:8", "--rdzv_backend=c10d", "--rdzv_endpoint=$(PET_RDZV_ENDPOINT)"} <= set(
        args
    )
    assert args[-3:] == ["train.py", "--model=bert-large", "--batch-size-per-gpu=32"]
    e = env(c)
    assert (e["NCCL_DEBUG"], e["NCCL_IB_DISABLE"], e["NCCL_NET_GDR_LEVEL"]) == ("INFO", "0", "SYS")
    assert (limits(c)[GPU], limits(c)[RDMA], limits(c)["memory"]) == ("8", "1", "256Gi")


# seeds/003_e479db331d42e81b.txt: TFJob `resnet-train` (Chief + 3 Workers x 8 GPUs)
def test_seed003_tfjob_resnet_train() -> None:
    rendered = render_yaml(
        TCP_STACK
        + """
scheduler: {type: none}
jobs:
  - {name: resnet-train, launcher: tensorflow, image: registry.example.com/tf-train:1.0, command: [python, train.py],
     nodes: 4, env: {TF_FORCE_GPU_ALLOW_GROWTH: true}}
"""
    )
    job = find(rendered, "TFJob", "resnet-train")
    roles = replicas(job)
    assert {role: r["replicas"] for role, r in roles.items()} == {"Chief": 1, "Worker": 3}
    for role in roles.values():
        c = container(role["template"])
        assert [*c["command"], *c.get("args", [])] == ["python", "train.py"]
        assert limits(c)[GPU] == "8"
        assert env(c)["TF_FORCE_GPU_ALLOW_GROWTH"] == "true"


# --- the seeds themselves --------------------------------------------------------------------


def test_seed_documents_are_the_ones_reproduced() -> None:
    """The names and numbers asserted above are the seeds' own (guards against drifting from them)."""
    assert "name: llm-finetune" in seed_text("000")
    assert "- --node_rank=$(JOB_COMPLETION_INDEX)" in seed_text("000")
    assert '"reduce_bucket_size": 5e8' in seed_text("000")
    assert "- -np 32" in seed_text("000")
    assert "k8s.v1.cni.cncf.io/networks: roce-network" in seed_text("001")
    assert "--rdzv_endpoint=elastic-training-master-0:29400" in seed_text("001")
    assert '"pkey": "0x00FF"' in seed_text("001")
    assert "schedulerName: volcano" in seed_text("002")
    assert "name: resnet-train" in seed_text("003")


def test_job_objects_equal_the_rendered_ones() -> None:
    """`trainingjob.objects(plan)` is what the stack renders for each job (the component path)."""
    stack = resolve(
        parse_stack(
            yaml.safe_load(
                ROCE_STACK
                + """
jobs:
  - {name: llama-finetune, namespace: ml-training, image: img:1, command: [train.py], nodes: 2}
  - {name: ds, namespace: ml-training, launcher: mpi, image: img:1, command: [train.py], nodes: 2,
     deepspeed: {config: {train_batch_size: 8}}}
"""
            )
        )
    )
    rendered = render(stack)
    from_plans = [o for plan in stack.jobs for o in trainingjob.objects(plan)]
    assert list(rendered.objects[-len(from_plans) :]) == from_plans
    assert_valid(*from_plans)
