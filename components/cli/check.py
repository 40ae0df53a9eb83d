"""`python -m components check`: the policy rules over a stack or manifest files, without the Pulumi engine.

Every input yields findings or a per-file error naming the file: a file that is not YAML, a document that is
an unsubstituted template, or an object a rule cannot read never hides the rest of a folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components import repair, yamlio, yamlstrict
from components.config import read_stack_file
from components.errors import ConfigError
from components.fleetobjects import RUNTIME_KINDS
from components.fleetrender import MANAGER, render_fleet
from components.fleetstack import Fleet, is_fleet, resolve_fleet_raw
from components.manifests import multikueue
from components.pool import Pool
from components.render import Rendered, render
from components.resolution import resolve_raw
from components.rules import Finding, run
from components.rules.config import settings
from components.rules.documents import load
from components.rules.kinds import kind_of
from components.rules.pods import templates
from components.rules.rule import CLUSTER_OF_PROVIDER
from components.rules.subject import Subject
from components.rules.subjects import from_objects, from_pools, object_key

INSTALL_FOLDERS = ("helm", "remote")
"""Folders of render output that describe installs (Helm releases, remote manifests), not objects."""


@dataclass(slots=True)
class Input:
    """What was read: the subjects, what is known of the cluster, the per-file errors and skipped documents."""

    subjects: list[Subject] = field(default_factory=list)
    known: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    files: int = 0


def subjects_of_stack(path: Path) -> list[Input]:
    """The rendered objects and pools of a stack file, and what the rules know of the stack; of a fleet's, those of
    each of its clusters (the manager, then each worker), each reviewed apart."""
    raw, lines = read_stack_file(path)
    if is_fleet(raw):
        return _subjects_of_fleet(resolve_fleet_raw(raw, source=str(path), lines=lines, base_dir=path.parent), path)
    return [_subjects(render(resolve_raw(raw, source=str(path), lines=lines, base_dir=path.parent)), path)]


def _subjects_of_fleet(fleet: Fleet, path: Path) -> list[Input]:
    """What a fleet makes on each cluster, each reviewed with what is known of that cluster. A job's pods run on its
    workers, so each TrainJob is reviewed there, beside the runtimes it is built from, rather than on the manager,
    which holds it and copies of the runtimes only to admit it."""
    rendered = render_fleet(fleet)
    found = []
    for part in rendered.parts:
        stack = rendered.stack_of(part)
        known = {"gang_scheduler": "kueue", "cluster": CLUSTER_OF_PROVIDER[stack.config.cluster.provider]}
        if part.name == MANAGER:
            objects = [o for o in part.objects if o["kind"] not in ("TrainJob", *RUNTIME_KINDS)]
            pools: list[Pool] = []
        else:
            worker = fleet.worker(part.name)
            objects = list(part.objects)
            if not worker.inline:  # its own stack makes its runtimes
                objects += worker.of_kind("ClusterTrainingRuntime").values()
            objects += [multikueue.dispatched(j.objects[-1]) for j in fleet.jobs if worker.name in j.workers]
            pools = list(stack.pools.values())
        subjects = from_objects(objects, source=f"{path} ({part.name})")
        subjects += from_pools(pools, repair.by_pool(stack.config, pools))
        found.append(Input(subjects, known, files=1 if part.name == MANAGER else 0))
    return found


def _subjects(rendered: Rendered, path: Path) -> Input:
    """The objects and pools of a rendered stack, and what the rules know of it."""
    known = {
        "gang_scheduler": rendered.stack.scheduler,
        "cluster": CLUSTER_OF_PROVIDER[rendered.stack.config.cluster.provider],
    }
    subjects = from_objects(rendered.objects, source=str(path)) + from_pools(
        rendered.stack.pools.values(), repair.by_pool(rendered.stack.config, rendered.stack.pools.values())
    )
    return Input(subjects, known, files=1)


def is_stack_file(path: Path) -> bool:
    """Whether a file is a Pulumi stack file (a mapping with `config:`, and no Kubernetes `kind`), which check
    reads as a stack rather than as manifests."""
    if not path.is_file() or path.suffix not in (".yaml", ".yml"):
        return False
    try:
        node = yamlio.compose(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return path.name.startswith("Pulumi.") and path.name != "Pulumi.yaml"
    keys = {k.value for k, _ in node.value} if isinstance(node, yaml.MappingNode) else set()
    return "config" in keys and not keys & {"kind", "apiVersion"}


def _files(path: Path) -> list[Path]:
    if not path.exists():
        raise ConfigError(f"no such file or folder: {path}")
    return (
        sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()) if path.is_dir() else [path]
    )


def subjects_of_files(paths: list[Path]) -> Input:
    """Every object in YAML files and folders (render output: helm/ and remote/ describe installs)."""
    found = Input()
    installs: set[str] = set()
    for file in (f for path in paths for f in _files(path)):
        if file.parent.name in INSTALL_FOLDERS:
            installs.add(file.stem)
            continue
        found.files += 1
        try:
            text = yamlstrict.decode(file.read_bytes())
        except OSError as exc:
            found.errors.append(f"{file}: cannot be read ({exc})")
            continue
        if isinstance(text, yamlstrict.NotText):
            found.errors.append(f"{file}:{text.line}: the file {text}")
            continue
        loaded = load(text)
        if loaded.error:
            found.errors.append(f"{file}: {loaded.error}")
        found.skipped += [f"{file}: {s}" for s in loaded.skipped]
        for document in loaded.documents:
            if document.variables:
                found.errors.append(
                    f"{file}: document {document.number} ({object_key(document.obj)}) is an unsubstituted template "
                    f"({', '.join(document.variables[:3])}): substitute its variables (envsubst, helm template) "
                    "and check the result"
                )
                continue
            found.subjects += from_objects([document.obj], source=str(file), duplicates=[document.duplicates])
    kinds = {s.kind for s in found.subjects}
    found.known["gang_scheduler"] = (
        "volcano"
        if "volcano" in installs or "Queue" in kinds
        else "kueue"
        if "kueue" in installs or "ClusterQueue" in kinds
        else "none"
    )
    return found


def coverage(subjects: list[Subject]) -> str:
    """What was read: objects, workloads and those with GPUs, and the kinds read generically."""
    objects = [s for s in subjects if s.kind not in ("NodePool", "FileSystem") or "apiVersion" in s.data]
    read = [(s, found) for s in objects if (found := templates(s.data, subjects))]
    workloads = [s for s, _ in read]
    gpus = [s for s, found in read if any(t.gpus for t in found)]
    generic = sorted(s.key for s in workloads if kind_of(s.data) is None)
    line = f"read {len(objects)} objects: {len(workloads)} workloads, {len(gpus)} with GPUs"
    return line + (f"; read generically (no shape known for their kind): {', '.join(generic)}" if generic else "")


def table(findings: list[Finding]) -> str:
    """Findings as a readable table, mandatory first."""
    if not findings:
        return "no findings"
    ordered = sorted(findings, key=lambda f: (f.enforcement != "mandatory", f.rule, f.subject))
    rows = [("LEVEL", "RULE", "OBJECT", "MESSAGE", "FIX")]
    rows += [(f.enforcement, f.rule, f.subject, f.message, f.fix) for f in ordered]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [
        "  ".join(r[i].ljust(widths[i]) for i in range(3)) + f"  {r[3]}\n" + " " * (sum(widths) + 6) + f"fix: {r[4]}"
        for r in rows[1:]
    ]
    header = "  ".join(rows[0][i].ljust(widths[i]) for i in range(3)) + "  MESSAGE"
    mandatory = sum(f.enforcement == "mandatory" for f in findings)
    return "\n".join([header, *lines, f"{len(findings)} findings, {mandatory} mandatory"])


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of a check: findings, per-file errors, what was read, and the exit code."""

    findings: list[Finding]
    errors: list[str]
    skipped: list[str]
    coverage: str

    @property
    def code(self) -> int:
        """2 when a file could not be read, else 1 on a mandatory finding, else 0."""
        if self.errors:
            return 2
        return int(any(f.enforcement == "mandatory" for f in self.findings))


def review(
    stack: Path | None,
    paths: list[Path],
    *,
    policy_config: dict[str, Any] | None = None,
    production: bool | None = None,
    gang_scheduler: str | None = None,
    cluster: str | None = None,
) -> Report:
    """Read a stack or files and run every rule over what was read."""
    if stack is not None:
        groups = subjects_of_stack(stack)
        if production is None:
            production = stack.name == "Pulumi.prod.yaml"
    else:
        groups = [subjects_of_files(paths)]
    errors: list[str] = []
    findings: list[Finding] = []
    for found in groups:
        if gang_scheduler:
            found.known["gang_scheduler"] = gang_scheduler
        if cluster:
            found.known["cluster"] = cluster
        errors += found.errors
        findings += run(found.subjects, settings(policy_config, production=production, **found.known), errors)
    everything = [s for found in groups for s in found.subjects]
    return Report(findings, errors, [s for found in groups for s in found.skipped], coverage(everything))


def check(
    stack: Path | None,
    paths: list[Path],
    *,
    policy_config: Path | None,
    production: bool | None,
    gang_scheduler: str | None,
    output: str,
    cluster: str | None = None,
) -> tuple[str, str, int]:
    """The report, the errors (for stderr) and the exit code (1 on a mandatory violation, 2 on a file that could
    not be read)."""
    config = json.loads(policy_config.read_text()) if policy_config else {}
    result = review(
        stack, paths, policy_config=config, production=production, gang_scheduler=gang_scheduler, cluster=cluster
    )
    if output == "json":
        report = json.dumps([f.as_dict() for f in result.findings], indent=2)
    elif result.errors and not result.findings:  # "no findings" beside a file that could not be read is no all clear
        report = f"{result.coverage}; {len(result.errors)} not checked (the errors above): no all clear"
    else:
        report = f"{table(result.findings)}\n{result.coverage}"
    errors = "\n".join(f"error: {e}" for e in result.errors)
    return report, errors, result.code
