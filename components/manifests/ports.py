"""Container and Service ports, each with its protocol stated.

Server-side apply merges a container's `ports` by (containerPort, protocol) and a Service's by (port,
protocol). API servers before v1.21 do not default a missing key field and refuse the object ("associative
list with keys has an element that omits key field \\"protocol\\"": kubernetes-sigs/structured-merge-diff#130
and #183, fixed by kubernetes/kubernetes#98576), so we never leave it to the default.
"""

from __future__ import annotations

from typing import Any

PROTOCOL = "TCP"
"""Every port we open is TCP (sshd, the c10d rendezvous)."""


def container_port(name: str, number: int) -> dict[str, Any]:
    """A named TCP port of a container."""
    return {"name": name, "containerPort": number, "protocol": PROTOCOL}


def service_port(name: str, number: int) -> dict[str, Any]:
    """A named TCP port of a Service, to the same port of its pods."""
    return {"name": name, "port": number, "targetPort": number, "protocol": PROTOCOL}
