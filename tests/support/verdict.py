"""The node check's verdict as its container runs it, for simulate tests: the real kubectl, as the check's own
service account (a TokenRequest), so its RBAC is what is tested."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from components.manifests import nodecheck as manifests
from components.simulate.client import Client
from components.simulate.controlplane import ControlPlane
from components.wellknown import NODE_CHECK_NAMESPACE as NAMESPACE

GOOD = Path(__file__).resolve().parents[1] / "data" / "node-check" / "h100-roce"
"""What node-check.sh's gathering steps record on a good 8-GPU node."""


def service_account_kubeconfig(client: Client, plane: ControlPlane, folder: Path) -> Path:
    """A kubeconfig that is the check's own service account."""
    path = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{manifests.SERVICE_ACCOUNT}/token"
    body = b'{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}'
    token = json.loads(client.request("POST", path, body, "application/json"))["status"]["token"]
    text = plane.kubeconfig.read_text().replace(f"token: {plane.token}", f"token: {token}")
    assert token in text
    own = folder / "node-check.kubeconfig"
    own.write_text(text)
    return own


def scripts(folder: Path) -> Path:
    """The check's scripts as its ConfigMap ships them, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in manifests.configmap()["data"].items():
        (folder / name).write_text(text)
    return folder


def verdict_env(daemonset: dict[str, Any]) -> dict[str, str]:
    """The plain values of the verdict container's environment, as the DaemonSet gives them."""
    container = daemonset["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def records(folder: Path, *, ecc_errors: int = 0, efa: int = 0) -> Path:
    """A good node's records in `folder`; with `ecc_errors`, GPU 2 has that many uncorrected ECC errors; with `efa`,
    its fabric NICs are that many ACTIVE EFA devices (named as the EFA driver names them) instead of the RoCE rails."""
    shutil.copytree(GOOD, folder)
    if efa:
        (folder / "nics.txt").write_text("".join(f"rdma rdmap{i}s0 ACTIVE 100\n" for i in range(efa)))
    if ecc_errors:
        rows = (GOOD / "gpus.csv").read_text().splitlines()
        rows[2] = f"2, 00000000:73:00.0, {ecc_errors}, No, No"
        (folder / "gpus.csv").write_text("\n".join(rows) + "\n")
    return folder


def verdict(node: str, results: Path, kubeconfig: Path, folder: Path, env: dict[str, str], kubectl: Path) -> str:
    """node-check.sh's verdict step for `node` on `results`, with the scripts in `folder`; its output."""
    done = subprocess.run(
        ["sh", str(folder / "node-check.sh"), "verdict"],
        env={
            **env,
            "PATH": f"{kubectl.parent}{os.pathsep}{os.environ['PATH']}",
            "KUBECONFIG": str(kubeconfig),
            "HOME": str(results.parent),  # kubectl's discovery cache
            "NODE_NAME": node,
            "RESULTS": str(results),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"the verdict could not update {node}:\n{done.stdout}\n{done.stderr}"
    return done.stdout
