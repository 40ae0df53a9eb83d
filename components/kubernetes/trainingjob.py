"""TrainingJob: a distributed training job on a GPU pool, as a Pulumi component."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pydantic import ValidationError

from components.config import parse_job, validation_issues
from components.errors import ConfigError
from components.kubernetes.dependencies import combine, inherited
from components.kubernetes.objects import as_pulumi_error, kube_object
from components.manifests import trainingjob
from components.manifests.meta import key
from components.manifests.plan import JobPlan, SchedulerKind, plan
from components.models.job import TrainingJobSpec
from components.pool import Pool
from components.validation import pods_fit

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
        opts: pulumi.ResourceOptions | None = None,
        **fields: Any,
    ) -> None:
        """Place a job on `pool`: pass a TrainingJobSpec, a config mapping, or its fields as keywords.

        `scheduler` is the cluster's gang scheduler (volcano | kueue | none); `queue` the queue
        when the spec names none. Config mistakes raise a clean error naming the field.

        `pool`, `scheduler` and `queue` may be outputs of a StackReference to the platform stack
        (its `pools` and `scheduler` exports). Those are known at preview, and the job's objects
        are created once they resolve.
        """
        super().__init__(TOKEN, name, {}, opts)
        self._name = name
        self._upstream = inherited(opts)
        job = _spec(name, spec, fields)
        if any(isinstance(v, pulumi.Output) for v in (pool, scheduler, queue)):
            built = pulumi.Output.all(pool, scheduler, queue).apply(lambda args: self._build(job, *args))
            self.world_size = built.apply(lambda b: b[0])
            self.objects = built.apply(lambda b: b[1])
            self.workload = built.apply(lambda b: b[2])
        else:
            world_size, objects, workload = self._build(job, pool, scheduler, queue)  # type: ignore[arg-type]
            self.world_size = pulumi.Output.from_input(world_size)
            self.objects = pulumi.Output.from_input(objects)
            self.workload = pulumi.Output.from_input(workload)
        self.register_outputs({"worldSize": self.world_size, "objects": self.objects, "workload": self.workload})

    def _build(
        self, spec: TrainingJobSpec, pool: Pool | Mapping[str, Any], scheduler: SchedulerKind, queue: str | None
    ) -> tuple[int, list[str], str]:
        """Plan the job on its pool and create its objects; the workload waits for the rest."""
        try:
            self.plan: JobPlan = plan(spec, _pool(pool), scheduler or "none", queue)
        except ConfigError as exc:
            raise as_pulumi_error(exc) from None
        manifests = trainingjob.objects(self.plan)
        unfit = pods_fit(self.plan.pool, manifests, "pool", self.plan)
        if unfit:
            raise as_pulumi_error(ConfigError(unfit))
        self.manifests: list[dict[str, Any]] = manifests
        # Children wait for what the component waits for (namespace, claims, operators): a
        # component's depends_on does not hold back resources created inside it.
        supporting: list[pulumi.Resource] = []
        for obj in manifests[:-1]:
            child = pulumi.ResourceOptions(parent=self, depends_on=combine(self._upstream))
            supporting.append(kube_object(f"{self._name}-{obj['kind'].lower()}", obj, child))
        workload = manifests[-1]
        self.resource = kube_object(
            f"{self._name}-{workload['kind'].lower()}",
            workload,
            pulumi.ResourceOptions(parent=self, depends_on=combine(self._upstream, supporting)),
        )
        return self.plan.world_size, [key(o) for o in manifests], key(workload)


def _spec(name: str, spec: TrainingJobSpec | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> TrainingJobSpec:
    try:
        if isinstance(spec, TrainingJobSpec):
            return parse_job({**spec.to_config(), **fields}) if fields else spec
        return parse_job({"name": name, **(spec or {}), **fields})
    except ConfigError as exc:
        raise as_pulumi_error(exc) from None


def _pool(pool: Pool | Mapping[str, Any]) -> Pool:
    if isinstance(pool, Pool):
        return pool
    try:
        return Pool.model_validate(dict(pool))
    except ValidationError as exc:
        raise ConfigError(validation_issues(exc, Pool, prefix="pool")) from None
