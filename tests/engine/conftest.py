"""The real-engine tier's fixtures: the Pulumi CLI and providers built from pinned Go modules, a local file
backend per test, copies of the program to run, and a simulated cluster to deploy to."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.simulate import engines, pulumicli

REPO = Path(__file__).resolve().parents[2]
PROGRAM = ("Pulumi.yaml", "__main__.py", "stacks", "components")
"""What a copy of the stack program is made of (besides its stack files)."""
PASSPHRASE = "engine-tier"
DRIVER = Path(__file__).with_name("program.py")


def _unavailable(reason: str) -> None:
    # CI must run this tier: there a missing toolchain fails; in a user's clone it skips, saying why.
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pulumi_bin() -> Path:
    """A folder holding the Pulumi CLI and the Kubernetes provider, built from the pinned modules (cached)."""
    if shutil.which("go") is None:
        _unavailable("the engine tier builds the Pulumi CLI with Go >= 1.26, and no `go` is on PATH")
    try:
        return pulumicli.install()
    except engines.BuildError as exc:
        _unavailable(f"could not build the Pulumi engine: {exc}")
        raise


@dataclass
class Project:
    """A copy of a Pulumi program with its own backend, and the CLI to run on it."""

    workdir: Path
    env: dict[str, str]

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the real `pulumi` CLI in the program's folder."""
        done = subprocess.run(
            ["pulumi", *args, "--non-interactive"],
            cwd=self.workdir,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"pulumi {' '.join(args)} failed ({done.returncode}):\n{done.stderr}{done.stdout}")
        return done

    def run(self, stack: str, op: str, *flags: str) -> dict[str, Any]:
        """Run the program on the engine (preview, up or destroy) and return what it did."""
        done = subprocess.run(
            [sys.executable, str(DRIVER), str(self.workdir), stack, op, *flags],
            cwd=self.workdir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if done.returncode != 0 or not done.stdout.strip():
            raise AssertionError(f"the engine driver failed ({done.returncode}):\n{done.stderr[-5000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def on_cluster(self, stack: str, kubeconfig: Path, context: str | None = None) -> None:
        """Create `stack` and point its existing cluster at `kubeconfig`, set as a secret as users do."""
        self.cli("stack", "init", stack)
        if context:
            self.cli("config", "set", "--path", "gpu-training:cluster.context", context, "-s", stack)
        self.cli(
            "config", "set", "--secret", "--path", "gpu-training:cluster.kubeconfig", kubeconfig.read_text(),
            "-s", stack,
        )  # fmt: skip

    def stack_file(self, stack: str) -> Path:
        """The program's Pulumi.<stack>.yaml."""
        return self.workdir / f"Pulumi.{stack}.yaml"

    def edit_config(self, stack: str, edit: Any) -> None:
        """Change the stack file's config in place: `edit(config)`."""
        path = self.stack_file(stack)
        doc = yaml.safe_load(path.read_text())
        edit(doc["config"])
        path.write_text(yaml.safe_dump(doc, sort_keys=False))


REPLACING = {"replace", "create-replacement", "delete-replaced", "delete", "discard", "import-replacement"}
"""The engine's step kinds that replace or delete a resource."""


def replaced(result: dict[str, Any]) -> list[tuple[str, str]]:
    """The steps of a `Project.run` result that replace or delete something, as (op, urn)."""
    return [(s["op"], s["urn"]) for s in result["steps"] if s["op"] in REPLACING]


def copy_program(source: Path, target: Path) -> Path:
    """The program and its stack files from `source` (a checkout) in `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for name in PROGRAM:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, target / name)
    for stack_file in source.glob("Pulumi.*.yaml"):
        shutil.copy2(stack_file, target / stack_file.name)
    return target


def checkout(revision: str, target: Path) -> Path:
    """The program as it was at `revision` of this repository, in `target`."""
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


@pytest.fixture
def project_env(pulumi_bin: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of a Pulumi run on a fresh local file backend: no service, no plugin downloads, and only
    the engines we built."""
    backend = tmp_path / "backend"
    backend.mkdir()
    return pulumicli.environment(pulumi_bin, tmp_path / "pulumi-home", backend, PASSPHRASE)


@pytest.fixture
def project(project_env: dict[str, str], tmp_path: Path) -> Iterator[Project]:
    """A copy of this checkout's program (working tree, uncommitted changes included) on its own backend."""
    yield Project(copy_program(REPO, tmp_path / "program"), project_env)


@pytest.fixture(scope="session")
def policy_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The policy pack as an executable analyzer plugin (what `--policy-pack` is given here).

    `pulumi preview --policy-pack policy/` runs a Python pack through the Python language host, which cannot
    be built from the Go module proxy. The engine also takes a pack as an executable file beside its
    PulumiPolicy.yaml, launched as it launches a provider: this one starts the same `policy/__main__.py` in the
    pack's own environment (.venv-policy, which `./run test` makes), as the language host would.
    """
    python = REPO / ".venv-policy" / "bin" / "python"
    if not python.exists():
        _unavailable("the policy pack's environment .venv-policy is missing: run `./run test` once")
    folder = tmp_path_factory.mktemp("policy-pack")
    shutil.copy2(REPO / "policy" / "PulumiPolicy.yaml", folder / "PulumiPolicy.yaml")
    launcher = folder / "gpu-training-policy"
    launcher.write_text(f'#!/bin/sh\nexec "{python}" "{REPO / "policy" / "__main__.py"}" "$@"\n')
    launcher.chmod(0o755)
    return launcher


@pytest.fixture(scope="session")
def component_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the component plugin as an executable, `pulumi-resource-gpu-training`, that starts
    `python provider/` (what the Python language host runs for a source-based plugin, which cannot be built
    here). On PATH, the engine takes it as the gpu-training plugin."""
    folder = tmp_path_factory.mktemp("component-plugin")
    launcher = folder / "pulumi-resource-gpu-training"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{REPO / "provider"}" "$@"\n')
    launcher.chmod(0o755)
    return folder
