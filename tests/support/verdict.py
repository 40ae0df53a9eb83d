"""The verdict scripts as their containers run them, with this machine's sh and awk: one harness for the scripts'
own tests (nccl-verdict.sh, node-verdict.sh) and for the node check's verdict in simulate tests, where the real
kubectl runs as the check's own service account (tests/support/accounts.py), so its RBAC is what is tested."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.manifests import nodecheck as manifests
from components.simulate.controlplane import ControlPlane
from components.wellknown import NODE_CHECK_NAMESPACE as NAMESPACE
from tests.support import accounts

GOOD = Path(__file__).resolve().parents[1] / "data" / "node-check" / "h100-roce"
"""What node-check.sh's gathering steps record on a good 8-GPU node."""


@dataclass(frozen=True)
class Verdict:
    """What a verdict script said: its exit status, its output and errors, and the termination message it wrote."""

    status: int
    out: str
    err: str = ""
    termination: str = ""

    @property
    def line(self) -> str:
        """The last line of its output: the verdict itself."""
        return self.out.strip().splitlines()[-1]


def run(script: Path, *args: str, env: dict[str, str], timeout: float = 60, termination: Path | None = None) -> Verdict:
    """`sh script args` with `env` alone (PATH among it); what it said, and what it wrote to `termination`."""
    done = subprocess.run(
        ["sh", str(script), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    written = termination.read_text().strip() if termination is not None and termination.exists() else ""
    return Verdict(done.returncode, done.stdout, done.stderr, written)


def service_account_kubeconfig(plane: ControlPlane, folder: Path) -> Path:
    """A kubeconfig that is the node check's own service account."""
    return accounts.kubeconfig(plane, NAMESPACE, manifests.SERVICE_ACCOUNT, folder)


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
    said = run(
        folder / "node-check.sh",
        "verdict",
        env={
            **env,
            **accounts.kubectl_env(kubectl, kubeconfig, results.parent),  # HOME: kubectl's discovery cache
            "NODE_NAME": node,
            "RESULTS": str(results),
        },
        timeout=120,
    )
    assert said.status == 0, f"the verdict could not update {node}:\n{said.out}\n{said.err}"
    return said.out
