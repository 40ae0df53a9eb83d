"""A TrainingJob placed on a pool: every value its manifests need, derived once."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from components import quantity
from components.errors import ConfigError, Issue
from components.fabric import FabricProfile, profile
from components.models.job import TrainingJobSpec
from components.pool import Pool

SchedulerKind = Literal["volcano", "kueue", "none"]
VOLCANO_DEFAULT_QUEUE = "default"
SHM_PER_GPU_GIB = 8
MIN_MULTI_NODE_SHM = "1Gi"
"""The least /dev/shm a multi-node job gets: NCCL's shared-memory transport and data loaders need it."""
# torchrun and mpirun are added by the launchers; a command that starts with them would run twice.
_LAUNCHER_PROGRAMS = {"pytorch": "torchrun", "indexed": "torchrun", "mpi": "mpirun"}
_PYTHON = ("python", "python3")


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
    env: dict[str, str]
    restart_policy: str
    requests: dict[str, str]
    """cpu and memory of each worker: the job's, else its share of a known machine; empty when neither."""

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
        if self.spec.launcher in ("pytorch", "indexed") and command[0] in _PYTHON:
            command = command[1:]  # torchrun starts the interpreter itself
        elif self.spec.launcher in ("mpi", "tensorflow") and command[0].endswith(".py"):
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
) -> JobPlan:
    """The job placed on the pool; ConfigError (naming `path`) when it does not fit.

    `queue` is used when the spec names none; under Volcano the fallback is its `default` queue.
    """
    fabric = profile(pool, spec.namespace)
    issues = job_issues(spec, pool, path, fabric=fabric)
    if issues:
        raise ConfigError(issues)
    gpus = spec.gpus_per_node or pool.gpus_per_node
    requests = worker_requests(spec, pool, fabric)
    env = {"NCCL_DEBUG": "WARN", **fabric.env, **spec.nccl_env, **spec.env}
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
        restart_policy=spec.restart_policy or ("Never" if spec.launcher == "indexed" else "OnFailure"),
        requests=requests,
    )


def worker_requests(spec: TrainingJobSpec, pool: Pool, fabric: FabricProfile) -> dict[str, str]:
    """Each worker's cpu and memory: what the job states, else its share of the pool's machine."""
    return _stated_or(spec, _machine_share(spec, pool, fabric))


def _machine_share(spec: TrainingJobSpec, pool: Pool, fabric: FabricProfile) -> dict[str, str]:
    """The cpu and memory a worker of the job gets from a machine the catalog knows (else empty)."""
    return pool.worker_requests(spec.gpus_per_node or pool.gpus_per_node, _hugepages(fabric))


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
    program = _LAUNCHER_PROGRAMS.get(spec.launcher)
    if program and spec.command[0] == program:
        issues.append(
            Issue(
                f"{p}command",
                f"the {spec.launcher} launcher runs {program} itself; give the training script and its arguments",
            )
        )
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
    if ifname and not _names_interface(ifname, fabric.interfaces):
        issues.append(
            Issue(
                f"{p}env.NCCL_SOCKET_IFNAME" if from_env else f"{p}nccl.socketIfname",
                f"'{ifname}' is not an interface of this pod ({', '.join(fabric.interfaces)})",
            )
        )
    share = _machine_share(spec, pool, fabric)
    requests = _stated_or(spec, share)
    memory = requests.get("memory")
    if any(r.startswith("hugepages-") for r in fabric.resources) and not requests:
        issues.append(
            Issue(
                f"{p}resources.memory",
                f"an {pool.fabric} worker requests huge pages, and Kubernetes then requires a memory or cpu "
                f"request: set resources.memory ({pool.machine_type or 'this machine'} is not in the catalog, "
                "so it cannot be derived)",
            )
        )
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


def _hugepages(fabric: FabricProfile) -> Decimal:
    """The huge pages a worker of this fabric requests, in bytes."""
    return sum((quantity.parse(v) for r, v in fabric.resources.items() if r.startswith("hugepages-")), Decimal(0))


def _beyond_the_machine(spec: TrainingJobSpec, pool: Pool, default: dict[str, str], p: str) -> list[Issue]:
    """A stated cpu or memory no node of the pool has: the workers would never be scheduled."""
    issues: list[Issue] = []
    machine = {"cpu": pool.vcpus, "memory": pool.memory_gib * 2**30 if pool.memory_gib else None}
    unit = {"cpu": "vCPUs", "memory": "GiB"}
    for name, stated in (("cpu", spec.resources.cpu), ("memory", spec.resources.memory)):
        has = machine[name]
        if stated is None or has is None or quantity.parse(stated) <= has:
            continue
        figure = pool.vcpus if name == "cpu" else pool.memory_gib
        issues.append(
            Issue(
                f"{p}resources.{name}",
                f"{stated} is more than a {pool.machine_type} node has ({figure} {unit[name]}): ask for at most "
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
