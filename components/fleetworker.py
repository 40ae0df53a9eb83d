"""A worker cluster of a fleet: its validated stack, and what its platform makes that MultiKueue dispatches to
(its LocalQueues, the pools of each queue, its runtimes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.models import WorkerSpec
from components.models.platform import QueueSpec
from components.pool import Pool
from components.stack import Stack


@dataclass(frozen=True, slots=True)
class Worker:
    """A worker cluster of the fleet and its validated stack."""

    name: str
    spec: WorkerSpec
    stack: Stack
    source: str
    """Where its stack is declared: its stack file, or `fleet.workers[N].config` of the fleet's."""
    objects: tuple[dict[str, Any], ...] = field(default=(), repr=False, compare=False)
    """Its platform objects as its stack renders them (namespaces, queues, runtimes ...)."""

    @property
    def inline(self) -> bool:
        """Whether the fleet deploys this worker's platform (its keys are inline) rather than its own stack."""
        return self.spec.config is not None

    @property
    def queues(self) -> dict[str, QueueSpec]:
        """Its Kueue queues, by name."""
        return {q.name: q for q in self.stack.config.scheduler.queues}

    def local_queues(self) -> set[tuple[str, str]]:
        """(namespace, queue) of every LocalQueue its stack makes."""
        return {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in self.objects if o["kind"] == "LocalQueue"}

    def queue_pools(self, queue: str) -> list[Pool]:
        """The pools a queue draws on here."""
        spec = self.queues[queue]
        return [p for p in self.stack.pools.values() if not spec.pools or p.name in spec.pools]

    def of_kind(self, kind: str) -> dict[str, dict[str, Any]]:
        """Its platform objects of one kind, by name."""
        return {o["metadata"]["name"]: o for o in self.objects if o["kind"] == kind}
