"""A TrainingJob placed on a pool: every value its manifests need, derived once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from components import launchers, nvlink, quantity
from components.allocatable import allocatable, unadvertised
from components.errors import ConfigError, Issue
from components.fabric import MULTUS_ANNOTATION, PRIMARY_INTERFACE, FabricProfile, profile
from components.manifests import apibounds, podnames
from components.models.envsource import EnvSource
from components.models.job import CHECKPOINT_ENV, MPI_RUNTIMES, TrainingJobSpec
from components.models.storage import VolumeSpec
from components.pool import Pool
from components.topology import Placement, placement

SchedulerKind = Literal["volcano", "kueue", "none"]
# PyTorch's NCCL watchdog (torch.distributed, used by torchrun, DeepSpeed and MPI-launched PyTorch):
# tear the process down on a collective error or timeout instead of hanging, and dump the flight
# recorder on a timeout so the stuck rank can be found. Values as awsome-distributed-training's
# Megatron PyTorchJob template sets them (3.test_cases/megatron/megatron-lm/kubernetes/gpt3/manifests/
# pytorchjob.yaml-template); a job's env overrides them.
TORCH_WATCHDOG_ENV = {
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
    "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
    "TORCH_NCCL_TRACE_BUFFER_SIZE": "20000",
}
VOLCANO_DEFAULT_QUEUE = "default"
SHM_PER_GPU_GIB = 8
MIN_MULTI_NODE_SHM = "1Gi"
"""The least /dev/shm a multi-node job gets: NCCL's shared-memory transport and data loaders need it."""
# torchrun and mpirun are added by the launchers; a command that starts with them would run twice.
_LAUNCHER_PROGRAMS = {"pytorch": "torchrun", "indexed": "torchrun", "mpi": "mpirun"}
_RUNTIME_PROGRAMS = {"torch": "torchrun", "deepspeed": "mpirun", "mpi": "mpirun"}  # tensorflow: the program itself
_PYTHON = ("python", "python3")
MAX_RESTARTS_ENV = "PET_MAX_RESTARTS"
"""torchrun's --max_restarts as an environment variable: torch.distributed.run reads each flag it is not given
from PET_<FLAG> (torch/distributed/argparse_util.py env), and Trainer v2.3.0's torch plugin sets only PET_NNODES,
PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT (pkg/runtime/framework/plugins/torch/
torch.go:145-166), so a torch TrainJob's in-place restarts are this variable."""
TF_CONFIG_ENV = "TF_CONFIG"
"""What the tensorflow runtime's command writes from the job's nodes (components/manifests/trainjob.py)."""
# Environment Kubeflow Trainer sets itself and refuses in a TrainJob (its torch and MPI plugins).
TRAINER_RESERVED_ENV = {
    "torch": ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"),
    "mpi": (
        "OMPI_MCA_orte_default_hostfile",
        "OMPI_MCA_plm_rsh_args",
        "OMPI_MCA_orte_keep_fqdn_hostnames",
        "OMPI_MCA_orte_set_default_slots",
    ),
}
# Network placement reaches Volcano through a PodGroup; the v1 operators make theirs without one.
_VOLCANO_PLACED = ("trainjob", "indexed")


@dataclass(frozen=True, slots=True)
class JobPlan:
    """A validated job on its pool, with its derived GPUs, fabric, environment and /dev/shm."""

    spec: TrainingJobSpec
    pool: Pool
    scheduler: SchedulerKind
    queue: str | None
    fabric: FabricProfile
    nodes: int
    gpus_per_node: int
    shm_size: str
    env: dict[str, str | EnvSource]
    """Text, or a value the pods read from a Secret or ConfigMap (the job's own Secret for Pulumi secrets)."""
    restart_policy: str
    requests: dict[str, str]
    """cpu and memory of each worker: the job's, else its share of a known machine; empty when neither."""
    placement: Placement | None = None
    """Where in the network topology the job's pods land; None when anywhere."""
    compute_domain: str | None = None
    """Rack-scale NVLink: the job's ComputeDomain, whose IMEX channel every pod claims; None otherwise."""
    one_domain: bool = False
    """Every pod of the job lands in one NVLink domain (the job does not span domains)."""
    volumes: tuple[VolumeSpec, ...] = ()
    """The declared volumes behind the job's claims, as far as they are known (their backend decides what a pod
    mounting them needs); a claim not among them is mounted as a plain claim."""

    def volume(self, claim: str) -> VolumeSpec | None:
        """The declared volume behind one of the job's claims, if known."""
        return next((v for v in self.volumes if v.name == claim), None)

    @property
    def claims(self) -> tuple[dict[str, str], ...]:
        """The pod's dynamic resource claims: its fabric's, and its ComputeDomain's channel."""
        own = (nvlink.channel_claim(self.compute_domain),) if self.compute_domain else ()
        return (*self.fabric.claims, *own)

    @property
    def name(self) -> str:
        """The job's name."""
        return self.spec.name

    @property
    def namespace(self) -> str:
        """The job's namespace."""
        return self.spec.namespace

    @property
    def world_size(self) -> int:
        """Processes across the job: nodes x GPUs per node."""
        return self.nodes * self.gpus_per_node

    @property
    def min_nodes(self) -> int:
        """Nodes the job needs at once to start (the gang size)."""
        return self.spec.elastic.min_nodes if self.spec.elastic else self.nodes

    @property
    def program(self) -> list[str]:
        """The user's training program and arguments, with the DeepSpeed config flag when set."""
        command = list(self.spec.command)
        torchrun = _program(self.spec) == "torchrun"
        if torchrun and command[0] in _PYTHON:
            command = command[1:]  # torchrun starts the interpreter itself
        elif not torchrun and command[0].endswith(".py"):
            command = ["python", *command]
        if self.spec.deepspeed is not None:
            command.append(f"--deepspeed_config={self.spec.deepspeed.config_path}")
        return command


def plan(
    spec: TrainingJobSpec,
    pool: Pool,
    scheduler: SchedulerKind = "none",
    queue: str | None = None,
    *,
    path: str = "",
    volumes: Iterable[VolumeSpec] = (),
) -> JobPlan:
    """The job placed on the pool; ConfigError (naming `path`) when it does not fit.

    `queue` is used when the spec names none; under Volcano the fallback is its `default` queue. `volumes` are the
    declared volumes (the stack's, or a platform's `storage` output): those behind the job's claims are kept.
    """
    if spec.launcher is None:
        # A job planned alone (the TrainingJob component): a TrainJob where its pool has Trainer's runtimes.
        settled, _, found = launchers.settle(
            [spec], trainer=bool(pool.runtimes), default=None, deployed=None, path=path
        )
        if found:
            raise ConfigError(found)
        spec = settled[0]
    fabric = profile(pool, spec.namespace)
    issues = job_issues(spec, pool, path, fabric=fabric)
    issues += _placement_issues(spec, pool, scheduler, path)
    issues += _nvlink_issues(spec, pool, path)
    if issues:
        raise ConfigError(issues)
    domain = nvlink.needs_domain(pool, spec.most_nodes)
    gpus = spec.gpus_per_node or pool.gpus_per_node
    requests = worker_requests(spec, pool, fabric)
    tensorflow = spec.launcher == "tensorflow" or spec.training_runtime == "tensorflow"
    watchdog = TORCH_WATCHDOG_ENV if not tensorflow else {}
    nvls = nvlink.ENV if domain else {}
    checkpoint = {CHECKPOINT_ENV: spec.checkpoint_dir} if spec.checkpoint_dir is not None else {}
    # As the pytorch launcher's --max_restarts: moved to a torch TrainJob, a job keeps its in-place restarts.
    restarts = {MAX_RESTARTS_ENV: str(spec.in_place_restarts)} if spec.training_runtime == "torch" else {}
    env = {
        "NCCL_DEBUG": "WARN",
        **watchdog,
        **restarts,
        **fabric.env,
        **nvls,
        **checkpoint,
        **spec.nccl_env,
        **spec.env,
    }
    claims = {m.claim for m in spec.mounts}
    queue = spec.scheduler.queue or queue
    if scheduler == "volcano" and queue is None:
        queue = VOLCANO_DEFAULT_QUEUE
    return JobPlan(
        spec=spec,
        pool=pool,
        scheduler=scheduler,
        queue=queue if scheduler != "none" else None,
        fabric=fabric,
        nodes=spec.world_nodes,
        gpus_per_node=gpus,
        shm_size=spec.shm_size or default_shm(gpus, requests.get("memory"), pool.memory_gib),
        env=env,
        restart_policy=spec.restart_policy or ("Never" if spec.launcher in ("indexed", "trainjob") else "OnFailure"),
        requests=requests,
        placement=job_placement(spec, pool, scheduler),
        compute_domain=spec.name if domain else None,
        one_domain=domain and not spans_domains(spec),
        volumes=tuple(v for v in volumes if v.namespace == spec.namespace and v.name in claims),
    )


def _program(spec: TrainingJobSpec) -> str | None:
    """The program the launcher starts the user's command with (torchrun, mpirun), if any."""
    runtime = spec.training_runtime
    return _RUNTIME_PROGRAMS.get(runtime) if runtime else _LAUNCHER_PROGRAMS.get(spec.launcher)


def spans_domains(spec: TrainingJobSpec) -> bool:
    """Whether the job says it may span NVLink domains: a topology level coarser than the NVLink domain, or only a
    preference."""
    topology = spec.topology
    return topology is not None and (topology.mode == "preferred" or topology.level != nvlink.NVLINK_LEVEL)


def job_placement(spec: TrainingJobSpec, pool: Pool, scheduler: SchedulerKind) -> Placement | None:
    """Where the job lands in its pool's network topology; None when the scheduler cannot place it."""
    if scheduler == "none" or (scheduler == "volcano" and spec.launcher not in _VOLCANO_PLACED):
        return None
    topology = spec.topology
    if topology is None and nvlink.needs_domain(pool, spec.most_nodes) and pool.topology is not None:
        # A job that shares an NVLink domain must fit in one: required, not preferred.
        return placement(pool.topology, "required", nvlink.NVLINK_LEVEL, spec.world_nodes)
    return placement(
        pool.topology, topology.mode if topology else None, topology.level if topology else None, spec.world_nodes
    )


def _placement_issues(spec: TrainingJobSpec, pool: Pool, scheduler: SchedulerKind, path: str) -> list[Issue]:
    """A topology the job names that its pool or scheduler cannot honour."""
    if spec.topology is None:
        return []
    p = f"{path}." if path else ""
    topology = pool.topology
    if topology is None or scheduler == "none":
        return [
            Issue(
                f"{p}topology",
                f"pool '{pool.name}' has no network topology to place by: it needs scheduler.topology.enabled "
                "(with scheduler.type volcano or kueue) and machines labelled with their place in the network "
                "(EC2 instance topology types such as p5; GKE A3 Mega and newer; the declared levels elsewhere)",
            )
        ]
    if scheduler == "volcano" and spec.launcher not in _VOLCANO_PLACED:
        return [
            Issue(
                f"{p}topology",
                f"Volcano places a job by network topology through its PodGroup, which the {spec.launcher} "
                "launcher's operator makes without one: use launcher trainjob or indexed",
            )
        ]
    level = spec.topology.level
    if topology.level(level) is None:
        return [
            Issue(
                f"{p}topology.level",
                f"'{level}' is not a level of pool '{pool.name}''s topology; use one of: {', '.join(topology.names)}",
            )
        ]
    chosen = topology.level(level)
    if chosen is not None and chosen.one_node and spec.most_nodes > 1:
        shared = [n.name for n in topology.levels if not n.one_node]
        return [
            Issue(
                f"{p}topology.level",
                f"one {level} holds one node, and the job runs on {spec.most_nodes}: use a coarser level "
                f"({', '.join(shared)})",
            )
        ]
    return []


def _nvlink_issues(spec: TrainingJobSpec, pool: Pool, path: str) -> list[Issue]:
    """A job larger than one NVLink domain that does not say it spans domains."""
    if not nvlink.needs_domain(pool, spec.most_nodes) or spans_domains(spec):
        return []
    if spec.most_nodes <= pool.nvlink_domain_nodes:
        return []
    p = f"{path}." if path else ""
    field = "elastic.maxNodes" if spec.elastic else "nodes"
    coarser = (
        [level.name for level in pool.topology.levels if level.name != nvlink.NVLINK_LEVEL and not level.one_node]
        if pool.topology
        else []
    )
    span = (
        f"name a coarser topology.level ({', '.join(coarser)})"
        if coarser
        else "turn on scheduler.topology and name a level coarser than nvlink in topology.level"
    )
    return [
        Issue(
            f"{p}{field}",
            f"{spec.most_nodes} nodes, but one NVLink domain of pool '{pool.name}' joins at most "
            f"{pool.nvlink_domain_nodes} (nodePools.nvlinkDomainNodes): ask for at most {pool.nvlink_domain_nodes}, "
            f"or, to span domains (NVLink inside each, the network between them), {span}",
        )
    ]


def worker_requests(spec: TrainingJobSpec, pool: Pool, fabric: FabricProfile) -> dict[str, str]:
    """Each worker's cpu and memory: what the job states, else its share of the pool's machine."""
    return _stated_or(spec, _machine_share(spec, pool, fabric))


def _machine_share(spec: TrainingJobSpec, pool: Pool, fabric: FabricProfile) -> dict[str, str]:
    """The cpu and memory a worker of the job gets from a machine the catalog knows (else empty)."""
    return pool.worker_requests(spec.gpus_per_node or pool.gpus_per_node)


def _stated_or(spec: TrainingJobSpec, share: dict[str, str]) -> dict[str, str]:
    stated = {"cpu": spec.resources.cpu, "memory": spec.resources.memory}
    return {name: value for name in ("cpu", "memory") if (value := stated[name] or share.get(name))}


def default_shm(gpus: int, memory: str | None, node_memory_gib: int | None) -> str:
    """8Gi of /dev/shm per GPU, at most half the worker's memory limit and half the node's memory."""
    cap = Decimal(SHM_PER_GPU_GIB * gpus) * 2**30
    if memory is not None:
        cap = min(cap, quantity.parse(memory) / 2)
    if node_memory_gib is not None:
        cap = min(cap, Decimal(node_memory_gib) * 2**30 / 2)
    if cap >= 2**30:
        return quantity.gibibytes(int(cap // 2**30))
    return f"{max(1, int(cap // 2**20))}Mi"


def job_issues(
    spec: TrainingJobSpec, pool: Pool, path: str = "", *, fabric: FabricProfile | None = None
) -> list[Issue]:
    """What stops a job from running on a pool: too many GPUs or nodes, the wrong interface, ..."""
    issues: list[Issue] = []
    p = f"{path}." if path else ""
    gpus = spec.gpus_per_node or pool.gpus_per_node
    if gpus > pool.gpus_per_node:
        issues.append(
            Issue(
                f"{p}gpusPerNode",
                f"{gpus} GPUs per node, but pool '{pool.name}' has {pool.gpus_per_node}; "
                f"ask for at most {pool.gpus_per_node} or choose a larger pool",
            )
        )
    fabric = fabric or profile(pool, spec.namespace)
    if fabric.whole_node and gpus != pool.gpus_per_node:
        nics = f"{pool.efa_interfaces} EFA devices" if pool.fabric == "efa" else f"{pool.gpu_nics} GPU NICs"
        issues.append(
            Issue(
                f"{p}gpusPerNode",
                f"an {pool.fabric} worker takes the whole node ({nics}, {pool.gpus_per_node} GPUs); drop gpusPerNode",
            )
        )
    most = spec.most_nodes
    field = "elastic.maxNodes" if spec.elastic else "nodes"
    if most > pool.max_nodes:
        issues.append(
            Issue(
                f"{p}{field}",
                f"{most} nodes, but pool '{pool.name}' has at most {pool.max_nodes}; "
                "lower it or raise the pool's maxNodes",
            )
        )
    program = _program(spec)
    if program and spec.command[0] == program:
        runner = f"the {spec.training_runtime} runtime" if spec.training_runtime else f"the {spec.launcher} launcher"
        issues.append(
            Issue(f"{p}command", f"{runner} runs {program} itself; give the training script and its arguments")
        )
    issues += _trainjob_issues(spec, p)
    issues += podnames.name_issues(spec, path)
    issues += apibounds.issues(spec, path)
    if pool.networks and not pool.networks_in(spec.namespace):
        names = ", ".join(sorted({f"{n.namespace}/{n.name}" for n in pool.networks}))
        issues.append(
            Issue(
                f"{p}namespace",
                f"pool '{pool.name}' attaches {names}, none of which is declared in namespace '{spec.namespace}'",
            )
        )
    # env overrides nccl, so the value the pod gets is env's when both set it.
    from_env = "NCCL_SOCKET_IFNAME" in spec.env
    ifname = spec.env.get("NCCL_SOCKET_IFNAME") or spec.nccl_env.get("NCCL_SOCKET_IFNAME")
    ifname = ifname if isinstance(ifname, str) else None  # read from a Secret or ConfigMap: unknown here
    where = f"{p}env.NCCL_SOCKET_IFNAME" if from_env else f"{p}nccl.socketIfname"
    multus = MULTUS_ANNOTATION in fabric.annotations
    attached = [i for i in fabric.interfaces if i != PRIMARY_INTERFACE] if multus else []
    if ifname and not _names_interface(ifname, fabric.interfaces):
        issues.append(Issue(where, f"'{ifname}' is not an interface of this pod ({', '.join(fabric.interfaces)})"))
    elif (
        ifname
        and attached
        and not ifname.startswith("^")
        and all(w.lstrip("=").startswith("eth") for w in ifname.split(","))
    ):
        # The nccl-socket-interface rule's verdict, given at the config line rather than by `check` afterwards.
        issues.append(
            Issue(
                where,
                f"'{ifname}' keeps NCCL's bootstrap on eth0 while the pod attaches {', '.join(attached)}: "
                "name one of those, or leave it unset",
            )
        )
    share = _machine_share(spec, pool, fabric)
    requests = _stated_or(spec, share)
    memory = requests.get("memory")
    # GPUs beyond the node are gpusPerNode's error above; here, what the fabric makes the worker request.
    worker = dict(fabric.resources)
    issues += [
        Issue(f"{p}nodePool", f"a worker {problem}: it would never be scheduled")
        for problem in unadvertised(worker, pool)
    ]
    issues += _beyond_the_machine(spec, pool, share, p)
    shm = spec.shm_size or default_shm(gpus, memory, pool.memory_gib)
    if (spec.elastic or spec.world_nodes > 1) and quantity.parse(shm) < quantity.parse(MIN_MULTI_NODE_SHM):
        field = "shmSize" if spec.shm_size else "resources.memory"
        issues.append(
            Issue(
                f"{p}{field}",
                f"/dev/shm would be {shm}, below the {MIN_MULTI_NODE_SHM} a multi-node job needs: "
                + ("write a size such as 64Gi" if spec.shm_size else "raise the memory (/dev/shm counts against it)"),
            )
        )
    if spec.shm_size and memory and quantity.parse(spec.shm_size) >= quantity.parse(memory):
        issues.append(
            Issue(
                f"{p}shmSize",
                f"{spec.shm_size} of /dev/shm does not fit in the worker's memory ({memory}"
                + ("" if spec.resources.memory else ", its share of the machine")
                + "): shared memory counts against the worker's memory limit",
            )
        )
    return issues


def _trainjob_issues(spec: TrainingJobSpec, p: str) -> list[Issue]:
    """What Kubeflow Trainer v2.3 refuses or cannot express in a TrainJob."""
    runtime = spec.training_runtime
    if runtime is None:
        return []
    issues: list[Issue] = []
    reserved = TRAINER_RESERVED_ENV.get("mpi" if runtime in MPI_RUNTIMES else runtime, ())
    for name in spec.env:
        if name in reserved:
            issues.append(Issue(f"{p}env.{name}", f"Kubeflow Trainer sets {name} itself and refuses it in a TrainJob"))
    if runtime == "tensorflow" and TF_CONFIG_ENV in spec.env:
        issues.append(
            Issue(
                f"{p}env.{TF_CONFIG_ENV}",
                "the tensorflow runtime writes TF_CONFIG itself (every node a worker, each pod its index): drop it",
            )
        )
    if runtime == "torch" and MAX_RESTARTS_ENV in spec.env:
        issues.append(
            Issue(
                f"{p}env.{MAX_RESTARTS_ENV}",
                f"the torch runtime sets {MAX_RESTARTS_ENV} from maxRestarts (default 3): set maxRestarts instead",
            )
        )
    if runtime in MPI_RUNTIMES and spec.world_nodes < 2:
        issues.append(
            Issue(
                f"{p}nodes",
                f"a {runtime} TrainJob runs its launcher as a node beside at least one more (Trainer v2.3 starts "
                "max(nodes-1, 1) node pods), so one node would take two: use nodes >= 2, or runtime torch",
            )
        )
    if spec.restart_policy is not None:
        issues.append(
            Issue(
                f"{p}restartPolicy",
                "a TrainJob restarts as a whole (its runtime's JobSet failurePolicy, sized by backoffLimit): "
                "drop restartPolicy",
            )
        )
    if spec.ttl_seconds_after_finished is not None:
        issues.append(
            Issue(
                f"{p}ttlSecondsAfterFinished",
                "a TrainJob has no TTL in Kubeflow Trainer v2.3 (its spec and its runtime's JobSet take none): drop "
                "it, or use a v1 launcher",
            )
        )
    return issues


def _beyond_the_machine(spec: TrainingJobSpec, pool: Pool, default: dict[str, str], p: str) -> list[Issue]:
    """A stated cpu or memory more than a node of the pool advertises: the workers would never be scheduled."""
    issues: list[Issue] = []
    offered = allocatable(pool)
    for name, stated in (("cpu", spec.resources.cpu), ("memory", spec.resources.memory)):
        has = offered.get(name)
        if stated is None or has is None or quantity.parse(stated) <= quantity.parse(has):
            continue
        if name not in default:  # the pool states its nodes' allocatable, of a machine the catalog does not know
            issues.append(
                Issue(
                    f"{p}resources.{name}",
                    f"{stated} is more than a node of pool '{pool.name}' advertises ({has}, its allocatable.{name}): "
                    f"ask for at most that, less what the node's DaemonSets request",
                )
            )
            continue
        amount = quantity.parse(has)
        figure = (
            f"{amount.normalize():f} of a {pool.machine_type}'s {pool.vcpus} vCPUs"
            if name == "cpu"
            else f"{amount / 2**30:.1f} GiB of a {pool.machine_type}'s {pool.memory_gib} GiB"
        )
        issues.append(
            Issue(
                f"{p}resources.{name}",
                f"{stated} is more than a node of pool '{pool.name}' advertises ({figure}): ask for at most "
                f"{default[name]} (its share less the system reserve), or drop resources.{name} to get that",
            )
        )
    return issues


def _names_interface(value: str, interfaces: tuple[str, ...]) -> bool:
    """Whether an NCCL_SOCKET_IFNAME value selects an interface the pod has (prefixes and ^exclusions)."""
    if value.startswith("^"):
        excluded = [v.lstrip("=") for v in value[1:].split(",")]
        return any(not any(i.startswith(e) for e in excluded) for i in interfaces)
    for item in value.split(","):
        exact = item.startswith("=")
        name = item.lstrip("=")
        if any(i == name if exact else i.startswith(name) for i in interfaces):
            return True
    return False
