"""What `simulate` tells people (a table) and machines (JSON) about each job of a stack."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from components.simulate.simulation import NOT_SIMULATED, Placement


@dataclass
class Report:
    """A simulation's outcome: where it ran, what it ran, and each job's placement."""

    stack: str
    scheduler: str
    kubeconfig: str
    nodes: dict[str, int]
    """Fake nodes per pool (and `cpu`)."""
    controllers: list[str]
    makers: dict[str, str] = field(default_factory=dict)
    """Pool -> what made its nodes: the real Karpenter, or simulate's stand-in."""
    notes: list[str] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)
    kept: bool = False

    @property
    def ok(self) -> bool:
        """Every job scheduled whole on its pool."""
        return all(p.whole for p in self.placements)

    def as_json(self) -> str:
        """The report as one JSON document."""
        doc: dict[str, Any] = {
            "stack": self.stack,
            "ok": self.ok,
            "scheduler": self.scheduler,
            "kubeconfig": self.kubeconfig,
            "kept": self.kept,
            "nodes": self.nodes,
            "controllers": self.controllers,
            "makers": self.makers,
            "notes": self.notes,
            "notSimulated": list(NOT_SIMULATED),
            "jobs": [p.as_dict() for p in self.placements],
        }
        return json.dumps(doc, indent=2)

    def table(self) -> str:
        """The report for people: a row per job, the reasons of any that did not schedule whole, and the limits."""
        nodes = ", ".join(f"{n} x {name}" for name, n in self.nodes.items())
        lines = [
            f"stack {self.stack}: scheduler {self.scheduler}; controllers: {', '.join(self.controllers) or 'none'}",
            f"nodes: {nodes}",
            *(f"note: {n}" for n in self.notes),
            "",
        ]
        header = ("JOB", "KIND", "POOL", "GANG", "PODS", "NODES", "SECONDS", "RESULT")
        rows = [header, *(_row(p) for p in self.placements)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        for p in self.placements:
            if not p.whole:
                whose = "simulate's assumption, not the stack: " if p.assumed else ""
                lines.append(f"{p.job}: {whose}{p.reason or 'not scheduled whole'}")
        scheduled = sum(p.whole for p in self.placements)
        assumed = sum(p.assumed and not p.whole for p in self.placements)
        lines += [
            "",
            f"{scheduled} of {len(self.placements)} jobs scheduled whole on their pools"
            + ("" if self.ok else "; see the reasons above")
            + (f"; {assumed} held by simulate's assumptions, not by the stack" if assumed else ""),
            "each job was placed alone, in the order pulumi up creates them (fabric checks first)",
            "not simulated: " + "; ".join(NOT_SIMULATED),
        ]
        return "\n".join(lines)


def _row(p: Placement) -> Sequence[str]:
    return (
        p.job,
        f"{p.kind} (fabric check)" if p.gate else p.kind,
        p.pool,
        p.gang,
        f"{p.bound}/{p.expected}",
        str(len(p.nodes)),
        "-" if p.seconds is None else f"{p.seconds:.1f}",
        _result(p),
    )


def _result(p: Placement) -> str:
    """A job's outcome in a word or three: whole, off its pool, or not scheduled (for a reason of the stack's, or
    for one of simulate's assumptions)."""
    if p.whole:
        return "whole"
    if p.off_pool:
        return "off its pool"
    return "NOT SCHEDULED (simulate's assumption)" if p.assumed else "NOT SCHEDULED"
