"""A job's own checks: the pool, operator, queue, volumes and checkpoint claim it names exist and suit it."""

from __future__ import annotations

from components.errors import Issue, did_you_mean
from components.models import StackConfig, TrainingJobSpec
from components.stack import pool_name

_OPERATOR = {
    "pytorch": ("trainingOperator.enabled", "the Training Operator"),
    "tensorflow": ("trainingOperator.enabled", "the Training Operator"),
    "mpi": ("trainingOperator.mpi", "the MPI Operator"),
    "trainjob": ("trainer.enabled", "Kubeflow Trainer v2"),
}
"""The setting that installs each operator-run launcher's operator, and the operator's name."""


def issues(config: StackConfig, job: TrainingJobSpec, path: str) -> list[Issue]:
    """What stops a job other than its fit on its pool: the pool, operator, queue and claims it names."""
    issues: list[Issue] = []
    declared = list(dict.fromkeys(p.name for p in config.node_pools))
    name = pool_name(config, job)
    if name is None:
        issues.append(
            Issue(
                f"{path}.nodePool",
                f"is required when the stack has {len(config.node_pools)} pools; "
                f"choose one of: {', '.join(declared) or 'none declared'}",
                after=("nodePools[*].name",),  # two pools of one name are one mistake, stated there
            )
        )
    elif name not in declared:
        issues.append(
            Issue(
                f"{path}.nodePool",
                f"pool '{name}' is not declared in nodePools; {did_you_mean(name, declared)}declared: "
                f"{', '.join(declared) or 'none'}",
            )
        )

    operator = _OPERATOR.get(job.launcher)
    if operator is not None:
        key, what = operator
        enabled = {
            "trainingOperator.enabled": config.training_operator.enabled,
            "trainingOperator.mpi": config.training_operator.mpi,
            "trainer.enabled": config.trainer.enabled,
        }[key]
        if not enabled:
            issues.append(
                Issue(
                    f"{path}.launcher",
                    f"the {job.launcher} launcher needs {what}, which is disabled: set {key}: true "
                    "or use the indexed launcher",
                )
            )

    scheduler = config.scheduler
    queues = [q.name for q in scheduler.queues]
    if job.scheduler.queue and scheduler.type == "none":
        issues.append(Issue(f"{path}.scheduler.queue", "the stack has no gang scheduler (scheduler.type: none)"))
    elif job.scheduler.queue and job.scheduler.queue not in queues:
        issues.append(
            Issue(
                f"{path}.scheduler.queue",
                f"queue '{job.scheduler.queue}' is not declared in scheduler.queues "
                f"(declared: {', '.join(queues) or 'none'})",
            )
        )
    elif scheduler.type == "kueue" and not queues:
        issues.append(Issue("scheduler.queues", "Kueue admits jobs through queues: declare at least one"))

    claims = {(v.namespace, v.name): v for v in config.storage.volumes}
    for position, mount in enumerate(job.volumes):
        volume = claims.get((job.namespace, mount.claim))
        if volume is not None and volume.access_mode == "ReadOnlyMany" and not mount.read_only:
            issues.append(
                Issue(
                    f"{path}.volumes[{position}].readOnly",
                    f"claim '{mount.claim}' is ReadOnlyMany: mount it with readOnly: true",
                )
            )
        if volume is None:
            issues.append(
                Issue(
                    f"{path}.volumes[{position}].claim",
                    f"claim '{mount.claim}' is not declared in storage.volumes of namespace '{job.namespace}'",
                )
            )
    issues += _checkpoint_issues(config, job, path)
    return issues


def _checkpoint_issues(config: StackConfig, job: TrainingJobSpec, path: str) -> list[Issue]:
    """The checkpoint claim is declared, and a volume checkpoints can be written to and rotated on."""
    if job.checkpoint is None:
        return []
    where = f"{path}.checkpoint.claim"
    claim = job.checkpoint.claim
    volumes = config.storage.volumes
    index = next((i for i, v in enumerate(volumes) if (v.namespace, v.name) == (job.namespace, claim)), None)
    if index is None:
        listed = any(m.claim == claim for m in job.volumes)  # reported at volumes[...] already
        message = f"claim '{claim}' is not declared in storage.volumes of namespace '{job.namespace}'"
        return [] if listed else [Issue(where, message)]
    volume = volumes[index]
    if volume.access_mode == "ReadOnlyMany":
        return [Issue(where, f"claim '{claim}' is ReadOnlyMany (storage.volumes[{index}]); checkpoints are written")]
    if volume.access_mode == "ReadWriteOnce" and job.most_nodes > 1:
        # The checkpoint-rwx rule's verdict, given at the config line rather than by `check` afterwards.
        return [
            Issue(
                where,
                f"claim '{claim}' is ReadWriteOnce (storage.volumes[{index}].accessMode), mounted on one node at a "
                f"time, and each of the job's {job.most_nodes} nodes writes checkpoints: make it ReadWriteMany",
            )
        ]
    if volume.object_use == "data" and volume.mount_options is None:
        return [
            Issue(
                where,
                f"claim '{claim}' is a data volume (storage.volumes[{index}] use: data): its mount keeps metadata "
                "for its life and cannot delete or overwrite files, as checkpoint rotation needs; set use: "
                "checkpoints there, or name another claim",
            )
        ]
    return []
