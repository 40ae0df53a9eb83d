"""What a simulate test that waited in vain prints about its cluster: the latest events and its controllers' logs."""

from __future__ import annotations

from components.simulate.client import Client
from components.simulate.controlplane import ControlPlane


def events(client: Client, namespace: str | None = None, last: int = 15) -> str:
    """The `last` latest events of `namespace` (else of every namespace), a line each: kind/name: reason: message."""
    lines = [
        f"{e['involvedObject']['kind']}/{e['involvedObject']['name']}: {e.get('reason')}: {e.get('message')}"
        for e in client.list("v1", "Event", namespace)
    ]
    return "events:\n" + "\n".join(lines[-last:])


def logs(plane: ControlPlane, *names: str, lines: int = 25) -> str:
    """The last `lines` of the log of each process of the plane whose name starts with one of `names`."""
    return "\n".join(f"--- {p.name} log:\n{p.tail(lines)}" for p in plane.processes if p.name.startswith(names))


def of(plane: ControlPlane, namespace: str | None, *names: str, last: int = 15, lines: int = 25) -> str:
    """The events of `namespace` (else of every namespace) and the logs of the plane's processes named so."""
    return events(plane.client(), namespace, last) + "\n" + logs(plane, *names, lines=lines)
