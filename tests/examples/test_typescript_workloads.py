"""examples/typescript-workloads: a TrainingJob in TypeScript on a platform stack's pool. index.ts type-checks
with tsc against declarations made from the plugin's schema (tests/support/pulumi_schema.py) and the real
@pulumi/pulumi and @pulumi/kubernetes packages (tests/examples/package.json, installed into .node/ by ./run test).
The engine tier (tests/engine/test_sdks.py) checks it against the SDK Pulumi's own code generator makes."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.pulumi_schema import npm_name, package_json, typescript

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "typescript-workloads"
NODE = REPO / ".node"
TSC = NODE / "node_modules" / ".bin" / "tsc"

needs_tsc = pytest.mark.skipif(
    not TSC.exists(), reason="no TypeScript toolchain in .node/: `./run test` installs it with npm"
)


@pytest.fixture
def project(served: dict[str, Any]) -> Iterator[Path]:
    """A copy of the example, with the SDK `pulumi package add` would generate, under .node/ (whose node_modules
    hold @pulumi/pulumi, @pulumi/kubernetes and typescript)."""
    (NODE / "work").mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=NODE / "work"))
    for name in ("index.ts", "tsconfig.json", "package.json"):
        shutil.copy(EXAMPLE / name, path / name)
    sdk = path / "node_modules" / npm_name(served)
    sdk.mkdir(parents=True)
    (sdk / "index.d.ts").write_text(typescript(served))
    (sdk / "package.json").write_text(json.dumps(package_json(served)))
    yield path
    shutil.rmtree(path)


def _tsc(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TSC), "--noEmit", "--skipLibCheck", "-p", str(project)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@needs_tsc
def test_index_ts_type_checks(project: Path) -> None:
    result = _tsc(project)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_tsc
def test_a_misspelled_or_mistyped_input_does_not(project: Path) -> None:
    source = (project / "index.ts").read_text()
    (project / "index.ts").write_text(source.replace("nodes: 2,", "nodez: 2,"))
    assert "'nodez' does not exist" in _tsc(project).stdout
    (project / "index.ts").write_text(source.replace("nodes: 2,", 'nodes: "2",'))
    assert "Type 'string' is not assignable to type 'number'" in _tsc(project).stdout


def test_the_project_uses_the_plugin_in_this_checkout(served: dict[str, Any]) -> None:
    program = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    assert program["runtime"]["name"] == "nodejs"
    assert (EXAMPLE / program["packages"]["gpu-training"] / "PulumiPlugin.yaml").is_file()
    dependencies = json.loads((EXAMPLE / "package.json").read_text())["dependencies"]
    # `pulumi package add` puts the SDK in sdks/<namespace>-<name> and names it @<namespace>/<name>.
    folder = f"{served['namespace']}-{served['name']}"
    assert dependencies[npm_name(served)] == f"file:sdks/{folder}", "where `pulumi package add` puts the SDK"
    assert f'from "{npm_name(served)}"' in (EXAMPLE / "index.ts").read_text()


def test_the_toolchain_is_what_the_example_asks_for() -> None:
    """The versions tsc checks against satisfy the example's own ranges (^x.y.z: same major, not older)."""
    example = json.loads((EXAMPLE / "package.json").read_text())
    wanted = {**example["dependencies"], **example["devDependencies"]}
    pinned = json.loads((REPO / "tests" / "examples" / "package.json").read_text())["devDependencies"]
    for name, version in pinned.items():
        assert wanted[name].startswith("^"), name
        low = tuple(int(x) for x in wanted[name][1:].split("."))
        have = tuple(int(x) for x in version.split("."))
        assert have[0] == low[0] and have >= low, f"{name} {version} does not satisfy {wanted[name]}"
