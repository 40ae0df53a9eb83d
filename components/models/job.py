"""TrainingJob: the workload an ML engineer declares."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from components.models.base import Count, DnsLabel, EnvValue, ImageRef, JobName, ObjectName, Quantity, Spec, at
from components.models.envsource import EnvEntry, EnvFromSpec, EnvSource, SecretEnv

Launcher = Literal["pytorch", "mpi", "tensorflow", "indexed", "trainjob"]
"""pytorch (PyTorchJob) | mpi (MPIJob v2beta1) | tensorflow (TFJob) | indexed (Job + headless Service) |
trainjob (Kubeflow Trainer v2 TrainJob)."""
Runtime = Literal["torch", "deepspeed", "mpi", "tensorflow"]
"""The training runtime of a TrainJob: torch (torchrun) | deepspeed | mpi (mpirun) | tensorflow (TF_CONFIG)."""
MPI_RUNTIMES: tuple[Runtime, ...] = ("deepspeed", "mpi")
"""The runtimes whose launcher pod starts the ranks with mpirun over sshd on the nodes."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_ENV_FROM_REFUSED = {
    "mpi": "mpirun hands the ranks only the variables it is told by name (-x NAME), and a Secret's keys are not "
    "known when the job is made: list each one in env as {secretKeyRef: {name, key}}",
    "trainjob": "a TrainJob has no envFrom (Kubeflow Trainer v2.3 takes env only, in trainer.env and its runtime "
    "patches): list each key in env as {secretKeyRef: {name, key}}",
}


class ElasticSpec(Spec):
    """Elastic training (torchrun with a c10d rendezvous): the job runs on between min and max nodes."""

    min_nodes: Count = Field(ge=1)
    """Fewest nodes the job keeps running on. Required."""
    max_nodes: Count = Field(ge=1)
    """Most nodes the job scales to. Required."""
    max_restarts: Count = Field(default=3, ge=0)
    """Restarts of the worker group torchrun allows. Default: 3."""

    @model_validator(mode="after")
    def _range(self) -> ElasticSpec:
        if self.min_nodes > self.max_nodes:
            raise at("minNodes", f"minNodes ({self.min_nodes}) is greater than maxNodes ({self.max_nodes})")
        return self


class JobSchedulerSpec(Spec):
    """Where the job queues; the scheduler type comes from the stack."""

    queue: DnsLabel | None = None
    """Queue name. Default: the stack's first queue, or Volcano's `default` queue."""
    priority_class: str | None = None
    """PriorityClass of the job's pods. Default: none."""


class TopologySpec(Spec):
    """How close together in the network the job's nodes must be."""

    mode: Literal["required", "preferred"] = "required"
    """required (the job waits until it fits in one domain) | preferred (one domain when possible).
    Default: required."""
    level: DnsLabel
    """The topology level whose one domain holds the job: block, subblock or host on GKE; layer-1, layer-2,
    layer-3 (layer-4 on p6) or host on EKS; the declared levels elsewhere. Required."""


class ResourcesSpec(Spec):
    """CPU and memory of each worker; GPUs come from gpusPerNode."""

    cpu: Quantity | None = None
    """CPU per worker, e.g. "32". Default: none (no request or limit)."""
    memory: Quantity | None = None
    """Memory per worker, e.g. 512Gi. Default: none (no request or limit)."""


class VolumeMountSpec(Spec):
    """A claim mounted into every worker."""

    claim: ObjectName
    """The PersistentVolumeClaim, declared in `storage.volumes` of the job's namespace. Required."""
    mount_path: str = Field(pattern=r"^/")
    """Where it is mounted, an absolute path. Required."""
    read_only: bool = False
    """Mount read-only. Default: false."""
    sub_path: str | None = None
    """Mount only this path inside the volume. Default: the whole volume."""


class FileMountSpec(Spec):
    """A Secret's or ConfigMap's keys as read-only files in every worker."""

    secret: ObjectName | None = None
    """A Secret of the job's namespace, each key a file. Required unless configMap is set."""
    config_map: ObjectName | None = None
    """A ConfigMap of the job's namespace, each key a file. Required unless secret is set."""
    mount_path: str = Field(pattern=r"^/")
    """Where it is mounted, an absolute path. Required."""
    sub_path: str | None = None
    """Mount only this key (a file) at mountPath. Default: every key, as files in mountPath."""

    @model_validator(mode="after")
    def _one_source(self) -> FileMountSpec:
        named = [k for k, v in (("secret", self.secret), ("configMap", self.config_map)) if v]
        if len(named) != 1:
            raise ValueError(
                "name what to mount, one of: {secret: NAME} or {configMap: NAME}"
                + (f" (got {' and '.join(named)})" if named else "")
            )
        return self


CHECKPOINT_ENV = "CHECKPOINT_DIR"
"""The environment variable that names a job's checkpoint folder to its training script."""
DEFAULT_CHECKPOINT_MOUNT = "/checkpoints"
DEFAULT_CHECKPOINT_SECONDS = 300
"""How long writing one checkpoint may take before render warns: at a checkpoint every 30 minutes, five minutes
of writing is a sixth of the run when the job waits for it (synchronous saves), which is where teams start
paying for a faster volume or moving to asynchronous checkpoints."""
_FOLDER = re.compile(r"^[A-Za-z0-9_.=-]+(/[A-Za-z0-9_.=-]+)*$")


class CheckpointSpec(Spec):
    """Where the job writes its checkpoints, how large one is, and how long writing one may take."""

    claim: ObjectName
    """The claim checkpoints go to, declared in `storage.volumes` of the job's namespace; it is mounted into every
    worker (at its mount in `volumes`, when listed there). Required."""
    mount_path: str | None = Field(default=None, pattern=r"^/")
    """Where the claim is mounted. Default: its mount in `volumes`, else /checkpoints."""
    folder: str | None = None
    """The folder inside the mount that CHECKPOINT_DIR names ("" for the mount itself). Default: the job's
    name."""
    size: Quantity | None = None
    """One checkpoint, every rank's files together, e.g. 1.1T (a 70B-parameter model with Adam state is about 16
    bytes a parameter). Default: none; render then states the volume's throughput without a time."""
    max_seconds: Count = Field(default=DEFAULT_CHECKPOINT_SECONDS, ge=1)
    """How long writing one checkpoint may take: render warns when the volume cannot write `size` from the job's
    nodes in that time. Default: 300."""

    @field_validator("folder")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value and (not _FOLDER.match(value) or ".." in value.split("/")):
            raise ValueError(f"'{value}' is not a folder inside the mount: write it relative, as runs/llama")
        return value


class ScratchSpec(Spec):
    """Node-local scratch space: an emptyDir on the node's disks (its local NVMe / SSD RAID0 where
    the pool has one), gone with the pod."""

    size: Quantity
    """How much each worker may write, e.g. 500Gi; requested as ephemeral storage. Required."""
    mount_path: str = Field(default="/scratch", pattern=r"^/")
    """Where it is mounted. Default: /scratch."""


class DeepSpeedSpec(Spec):
    """A DeepSpeed config, shipped as a ConfigMap and passed as --deepspeed_config."""

    config: dict[str, Any]
    """The ds_config.json contents. Required."""
    mount_path: str = Field(default="/etc/deepspeed", pattern=r"^/")
    """Directory the ConfigMap is mounted at. Default: /etc/deepspeed."""

    @property
    def config_path(self) -> str:
        """Where ds_config.json is inside the container."""
        return f"{self.mount_path.rstrip('/')}/ds_config.json"


class TrainingJobSpec(Spec):
    """A distributed training job: what to run, on how many nodes of which pool, and how."""

    name: JobName
    """Job name, a DNS-1035 label. Required."""
    namespace: DnsLabel = "training"
    """Namespace. Default: training."""
    launcher: Launcher | None = None
    """trainjob | pytorch | mpi | tensorflow | indexed (the v1 operators' launchers are the legacy path).
    Default: the stack's `defaultLauncher`, else trainjob where the stack runs Kubeflow Trainer (a job with
    `elastic`, `envFrom`, `restartPolicy` or `ttlSecondsAfterFinished`, which Trainer v2.3 lacks, stays pytorch),
    else pytorch. A stack deployed before
    release 0.3.0 keeps the kind each such job runs as."""
    runtime: Runtime | None = None
    """trainjob: the pool's training runtime it runs on, torch | deepspeed | mpi | tensorflow (each node one
    process, told its place by TF_CONFIG, for MultiWorkerMirroredStrategy: what a TFJob ran). Default: torch."""
    image: ImageRef = Field(min_length=1)
    """Container image. Required."""
    command: list[EnvValue] = Field(min_length=1)
    """The training program and its arguments, e.g. [train.py, --epochs=3]. torchrun / mpirun
    flags are added by the launcher. Required."""
    nodes: Count | None = Field(default=None, ge=1)
    """Nodes (one worker pod per node). Default: elastic.minNodes when elastic, else 1."""
    gpus_per_node: Count | None = Field(default=None, ge=1)
    """GPUs per worker. Default: the pool's GPUs per node."""
    node_pool: DnsLabel | None = None
    """The pool the job runs on. Default: the stack's only pool."""
    elastic: ElasticSpec | None = None
    """Elastic training, pytorch only. Default: none."""
    topology: TopologySpec | None = None
    """Network placement (scheduler.topology must be on). Default: a multi-node job on a pool with a
    topology prefers one domain of its finest level below the host."""
    scheduler: JobSchedulerSpec = Field(default_factory=JobSchedulerSpec)
    """Queue and priority. Default: the default queue, no priority class."""
    service_account: ObjectName | None = None
    """The ServiceAccount every pod of the job runs as, in the job's namespace: one `serviceAccounts` declares
    (with its cloud identity), or one already on the cluster. Default: the namespace's `default`."""
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    """CPU and memory per worker. Default: none."""
    shm_size: Quantity | None = None
    """Size of the /dev/shm tmpfs. Default: 8Gi per GPU, at most half the worker memory."""
    volumes: list[VolumeMountSpec] = Field(default_factory=list)
    """Claims to mount. Default: none."""
    files: list[FileMountSpec] = Field(default_factory=list)
    """Secrets and ConfigMaps mounted read-only, each key a file: [{secret: NAME, mountPath: /etc/x}]. Default:
    none."""
    checkpoint: CheckpointSpec | None = None
    """Where checkpoints go (a declared claim, mounted, named by CHECKPOINT_DIR), their size and the time one
    may take to write. Default: none."""
    scratch: ScratchSpec | None = None
    """Node-local scratch space for each worker. Default: none."""
    env: dict[str, EnvEntry] = Field(default_factory=dict)
    """Extra environment; overrides the fabric's and NCCL settings. A value is text, a key of a Secret or
    ConfigMap ({secretKeyRef: {name, key}}, {configMapKeyRef: {name, key}}) or a Pulumi secret, which the stack
    keeps in a Secret of its own. Default: none."""
    env_from: list[EnvFromSpec] = Field(default_factory=list)
    """Every key of a Secret or ConfigMap as environment: [{secretRef: NAME}, {configMapRef: NAME, prefix: P_}].
    Default: none."""
    image_pull_secrets: list[ObjectName] = Field(default_factory=list)
    """Secrets (kubernetes.io/dockerconfigjson) of the job's namespace that every pod pulls its image with.
    Default: none."""
    nccl: dict[str, EnvValue] = Field(default_factory=dict)
    """NCCL settings overriding the fabric's, as `debug: INFO` (NCCL_DEBUG) or `NCCL_BUFFSIZE: ...`.
    Default: none (NCCL_DEBUG=WARN plus the fabric's)."""
    deepspeed: DeepSpeedSpec | None = None
    """A DeepSpeed config. Default: none."""
    backoff_limit: Count = Field(default=3, ge=0)
    """Whole-job retries before the job is marked failed (a fault stops every rank; each launcher's object
    counts it in its controller's unit, e.g. x pods for a PyTorchJob). Default: 3."""
    max_restarts: Count | None = Field(default=None, ge=0)
    """torchrun launchers (pytorch, indexed, trainjob with runtime torch): in-place restarts of every rank before the
    pods fail, which recover from a transient fault without rescheduling. Default: 3 (elastic jobs:
    elastic.maxRestarts)."""
    ttl_seconds_after_finished: Count | None = Field(default=None, ge=0)
    """Delete the finished job's object this long after it ends. Default: kept. The next `pulumi up`
    recreates a job deleted this way, which runs it again: set it only for jobs deployed outside Pulumi."""
    restart_policy: Literal["OnFailure", "Never"] | None = None
    """Pod restart policy. Default: OnFailure for operator launchers, Never for indexed."""
    port: Count = Field(default=29400, ge=1024, le=65535)
    """Rendezvous port of the indexed launcher. Default: 29400."""

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str | EnvSource]) -> dict[str, str | EnvSource]:
        for key in value:
            if not _ENV_NAME.match(key):
                raise ValueError(f"'{key}' is not a valid environment variable name")
        return value

    @field_validator("nccl")
    @classmethod
    def _nccl_names(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", key):
                raise ValueError(f"'{key}' is not an NCCL setting such as debug, ibHca or NCCL_BUFFSIZE")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> TrainingJobSpec:
        if self.runtime is not None and self.launcher not in (None, "trainjob"):
            raise at("runtime", f"runtime picks a Trainer v2 runtime: set launcher: trainjob (not '{self.launcher}')")
        if self.max_restarts is not None and self.training_runtime not in (None, "torch"):
            raise at(
                "maxRestarts",
                f"restarts torchrun's ranks in place, and the {self.training_runtime} runtime runs no torchrun: "
                "drop it, or use runtime torch (a TrainJob's whole-job retries are backoffLimit)",
            )
        if self.max_restarts is not None and self.launcher not in (None, "pytorch", "indexed", "trainjob"):
            raise at(
                "maxRestarts",
                f"restarts torchrun's ranks in place: the pytorch and indexed launchers, or trainjob with runtime "
                f"torch, not '{self.launcher}'",
            )
        if self.env_from and self.launcher in ("mpi", "trainjob"):
            raise at("envFrom", _ENV_FROM_REFUSED[self.launcher])
        if self.elastic is not None:
            if self.launcher not in (None, "pytorch"):
                raise at("elastic", f"elastic training needs the pytorch launcher, not '{self.launcher}'")
            if self.max_restarts is not None:
                raise at("maxRestarts", "an elastic job restarts in place by elastic.maxRestarts: set it there")
            nodes = self.world_nodes
            if not self.elastic.min_nodes <= nodes <= self.elastic.max_nodes:
                raise at(
                    "nodes",
                    f"nodes ({nodes}) must lie between elastic.minNodes ({self.elastic.min_nodes}) "
                    f"and elastic.maxNodes ({self.elastic.max_nodes})",
                )
        self._checkpoint_mount()
        mounts = [v.mount_path for v in [*self.mounts, *self.file_mounts]]
        if self.deepspeed is not None:
            mounts.append(self.deepspeed.mount_path)
        if self.scratch is not None:
            mounts.append(self.scratch.mount_path)
        for path in mounts:
            if mounts.count(path) > 1:
                raise at("volumes", f"two volumes are mounted at {path}")
            if path.rstrip("/") == "/dev/shm":
                raise at("volumes", "/dev/shm is mounted by the job itself; size it with shmSize")
        return self

    def _checkpoint_mount(self) -> None:
        """The checkpoint claim, when `volumes` mounts it too, is mounted there writable, at one path."""
        checkpoint = self.checkpoint
        listed = self._listed_checkpoint_mount()
        if checkpoint is None or listed is None:
            return
        position, mount = listed
        if mount.read_only:
            raise at(
                "checkpoint",
                f"claim '{mount.claim}' is mounted readOnly in volumes[{position}]; checkpoints are written: "
                "mount it writable",
            )
        if checkpoint.mount_path is not None and checkpoint.mount_path != mount.mount_path:
            raise at(
                "checkpoint",
                f"claim '{mount.claim}' is mounted at {mount.mount_path} in volumes[{position}], not at "
                f"checkpoint.mountPath {checkpoint.mount_path}: state one of them",
            )

    def _listed_checkpoint_mount(self) -> tuple[int, VolumeMountSpec] | None:
        """The first mount in `volumes` of the checkpoint claim, with its position."""
        if self.checkpoint is None:
            return None
        return next(((i, m) for i, m in enumerate(self.volumes) if m.claim == self.checkpoint.claim), None)

    @property
    def file_mounts(self) -> list[FileMountSpec]:
        """The Secrets and ConfigMaps the job mounts (`files`)."""
        return list(self.files)

    @property
    def secret_env(self) -> dict[str, SecretEnv]:
        """The env values given as Pulumi secrets, which the stack keeps in a Secret of its own."""
        return {name: value for name, value in self.env.items() if isinstance(value, SecretEnv)}

    @property
    def checkpoint_mount(self) -> VolumeMountSpec | None:
        """Where the checkpoint claim is mounted: its mount in `volumes`, or one of its own."""
        if self.checkpoint is None:
            return None
        listed = self._listed_checkpoint_mount()
        if listed is not None:
            return listed[1]
        return VolumeMountSpec(
            claim=self.checkpoint.claim, mount_path=self.checkpoint.mount_path or DEFAULT_CHECKPOINT_MOUNT
        )

    @property
    def mounts(self) -> list[VolumeMountSpec]:
        """Every claim mount of the job: `volumes`, and the checkpoint claim's when `volumes` lacks it."""
        own = self.checkpoint_mount
        if own is None or self._listed_checkpoint_mount() is not None:
            return list(self.volumes)
        return [*self.volumes, own]

    @property
    def checkpoint_dir(self) -> str | None:
        """The folder CHECKPOINT_DIR names: the checkpoint folder inside its mount; None without `checkpoint`."""
        mount = self.checkpoint_mount
        if self.checkpoint is None or mount is None:
            return None
        folder = self.name if self.checkpoint.folder is None else self.checkpoint.folder
        base = mount.mount_path.rstrip("/") or "/"
        return f"{base}/{folder}" if folder else mount.mount_path

    @property
    def in_place_restarts(self) -> int:
        """torchrun's --max_restarts: elastic.maxRestarts, else maxRestarts (default 3)."""
        if self.elastic is not None:
            return self.elastic.max_restarts
        return 3 if self.max_restarts is None else self.max_restarts

    @property
    def training_runtime(self) -> Runtime | None:
        """The Trainer runtime of a trainjob (torch unless stated); None for other launchers."""
        if self.launcher != "trainjob" and (self.launcher is not None or self.runtime is None):
            return None
        return self.runtime or "torch"

    @property
    def world_nodes(self) -> int:
        """The nodes the job starts on."""
        if self.nodes is not None:
            return self.nodes
        return self.elastic.min_nodes if self.elastic is not None else 1

    @property
    def most_nodes(self) -> int:
        """The most nodes the job runs on: elastic.maxNodes when elastic, else its nodes."""
        return self.elastic.max_nodes if self.elastic is not None else self.world_nodes

    @property
    def nccl_env(self) -> dict[str, str]:
        """The `nccl` overrides as environment variables (`ibHca` -> NCCL_IB_HCA)."""
        return {nccl_env_name(key): value for key, value in self.nccl.items()}


def nccl_env_name(key: str) -> str:
    """The NCCL environment variable a `nccl:` key sets: debug -> NCCL_DEBUG, ibHca -> NCCL_IB_HCA."""
    if key.isupper() or "_" in key:
        upper = key.upper()
        return upper if upper.startswith("NCCL_") else f"NCCL_{upper}"
    return "NCCL_" + re.sub(r"(?<!^)(?=[A-Z])", "_", key).upper()
