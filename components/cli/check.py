"""`python -m components check`: the policy rules over a stack or rendered YAML, without the Pulumi engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from components.errors import ConfigError
from components.render import render
from components.rules import Finding, run
from components.rules.config import settings
from components.rules.rule import Subject
from components.rules.subjects import from_objects, from_pools
from components.validation import resolve_file


def subjects_of_stack(path: Path) -> tuple[list[Subject], dict[str, Any]]:
    """The rendered objects and pools of a stack file, and what the rules know of the stack."""
    rendered = render(resolve_file(path))
    known = {"gang_scheduler": rendered.stack.scheduler}
    return from_objects(rendered.objects) + from_pools(rendered.stack.pools.values()), known


def subjects_of_files(paths: list[Path]) -> tuple[list[Subject], dict[str, Any]]:
    """Every object in YAML files and folders (render output: helm/ and remote/ describe installs)."""
    objects: list[dict[str, Any]] = []
    installs: set[str] = set()
    for path in paths:
        if not path.exists():
            raise ConfigError(f"no such file or folder: {path}")
        files = sorted(path.rglob("*.y*ml")) if path.is_dir() else [path]
        for file in files:
            if file.parent.name in ("helm", "remote"):
                installs.add(file.stem)
                continue
            try:
                documents = [d for d in yaml.safe_load_all(file.read_text(encoding="utf-8")) if d]
            except yaml.YAMLError as exc:
                raise ConfigError(f"{file}: not YAML: {exc}") from None
            for document in documents:
                objects += document.get("items", []) if document.get("kind", "").endswith("List") else [document]
    kinds = {o.get("kind") for o in objects}
    gang = (
        "volcano"
        if "volcano" in installs or "Queue" in kinds
        else "kueue"
        if "kueue" in installs or "ClusterQueue" in kinds
        else "none"
    )
    return from_objects(objects), {"gang_scheduler": gang}


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


def check(
    stack: Path | None,
    paths: list[Path],
    *,
    policy_config: Path | None,
    production: bool | None,
    gang_scheduler: str | None,
    output: str,
) -> tuple[str, int]:
    """The report and the exit code (1 on a mandatory violation)."""
    config = json.loads(policy_config.read_text()) if policy_config else {}
    if stack is not None:
        subjects, known = subjects_of_stack(stack)
        if production is None:
            production = stack.name == "Pulumi.prod.yaml"
    else:
        subjects, known = subjects_of_files(paths)
    if gang_scheduler:
        known["gang_scheduler"] = gang_scheduler
    findings = run(subjects, settings(config, production=production, **known))
    report = json.dumps([f.as_dict() for f in findings], indent=2) if output == "json" else table(findings)
    return report, int(any(f.enforcement == "mandatory" for f in findings))
