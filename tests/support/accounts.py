"""A shipped script run in a simulate test as its own service account, with the real kubectl, so that its RBAC is
what is tested."""

from __future__ import annotations

import json
import os
from pathlib import Path

from components.simulate.controlplane import ControlPlane

TOKEN_REQUEST = (
    b'{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}'
)
"""An hour's token: longer than any test."""


def kubeconfig(plane: ControlPlane, namespace: str, account: str, folder: Path) -> Path:
    """A kubeconfig that is `account` of `namespace` (a TokenRequest), written in `folder` as <account>.kubeconfig."""
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token"
    token = json.loads(plane.client().request("POST", path, TOKEN_REQUEST, "application/json"))["status"]["token"]
    text = plane.kubeconfig.read_text().replace(f"token: {plane.token}", f"token: {token}")
    assert token in text, "the plane's kubeconfig names its token"
    own = folder / f"{account}.kubeconfig"
    own.write_text(text)
    return own


def kubectl_env(kubectl: Path, kubeconfig: Path, home: Path) -> dict[str, str]:
    """What a script needs to run `kubectl` with `kubeconfig`: it on PATH, and a HOME for its discovery cache."""
    return {
        "PATH": f"{kubectl.parent}{os.pathsep}{os.environ['PATH']}",
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(home),
    }
