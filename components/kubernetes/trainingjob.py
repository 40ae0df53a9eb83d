"""TrainingJob: a distributed training job on a GPU pool, as a Pulumi component."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
from pydantic import ValidationError

from components import launchers
from components.config import parse_job, validation_issues
from components.errors import ConfigError, Issue
from components.kubernetes.objects import as_pulumi_error, kube_object
from components.manifests import envsecret, trainingjob
from components.manifests.meta import key
from components.manifests.plan import JobPlan, SchedulerKind, plan
from components.models.envsource import SECRET_WAYS, Sealed
from components.models.job import TrainingJobSpec
from components.models.storage import VolumeSpec
from components.podfit import pods_fit
from components.pool import Pool

TOKEN = "gpu-training:index:TrainingJob"


class TrainingJob(pulumi.ComponentResource):
    """A PyTorchJob, MPIJob, TFJob, TrainJob or Indexed Job with everything it needs, placed on a GPU pool."""

    world_size: pulumi.Output[int]
    """Processes across the job: nodes x GPUs per node."""
    objects: pulumi.Output[list[str]]
    """The objects created, as Kind/namespace/name."""
    workload: pulumi.Output[str]
    """The workload object (PyTorchJob, MPIJob, TFJob, TrainJob or Job), as Kind/namespace/name."""

    def __init__(
        self,
        name: str,
        spec: TrainingJobSpec | Mapping[str, Any] | None = None,
        *,
        pool: Pool | Mapping[str, Any] | pulumi.Output[Any],
        scheduler: SchedulerKind | pulumi.Output[Any] = "none",
        queue: str | pulumi.Output[Any] | None = None,
        storage: Sequence[VolumeSpec | Mapping[str, Any]] | pulumi.Output[Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        **fields: Any,
    ) -> None:
        """Place a job on `pool`: pass a TrainingJobSpec, a config mapping, or its fields as keywords.

        `scheduler` is the cluster's gang scheduler (volcano | kueue | none); `queue` the queue
        when the spec names none. Config mistakes raise a clean error naming the field.

        `storage` is the platform's declared volumes (its `storage` output, or `storage.volumes` of a stack
        file): a claim of the job backed by a bucket gets what its pods need to mount it (GKE's gcsfuse sidecar
        for a gcs volume). Without it, every claim is mounted as a plain claim.

        `pool`, `scheduler`, `queue` and `storage` may be outputs of a StackReference to the platform stack
        (its `pools`, `scheduler` and `storage` exports). Those are known at preview, and the job's objects
        are created once they resolve.
        """
        super().__init__(TOKEN, name, {}, opts)
        self._name = name
        env = _env_output(spec, fields)
        if env is not None:
            # Another language's program sends an env holding a secret as one secret Output: the job is read once
            # it resolves, its text values sealed. Its outputs hold no value of env, so they are not secret.
            def build(args: list[Any]) -> tuple[int, list[str], str]:
                job = _spec(name, spec, {**fields, "env": _seal_all(args[0])})
                return self._build(job, *args[1:])

            built = pulumi.Output.all(env, pool, scheduler, queue, storage).apply(build)
            self.world_size = pulumi.Output.unsecret(built.apply(lambda b: b[0]))
            self.objects = pulumi.Output.unsecret(built.apply(lambda b: b[1]))
            self.workload = pulumi.Output.unsecret(built.apply(lambda b: b[2]))
        elif any(isinstance(v, pulumi.Output) for v in (pool, scheduler, queue, storage)):
            job = _spec(name, spec, fields)
            built = pulumi.Output.all(pool, scheduler, queue, storage).apply(lambda args: self._build(job, *args))
            self.world_size = built.apply(lambda b: b[0])
            self.objects = built.apply(lambda b: b[1])
            self.workload = built.apply(lambda b: b[2])
        else:
            job = _spec(name, spec, fields)
            world_size, objects, workload = self._build(job, pool, scheduler, queue, storage)  # type: ignore[arg-type]
            self.world_size = pulumi.Output.from_input(world_size)
            self.objects = pulumi.Output.from_input(objects)
            self.workload = pulumi.Output.from_input(workload)
        self.register_outputs({"worldSize": self.world_size, "objects": self.objects, "workload": self.workload})

    def _build(
        self,
        spec: TrainingJobSpec,
        pool: Pool | Mapping[str, Any],
        scheduler: SchedulerKind,
        queue: str | None,
        storage: Sequence[VolumeSpec | Mapping[str, Any]] | None = None,
    ) -> tuple[int, list[str], str]:
        """Plan the job on its pool and create its objects; the workload waits for the rest."""
        try:
            volumes = _volumes(storage)
            self.plan: JobPlan = plan(spec, _pool(pool), scheduler or "none", queue, volumes=volumes)
        except ConfigError as exc:
            raise as_pulumi_error(exc) from None
        # A stack's jobs come with their launcher settled (its program says what it chose); a job planned alone
        # says it here, as nothing else will.
        line = launchers.alone_line(self.plan.spec) if spec.launcher is None else None
        if line:
            pulumi.log.warn(line, resource=self)
        manifests = trainingjob.objects(self.plan)
        unfit = pods_fit(self.plan.pool, manifests, "pool", self.plan)
        if unfit:
            raise as_pulumi_error(ConfigError(unfit))
        self.manifests: list[dict[str, Any]] = manifests
        # Children wait for what the component waits for (namespace, claims, operators) through their parent
        # (components/kubernetes/dependencies.py says how), so they name none of it again.
        supporting: list[pulumi.Resource] = []
        secret = env_secret(self.plan)
        if secret is not None:
            supporting.append(kube_object(f"{self._name}-env-secret", secret, pulumi.ResourceOptions(parent=self)))
        for obj in manifests[:-1]:
            name = f"{self._name}-{obj['kind'].lower()}"
            supporting.append(kube_object(name, obj, pulumi.ResourceOptions(parent=self)))
        workload = manifests[-1]
        self.resource = kube_object(
            f"{self._name}-{workload['kind'].lower()}",
            workload,
            pulumi.ResourceOptions(parent=self, depends_on=supporting),
        )
        made = [secret, *manifests] if secret is not None else manifests
        return self.plan.world_size, [key(o) for o in made], key(workload)


def _spec(name: str, spec: TrainingJobSpec | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> TrainingJobSpec:
    try:
        if isinstance(spec, TrainingJobSpec):
            return parse_job(_sealed({**spec.model_dump(by_alias=True), **fields})) if fields else spec
        return parse_job(_sealed({"name": name, **(spec or {}), **fields}))
    except ConfigError as exc:
        raise as_pulumi_error(exc) from None


def _sealed(data: dict[str, Any]) -> dict[str, Any]:
    """The job's config with each Output among its env values (a secret, or any value known only at deploy) sealed:
    it becomes a Pulumi secret in the job's own Secret."""
    env = data.get("env")
    if isinstance(env, Mapping) and any(isinstance(v, pulumi.Output) for v in env.values()):
        data["env"] = {k: Sealed(v) if isinstance(v, pulumi.Output) else v for k, v in env.items()}
    return data


def _env_output(spec: TrainingJobSpec | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> pulumi.Output | None:
    """The job's env when it is given as one Output (as the plugin receives an env holding a secret); else None."""
    env = fields.get("env", spec.get("env") if isinstance(spec, Mapping) else None)
    return env if isinstance(env, pulumi.Output) else None


def _seal_all(env: Any) -> Any:
    """An env that came as one Output, each text value sealed: which of them was the secret is not known, so each
    is kept in the job's Secret. References to Secrets and ConfigMaps stay as they are."""
    if not isinstance(env, Mapping):
        return env
    return {k: v if isinstance(v, Mapping) else Sealed(v) for k, v in env.items()}


def env_secret(job: JobPlan) -> dict[str, Any] | None:
    """The job's Secret of Pulumi secrets, its values secret Outputs (so state holds only their ciphertext); None
    when the job has none."""
    values = job.spec.secret_env
    if not values:
        return None
    unknown = [name for name, value in values.items() if value.value is None]
    if unknown:
        raise as_pulumi_error(
            ConfigError(
                [
                    Issue(f"env.{n}", "is a Pulumi secret whose value this program was not given: " + SECRET_WAYS)
                    for n in unknown
                ]
            )
        )
    data = {name: pulumi.Output.secret(value.value).apply(_encode) for name, value in values.items()}
    return envsecret.env_secret(job, data)


def _encode(value: Any) -> str:
    return envsecret.encode(str(value))


def _volumes(storage: Sequence[VolumeSpec | Mapping[str, Any]] | None) -> list[VolumeSpec]:
    """The declared volumes, validated as a stack's `storage.volumes` are."""
    volumes: list[VolumeSpec] = []
    for index, volume in enumerate(storage or ()):
        if isinstance(volume, VolumeSpec):
            volumes.append(volume)
            continue
        try:
            volumes.append(VolumeSpec.model_validate(dict(volume)))
        except ValidationError as exc:
            raise ConfigError(validation_issues(exc, VolumeSpec, prefix=f"storage[{index}]")) from None
    return volumes


def _pool(pool: Pool | Mapping[str, Any]) -> Pool:
    if isinstance(pool, Pool):
        return pool
    try:
        return Pool.model_validate(dict(pool))
    except ValidationError as exc:
        raise ConfigError(validation_issues(exc, Pool, prefix="pool")) from None
