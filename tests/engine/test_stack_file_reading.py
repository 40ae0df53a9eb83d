"""The Pulumi CLI and offline reading agree on which stack files can be read: a key stated twice (at the top or
inside a job), an alias bomb and a byte that is not UTF-8 are refused by both; anchors and merge keys a user
writes, and keys without a namespace (the project's), are read by both, to the same values."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from components.config import read_stack_file
from components.errors import ConfigError
from components.models import CONFIG_NAMESPACE
from tests.test_yamlstrict import MINIMAL, bomb

pytestmark = pytest.mark.engine

MERGED = MINIMAL.replace(
    "nodes: 2}\n",
    "nodes: 2}\n    - &base {name: b, image: registry.example.com/t:v1, command: [t.py], nodes: 2}\n"
    "    - {<<: *base, name: c, nodes: 1}\n",
)
FILES: dict[str, tuple[bytes, bool]] = {
    "plain": (MINIMAL.encode(), True),
    "anchors-and-merge-keys": (MERGED.encode(), True),
    "bare-keys": (MINIMAL.replace("gpu-training:cluster", "cluster").encode(), True),
    "jobs-twice": ((MINIMAL + "  gpu-training:jobs: []\n").encode(), False),
    "key-twice-in-a-job": (MINIMAL.replace("nodes: 2}", "nodes: 2, nodes: 4}").encode(), False),
    "key-twice-outside-the-namespace": ((MINIMAL + "  aws:region: a\n  aws:region: b\n").encode(), False),
    "alias-bomb": (bomb().encode(), False),
    "latin-1": (MINIMAL.encode().replace(b"train,", b"tr\xe9in,"), False),
}
"""Each stack file, and whether it can be read."""


def _pulumi_config(project_env: dict[str, str], folder: Path, text: bytes) -> dict[str, object] | str:
    """The stack's config as the CLI reads it (`pulumi config --json`), or its error."""

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = ["pulumi", *args, "--non-interactive"]
        return subprocess.run(command, cwd=folder, env=project_env, capture_output=True, text=True, check=False)

    (folder / "Pulumi.yaml").write_text(f"name: {CONFIG_NAMESPACE}\nruntime: yaml\n")  # the project's name
    assert cli("stack", "init", "dev").returncode == 0
    (folder / "Pulumi.dev.yaml").write_bytes(text)
    done = cli("config", "--json", "-s", "dev")
    if done.returncode != 0:
        return done.stderr
    prefix = f"{CONFIG_NAMESPACE}:"
    return {
        key.removeprefix(prefix): entry.get("objectValue", entry["value"])
        for key, entry in json.loads(done.stdout).items()
        if key.startswith(prefix)
    }


@pytest.mark.parametrize("name", FILES)
def test_the_pulumi_cli_and_offline_reading_agree(project_env: dict[str, str], tmp_path: Path, name: str) -> None:
    text, readable = FILES[name]
    engine = _pulumi_config(project_env, tmp_path, text)
    path = tmp_path / "Pulumi.offline.yaml"
    path.write_bytes(text)
    try:
        offline: dict[str, object] | str = read_stack_file(path)[0]
    except ConfigError as exc:
        offline = str(exc)
    if readable:
        assert isinstance(engine, dict), engine
        assert offline == engine
    else:
        assert isinstance(engine, str) and "error" in engine, f"the CLI read {name}: {engine}"
        assert isinstance(offline, str), f"offline reading took {name}, which the Pulumi CLI refuses: {engine}"
        assert offline.startswith(f"{path}:"), offline
