"""Kubeconfigs: where one that may manage a cluster points (its API server and CA), and the kubeconfig MultiKueue
reaches a worker with, made from a ServiceAccount's token.

Pure: text in, text out (a kubeconfig given as a file's path is read). What Kueue v0.19.2 accepts in a
MultiKueueCluster's kubeconfig (pkg/controller/admissionchecks/multikueue/multikueuecluster.go:958-1040,
validateKubeconfig): a bearer token (no token file, exec plugin, auth provider or basic auth), the CA as data (no
file path), TLS verified, and a server whose host is an IP or a DNS-1123 subdomain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A cluster's API server, as a kubeconfig names it."""

    server: str
    """The API server's URL."""
    ca_data: str | None
    """Its CA bundle, base64 (`certificate-authority-data`); None when the kubeconfig gives none."""


def is_contents(kubeconfig: str) -> bool:
    """Whether a kubeconfig value is a kubeconfig's contents rather than a file's path."""
    text = kubeconfig.strip()
    # A top-level key with its colon: a relative path may begin with `kind` or `clusters` (kind.yaml, clusters/dev).
    return "\n" in text or text.startswith(("{", "apiVersion", "clusters:", "kind:"))


def read(kubeconfig: str) -> dict[str, Any]:
    """A kubeconfig (its contents, YAML or JSON, or a file's path) as data; ValueError saying what is wrong."""
    text = kubeconfig if is_contents(kubeconfig) else _file(kubeconfig)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"the kubeconfig is not YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("the kubeconfig is not a mapping (apiVersion: v1, kind: Config)")
    return data


def _file(path: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"the kubeconfig file {path} cannot be read: {exc.strerror or exc}") from None


def endpoint(kubeconfig: str, context: str | None = None) -> Endpoint:
    """The API server of a kubeconfig's context (`context`, else its current one, else its only cluster)."""
    data = read(kubeconfig)
    clusters = {c.get("name"): c.get("cluster") or {} for c in data.get("clusters") or [] if isinstance(c, dict)}
    contexts = {c.get("name"): c.get("context") or {} for c in data.get("contexts") or [] if isinstance(c, dict)}
    chosen = context or data.get("current-context")
    if chosen:
        if chosen not in contexts:
            raise ValueError(f"the kubeconfig has no context '{chosen}' (contexts: {', '.join(map(str, contexts))})")
        cluster = clusters.get(contexts[chosen].get("cluster"))
    elif len(clusters) == 1:
        cluster = next(iter(clusters.values()))
    else:
        raise ValueError("the kubeconfig names no current-context and holds more than one cluster")
    if not cluster or not cluster.get("server"):
        raise ValueError("the kubeconfig's cluster has no server")
    return Endpoint(server=str(cluster["server"]), ca_data=cluster.get("certificate-authority-data"))


def token_kubeconfig(cluster: str, server: str, ca_data: str, token: str, user: str) -> str:
    """A kubeconfig for one cluster that authenticates with a bearer token and trusts `ca_data` (base64): what a
    MultiKueueCluster's Secret holds under its `kubeconfig` key. JSON, which is YAML too."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
        "current-context": cluster,
    }
    return json.dumps(config, indent=2, sort_keys=True)
