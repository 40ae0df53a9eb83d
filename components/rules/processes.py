"""Whether a job's launcher starts the processes and nodes its pods have: no more ranks per pod than GPUs,
and the node count torchrun is told equal to the pods that run it.

Each rank takes the GPU of its local rank: a pod with more ranks than GPUs fails with `invalid device
ordinal`. torchrun waits at its rendezvous for every node it is told of: told more than run, it waits
until it times out; told fewer, the extra ones fail to join.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.rules.commands import command_line, flag, invocations
from components.rules.kinds import kind_of
from components.rules.pods import gpu_pods, templates
from components.rules.podtemplate import PodTemplate, count
from components.rules.rule import Advice, Rule, Settings
from components.rules.subject import Subject

NPROC_FLAGS = ("--nproc_per_node", "--nproc-per-node")
NNODES_FLAGS = ("--nnodes",)
TRAINER_NODES = "trainer.num_nodes="
TRAINER_DEVICES = "trainer.devices="
"""NeMo's and Lightning's Hydra overrides for the nodes and the GPUs per node the trainer expects."""
NP_FLAGS = ("-np", "-n", "--np", "-c")
"""mpirun's ways to give the number of ranks."""


def _overrides(words: list[str]) -> list[str]:
    """The words as Hydra overrides, without their `+` / `++` (add, force-add) prefixes."""
    return [w.lstrip("+") for w in words]


def _spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    return obj.get("spec") if isinstance(obj.get("spec"), dict) else {}


def _stated_nproc(obj: Mapping[str, Any]) -> tuple[int, str] | None:
    """Processes per node the workload's own fields state, with the field."""
    spec = _spec(obj)
    kind = kind_of(obj)
    if kind is None:
        return None
    if kind.kind == "PyTorchJob":
        elastic = spec.get("elasticPolicy") if isinstance(spec.get("elasticPolicy"), dict) else {}
        for value, field in (
            (spec.get("nprocPerNode"), "nprocPerNode"),
            (elastic.get("nProcPerNode"), "elasticPolicy.nProcPerNode"),
        ):
            if count(value, None):
                return count(value, 0), field
    if kind.kind == "TrainJob":
        trainer = spec.get("trainer") if isinstance(spec.get("trainer"), dict) else {}
        if count(trainer.get("numProcPerNode"), None):
            return count(trainer["numProcPerNode"], 0), "trainer.numProcPerNode"
    return None


def _nproc_flags(t: PodTemplate, container: dict[str, Any]) -> Iterator[tuple[int, str]]:
    words = command_line(container).words
    for run in invocations(words, "torchrun"):
        value = next(flag(run, *NPROC_FLAGS), None)  # torchrun's own, before the script's flags
        if count(value, None):
            yield count(value, 0), f"torchrun {NPROC_FLAGS[0]} {value}"
    devices = next((w.split("=", 1)[1] for w in _overrides(words) if w.startswith(TRAINER_DEVICES)), None)
    if count(devices, None):
        yield count(devices, 0), f"{TRAINER_DEVICES}{devices}"
    env = t.env(container)
    if count(env.get("PET_NPROC_PER_NODE"), None):
        yield count(env["PET_NPROC_PER_NODE"], 0), f"PET_NPROC_PER_NODE={env['PET_NPROC_PER_NODE']}"


def processes_per_node(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """A GPU pod runs no more ranks than it has GPUs (PyTorchJob nprocPerNode, torchrun --nproc_per_node,
    TrainJob numProcPerNode, MPIJob slotsPerWorker, NeMo trainer.devices); fewer leave GPUs idle (advice)."""
    data = subject.data
    stated = _stated_nproc(data)
    kind = kind_of(data)
    for t in templates(data, subjects):
        if not t.gpus:
            continue
        claims = [stated] if stated else []
        for c in t.spec.get("containers", []):
            claims += list(_nproc_flags(t, c))
        if kind is not None and kind.kind == "MPIJob" and t.role == "Worker":
            slots = count(_spec(data).get("slotsPerWorker"), None)
            if slots is not None:
                claims.append((slots, "slotsPerWorker"))
        for processes, where in dict.fromkeys(claims):
            if processes > t.gpus:
                yield (
                    f"{t.role} pods start {processes} ranks ({where}) on {t.gpus} GPUs; ranks past the last GPU fail "
                    "with invalid device ordinal"
                )
            elif processes < t.gpus:
                idle = t.gpus - processes
                yield Advice(f"{t.role} pods start {processes} ranks ({where}) and leave {idle} of {t.gpus} GPUs idle")


def _nnodes(value: str) -> tuple[int, int] | None:
    """torchrun's --nnodes: N, or MIN:MAX for an elastic job."""
    low, _, high = value.partition(":")
    first, last = count(low, None), count(high or low, None)
    return (first, last) if first is not None and last is not None else None


def node_count(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """The nodes a launcher is told are the pods that run it: torchrun's --nnodes (or PET_NNODES) and NeMo's
    trainer.num_nodes match the job's GPU pods, mpirun's -np fits the MPIJob's worker slots, and an Indexed Job
    runs every index at once."""
    data = subject.data
    kind = kind_of(data)
    if kind is None or not kind.job:
        return
    pods = gpu_pods(data, subjects)
    if pods < 1:
        return
    spec = _spec(data)
    if kind.kind == "Job" and kind.group == "batch" and spec.get("completionMode") == "Indexed":
        parallelism, completions = count(spec.get("parallelism"), 1), count(spec.get("completions"), None)
        if completions is not None and parallelism < completions and pods > 1:
            yield (
                f"parallelism {parallelism} is below completions {completions}: the later indexes start only after "
                "the first ones finish, so a distributed job never has all its ranks"
            )
    told: dict[str, tuple[int, int]] = {}
    slots_needed: list[tuple[int, str]] = []
    for t in templates(data, subjects):
        for c in t.spec.get("containers", []):
            words = command_line(c).words
            for run in invocations(words, "torchrun"):
                value = next(flag(run, *NNODES_FLAGS), None)
                if value is not None and (parsed := _nnodes(value)) is not None:
                    told[f"torchrun --nnodes {value}"] = parsed
            for word in _overrides(words):
                if t.gpus and word.startswith(TRAINER_NODES) and (parsed := _nnodes(word.split("=", 1)[1])):
                    told[word] = parsed
            env = t.env(c)
            if t.gpus and (parsed := _nnodes(env.get("PET_NNODES", ""))) is not None:
                told[f"PET_NNODES={env['PET_NNODES']}"] = parsed
            for run in invocations(words, "mpirun"):
                value = next(flag(run, *NP_FLAGS), None)  # mpirun's own, before the program's flags
                if count(value, None):
                    slots_needed.append((count(value, 0), f"mpirun -np {value}"))
    for where, (low, high) in told.items():
        if not low <= pods <= high:
            expected = str(low) if low == high else f"{low} to {high}"
            launcher = "the trainer" if where.startswith(TRAINER_NODES) else "torchrun"
            yield f"{where} tells {launcher} of {expected} nodes, but the job runs {pods} GPU pods"
    if kind.kind == "MPIJob" and slots_needed:
        workers = next((t for t in templates(data, subjects) if t.role == "Worker"), None)
        if workers is not None:
            slots = count(spec.get("slotsPerWorker"), 1) * workers.replicas
            for needed, where in slots_needed:
                if needed > slots:
                    per = f"{workers.replicas} workers x slotsPerWorker"
                    yield f"{where} starts {needed} ranks on {slots} slots ({per})"


RULES: tuple[Rule, ...] = (
    Rule(
        "processes-per-node",
        "critical",
        "mandatory",
        (processes_per_node.__doc__ or "").strip(),
        "start one rank per GPU: nprocPerNode / --nproc_per_node / numProcPerNode / slotsPerWorker equal to the "
        "pod's nvidia.com/gpu",
        ("*",),
        processes_per_node,
        gpu_only=True,
    ),
    Rule(
        "node-count",
        "high",
        "mandatory",
        (node_count.__doc__ or "").strip(),
        "let the operator tell torchrun the nodes (drop --nnodes, or set it to the job's pods); size mpirun -np to "
        "workers x slotsPerWorker; give an Indexed Job parallelism = completions",
        ("*",),
        node_count,
        gpu_only=True,
    ),
)
