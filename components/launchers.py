"""Which launcher a job runs on: the one it names, else the stack's default, else a TrainJob where Kubeflow
Trainer runs; what a deployed stack keeps; and what each Training Operator v1 launcher is now.

Since release 0.3.0 a job that names no launcher is a Trainer v2 TrainJob. Releases before made it a
PyTorchJob, so a stack they deployed keeps each such job's kind on `pulumi up` (see `Deployed`) until its
owner names a launcher or the stack's `defaultLauncher`: an upgrade never replaces a running job by itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from components.errors import Issue
from components.models.base import split_at
from components.models.job import Launcher, TrainingJobSpec
from components.models.stack import StackConfig
from components.wellknown import MPI_OPERATOR_INSTALL, TRAINER_INSTALL, TRAINING_OPERATOR_INSTALL

TRAINJOB_SINCE = "0.3.0"
"""The release from which a job that names no launcher is a TrainJob (a PyTorchJob before)."""
EARLIER_DEFAULT: Launcher = "pytorch"
"""What a job that named no launcher became before TRAINJOB_SINCE."""

KINDS: dict[str, Launcher] = {
    "PyTorchJob": "pytorch",
    "TFJob": "tensorflow",
    "MPIJob": "mpi",
    "Job": "indexed",
    "TrainJob": "trainjob",
}
"""The launcher of each workload kind a stack deploys (its `jobs` output names the kind)."""


_RETIRED = "Kueue ships its integration off, and Kubeflow is retiring the Training Operator"


@dataclass(frozen=True, slots=True)
class Legacy:
    """A Training Operator v1 launcher: what it makes, its Kueue integration, and its TrainJob equivalent."""

    kind: str
    operator: str
    framework: str
    """Its Kueue integration (`integrations.frameworks`)."""
    equivalent: str
    status: str
    """Why it is legacy."""

    @property
    def a_kind(self) -> str:
        """The kind with its article: a PyTorchJob, an MPIJob."""
        return f"{'an' if self.kind[0] in 'AEIMO' else 'a'} {self.kind}"


LEGACY: dict[str, Legacy] = {
    "pytorch": Legacy("PyTorchJob", "the Training Operator v1", "kubeflow.org/pytorchjob", "runtime: torch", _RETIRED),
    "tensorflow": Legacy(
        "TFJob",
        "the Training Operator v1",
        "kubeflow.org/tfjob",
        "runtime: tensorflow (a plain-ML runtime that hands every node TF_CONFIG)",
        _RETIRED,
    ),
    "mpi": Legacy(
        "MPIJob",
        "the MPI Operator",
        "kubeflow.org/mpijob",
        "runtime: mpi (or deepspeed)",
        "Trainer's MPI runtimes take its place, and new scheduler integrations target TrainJob",
    ),
}
"""The v1 launchers. Kueue v0.19 ships the PyTorchJob and TFJob integrations off (its chart's default
`integrations.frameworks`; kubernetes-sigs/kueue #12606, #12620 track their removal), Kubeflow's own distribution
dropped the Training Operator (kubeflow/manifests #3540), and every new scheduler integration targets TrainJob
(kubeflow/trainer ROADMAP.md at v2.3.0)."""

# What Trainer v2.3 has no answer for: such a job stays a PyTorchJob when it names no launcher.
_TRAINJOB_GAPS = {
    "elastic": "Trainer v2.3 has no elastic TrainJob (kubeflow/trainer #2903)",
    "env_from": "a TrainJob has no envFrom in Trainer v2.3 (its trainer takes env only)",
    "restart_policy": "a TrainJob restarts as a whole (its runtime's JobSet), with no restartPolicy of its pods",
    "ttl_seconds_after_finished": "a TrainJob has no TTL in Trainer v2.3",
}


@dataclass(frozen=True, slots=True)
class Deployed:
    """What the stack's last deployment made, read from its outputs: each job's workload kind and the add-ons."""

    kinds: Mapping[str, str] = field(default_factory=dict)
    """Workload kind by `namespace/name`."""
    addons: frozenset[str] = frozenset()
    """The add-ons it installed, by install name (`training-operator`, `mpi-operator`, ...)."""

    @classmethod
    def from_outputs(cls, outputs: Mapping[str, Any] | None) -> Deployed:
        """From a stack's outputs (`jobs`: {ns/name: {workload: Kind/ns/name}}, `addons`: [name]); empty for a
        stack never deployed, and whatever is malformed ignored."""
        outputs = outputs or {}
        jobs = outputs.get("jobs")
        kinds: dict[str, str] = {}
        if isinstance(jobs, Mapping):
            for key, value in jobs.items():
                workload = value.get("workload") if isinstance(value, Mapping) else None
                if isinstance(key, str) and isinstance(workload, str) and "/" in workload:
                    kinds[key] = workload.split("/", 1)[0]
        addons = outputs.get("addons")
        names = frozenset(a for a in addons if isinstance(a, str)) if isinstance(addons, list) else frozenset()
        return cls(kinds, names)

    def kept_launcher(self, namespace: str, name: str) -> Launcher | None:
        """The launcher a job deployed under the earlier default keeps: its v1 kind's, else None."""
        launcher = KINDS.get(self.kinds.get(f"{namespace}/{name}", ""))
        return launcher if launcher in LEGACY else None


@dataclass(frozen=True, slots=True)
class Choice:
    """The launcher a job runs on, and why when it did not name it."""

    launcher: Launcher
    why: str = ""
    kept: bool = False
    """Kept from the stack's last deployment."""
    gap: bool = False
    """A PyTorchJob because Trainer v2.3 cannot run what the job asks (`why` says what)."""


def choose(
    job: TrainingJobSpec, *, trainer: bool, default: Launcher | None = None, deployed: Deployed | None = None
) -> Choice:
    """The launcher of `job`: the one it names; a TrainJob when it names a runtime; the kind a deployed stack runs
    it as; the stack's `default`; a TrainJob where Trainer runs and it needs nothing Trainer lacks; a PyTorchJob."""
    if job.launcher is not None:
        return Choice(job.launcher)
    if job.runtime is not None:
        return Choice("trainjob", f"it names runtime {job.runtime}")
    if default is None and deployed is not None:
        kept = deployed.kept_launcher(job.namespace, job.name)
        if kept is not None:
            return Choice(kept, f"this stack runs it as {LEGACY[kept].a_kind} (deployed before {TRAINJOB_SINCE})", True)
    gap = next((why for name, why in _TRAINJOB_GAPS.items() if getattr(job, name)), None)
    if default is not None and default != "trainjob":
        return Choice(default, "the stack's defaultLauncher")
    if default != "trainjob" and not trainer:
        return Choice("pytorch", "the default where Kubeflow Trainer is not installed")
    if gap is not None:
        return Choice("pytorch", gap, gap=True)
    return Choice("trainjob", "the stack's defaultLauncher" if default else "the default where Trainer runs")


def settle(
    jobs: Iterable[TrainingJobSpec],
    *,
    trainer: bool,
    default: Launcher | None,
    deployed: Deployed | None,
    path: str | None = None,
) -> tuple[list[TrainingJobSpec], list[Choice], list[Issue]]:
    """Every job with its launcher stated, the choice made for each (in order), and what a chosen launcher
    cannot run of a job (at `jobs[i]`, or at `path` for a job planned alone)."""
    settled, choices, issues = [], [], []
    for index, job in enumerate(jobs):
        choice = choose(job, trainer=trainer, default=default, deployed=deployed)
        if job.launcher is not None:
            settled.append(job)
        else:
            chosen = job.model_copy(update={"launcher": choice.launcher})
            settled.append(chosen)
            try:
                chosen._consistent()
            except ValueError as exc:
                key, message = split_at(str(exc))
                issues.append(
                    Issue(
                        f"{path if path is not None else f'jobs[{index}]'}.{key or 'launcher'}".lstrip("."),
                        f"{message} (the job names no launcher, so it is a {choice.launcher} job: {choice.why}; "
                        "name its launcher)",
                    )
                )
        choices.append(choice)
    return settled, choices, issues


def settle_stack(
    config: StackConfig, deployed: Deployed | None = None
) -> tuple[StackConfig, list[Choice], list[Issue]]:
    """The stack with every default of its operators and launchers decided: Trainer on unless the stack runs no
    scheduler; each job's launcher (`choose`); each v1 operator on where a job uses it or the stack installed it
    before. Also the choice made for each job, and what a chosen launcher cannot run."""
    deployed = deployed or Deployed()
    trainer = config.trainer.enabled
    if trainer is None:
        trainer = config.scheduler.type != "none" or TRAINER_INSTALL in deployed.addons
    jobs, choices, issues = settle(config.jobs, trainer=trainer, default=config.default_launcher, deployed=deployed)
    used = {job.launcher for job in jobs}
    operators = config.training_operator
    training = operators.enabled
    if training is None:
        training = bool(used & {"pytorch", "tensorflow"}) or TRAINING_OPERATOR_INSTALL in deployed.addons
    mpi = operators.mpi
    if mpi is None:
        mpi = "mpi" in used or MPI_OPERATOR_INSTALL in deployed.addons
    settled = config.model_copy(
        update={
            "trainer": config.trainer.model_copy(update={"enabled": trainer}),
            "training_operator": operators.model_copy(update={"enabled": training, "mpi": mpi}),
            "jobs": jobs,
        }
    )
    return settled, choices, issues


def _legacy_message(job: TrainingJobSpec, choice: Choice) -> str | None:
    """What is said of a job on a v1 launcher, but its name: legacy, why it is one, its TrainJob equivalent."""
    legacy = LEGACY.get(job.launcher or "")
    if legacy is None:
        return None
    head = f"{legacy.a_kind} ({legacy.operator}, the legacy path"
    if choice.kept:
        return (
            f"{head}), kept because {choice.why}: name launcher: trainjob to move it to a TrainJob "
            f"({legacy.equivalent}; its {legacy.kind} is replaced, so the run resumes from its last checkpoint), "
            f"or launcher: {job.launcher} to keep it and silence this"
        )
    if choice.gap:
        return f"{head}), because {choice.why}"
    return f"{head}: {legacy.status}): the TrainJob equivalent is launcher: trainjob, {legacy.equivalent}"


def upgrade_line(jobs: Iterable[TrainingJobSpec], choices: Iterable[Choice], default: Launcher | None) -> str | None:
    """What `render` (which reads no deployed state) says of the jobs the 0.3.0 default makes TrainJobs: a stack an
    earlier release deployed keeps the kinds they run as on `pulumi up`."""
    if default is not None:
        return None
    named = [
        f"{job.namespace}/{job.name}"
        for job, choice in zip(jobs, choices, strict=True)
        if choice.why and not choice.kept and choice.launcher == "trainjob" and job.runtime is None
    ]
    if not named:
        return None
    which = (
        f"{named[0]} names no launcher, so it is" if len(named) == 1 else f"{_some(named)} name no launcher, so each is"
    )
    return (
        f"launchers: {which} a TrainJob (the default since release "
        f"{TRAINJOB_SINCE}; a {LEGACY[EARLIER_DEFAULT].kind} before). On a stack an earlier release deployed, "
        "`pulumi up` keeps each such job the kind it runs as (it reads the stack's last outputs) until you name its "
        "launcher or set gpu-training:defaultLauncher"
    )


NAMED = 3
"""How many jobs a line shared by many jobs names before it says how many more."""


def _some(names: list[str]) -> str:
    """Jobs named in a line: all of a few, else the first NAMED and how many more."""
    if len(names) <= NAMED:
        return ", ".join(names)
    return f"{', '.join(names[:NAMED])} and {len(names) - NAMED:,} more"


def warnings(jobs: Iterable[TrainingJobSpec], choices: Iterable[Choice]) -> list[str]:
    """What render and `pulumi up` say of the jobs on v1 launchers (the legacy path, why, the TrainJob equivalent):
    one line for the jobs that share a reason, naming a few of them, rather than thousands of lines alike."""
    named: dict[str, list[TrainingJobSpec]] = {}
    for job, choice in zip(jobs, choices, strict=True):
        message = _legacy_message(job, choice)
        if message is not None:
            named.setdefault(message, []).append(job)
    lines = []
    for message, alike in named.items():
        if len(alike) == 1:
            lines.append(f"job {alike[0].namespace}/{alike[0].name}: {message}")
            continue
        lines.append(f"{len(alike):,} jobs ({_some([f'{j.namespace}/{j.name}' for j in alike])}), each {message}")
    return lines


def alone_line(job: TrainingJobSpec) -> str | None:
    """What a TrainingJob component planned alone (in a workloads program, which has no stack outputs to read)
    says when its job names no launcher and became a TrainJob: an earlier release made it a PyTorchJob."""
    if job.launcher != "trainjob":
        return None
    return (
        f"job {job.namespace}/{job.name} names no launcher, so it is a TrainJob on its pool's runtime (since release "
        f"{TRAINJOB_SINCE}; {LEGACY[EARLIER_DEFAULT].a_kind} before): if this program ran it as "
        f"{LEGACY[EARLIER_DEFAULT].a_kind}, the preview replaces it; name launcher: {EARLIER_DEFAULT} to keep it"
    )
