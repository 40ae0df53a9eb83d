"""What an add-on install is: a Helm release or a remote install, and what it waits for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.versions import Chart, Remote


@dataclass(frozen=True, slots=True)
class HelmRelease:
    """A Helm release: a pinned chart, its namespace and values."""

    name: str
    chart: Chart
    namespace: str
    values: dict[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    """Installs that must be ready first (their CRDs or webhooks)."""

    def describe(self) -> dict[str, Any]:
        """The release as render writes it."""
        return {
            "name": self.name,
            "chart": self.chart.chart,
            "repository": self.chart.repository,
            "version": self.chart.version,
            "namespace": self.namespace,
            "values": self.values,
            "needs": list(self.needs),
            "source": self.chart.source,
        }


@dataclass(frozen=True, slots=True)
class RemoteInstall:
    """Manifests fetched at deploy time (kustomize overlay or manifest files), with our patches."""

    name: str
    remotes: tuple[Remote, ...]
    patches: tuple[str, ...] = ()
    """What we change in the upstream objects, in words (the code is in the install's module)."""
    needs: tuple[str, ...] = ()

    def describe(self) -> dict[str, Any]:
        """The install as render writes it."""
        return {
            "name": self.name,
            "kind": self.remotes[0].kind,
            "urls": [r.url for r in self.remotes],
            "ref": self.remotes[0].ref,
            "patches": list(self.patches),
            "needs": list(self.needs),
            "source": [r.source for r in self.remotes],
        }
