"""The plugin's SDKs from Pulumi's own code generators, as `pulumi package add ./provider` makes them.

The real CLI reads the schema from the real plugin (`pulumi package get-schema`, the plugin started as the
Python language host starts it). `pulumi package add` then has the project's language host generate the
SDK; the hosts cannot be built here (the module proxy does not serve them), so `pulumi-codegen`
(components/simulate/engines/pulumi-codegen) runs the generators they run, at the CLI's version, with the
arguments `package add` gives them. Then: the TypeScript example type-checks against the generated SDK, a Go
program using the generated SDK builds, and the generated Python SDK constructs both components.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.render import render
from components.resolution import resolve_file
from components.simulate import engines, pulumicli, simulation
from tests.engine.conftest import PASSPHRASE, REPO, Project, _unavailable, copy_program
from tests.provider.plugin import plugin, schema
from tests.support.pulumi_mocks import RecordingMonitor, run

pytestmark = pytest.mark.engine

EXAMPLE = REPO / "examples" / "typescript-workloads"
NODE_MODULES = REPO / ".node" / "node_modules"
TSC = NODE_MODULES / ".bin" / "tsc"
COMPONENTS_PAGE = (REPO / "docs" / "components.md").read_text()
"""The docs page on the component package, which says what `pulumi package add` generates."""


@pytest.fixture(scope="session")
def codegen() -> Path:
    """The `pulumi-codegen` binary, built from the pinned module (cached)."""
    if shutil.which("go") is None:
        _unavailable("the engine tier builds Pulumi's code generators with Go >= 1.26, and no `go` is on PATH")
    try:
        return engines.build(pulumicli.CODEGEN)["pulumi-codegen"]
    except engines.BuildError as exc:
        _unavailable(f"could not build pulumi-codegen: {exc}")
        raise


@pytest.fixture(scope="session")
def schema_file(pulumi_bin: Path, component_plugin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The schema as `pulumi package get-schema` reads it from the plugin."""
    folder = tmp_path_factory.mktemp("plugin")
    launcher = component_plugin / "pulumi-resource-gpu-training"
    env = pulumicli.environment(pulumi_bin, folder / "pulumi-home", folder, PASSPHRASE)
    done = subprocess.run(
        ["pulumi", "package", "get-schema", str(launcher)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"pulumi package get-schema failed:\n{done.stderr}"
    path = folder / "schema.json"
    path.write_text(done.stdout)
    return path


def _sdk_folder(spec: dict[str, Any]) -> str:
    """Where `pulumi package add` puts the SDK in the project: sdks/<namespace>-<name>."""
    return f"{spec['namespace']}-{spec['name']}" if spec.get("namespace") else spec["name"]


def _generate(codegen: Path, schema_file: Path, language: str, project: Path) -> Path:
    """The SDK for `language` in `project`'s sdks/ folder, as `pulumi package add` leaves it."""
    out = project / "sdks" / _sdk_folder(json.loads(schema_file.read_text()))
    done = subprocess.run(
        [str(codegen), language, str(schema_file), str(out)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"pulumi-codegen {language} failed:\n{done.stderr}"
    return out


def _as_spec(value: Any, nested: bool = False) -> Any:
    """A served schema as the CLI's PackageSpec writes it back: no nulls, no empty dependency list, and no
    description on an array's items or a map's values (the spec has no field for one there)."""
    if isinstance(value, dict):
        return {
            key: _as_spec(item, key in ("items", "additionalProperties"))
            for key, item in value.items()
            if item is not None and not (nested and key == "description")
        }
    if isinstance(value, list):
        return [_as_spec(item) for item in value]
    return value


def test_the_cli_reads_the_schema_the_plugin_serves(schema_file: Path) -> None:
    with plugin("127.0.0.1:1") as stub:
        served = _as_spec(schema(stub))
    read = json.loads(schema_file.read_text())
    assert served.pop("dependencies", []) == []
    assert read.pop("config", {}) == {}
    assert read == served


def _node(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`command` with the toolchain's tsc first on PATH."""
    env = {**os.environ, "PATH": f"{TSC.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


def _node_modules(project: Path, sdk: Path, name: str) -> None:
    """The toolchain's packages (.node/, from tests/examples/package.json) and the SDK, linked as npm links a
    `file:` dependency, in the project's node_modules."""
    modules = project / "node_modules"
    for entry in NODE_MODULES.iterdir():
        if entry.name.startswith("@"):
            (modules / entry.name).mkdir(parents=True, exist_ok=True)
            for package in entry.iterdir():
                (modules / entry.name / package.name).symlink_to(package)
        elif not entry.name.startswith("."):
            modules.mkdir(exist_ok=True)
            (modules / entry.name).symlink_to(entry)
    link = modules / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(sdk)


def test_the_typescript_example_type_checks_against_the_generated_sdk(
    codegen: Path, schema_file: Path, tmp_path: Path
) -> None:
    if not TSC.exists() or shutil.which("node") is None:
        _unavailable("no TypeScript toolchain in .node/ (or no node): `./run test` installs it with npm")
    project = tmp_path / "typescript-workloads"
    project.mkdir()
    for name in ("index.ts", "tsconfig.json", "package.json"):
        shutil.copy(EXAMPLE / name, project / name)
    sdk = _generate(codegen, schema_file, "nodejs", project)
    name = json.loads((sdk / "package.json").read_text())["name"]

    # The example imports the SDK by the name the generator gives it, from where `package add` puts it.
    dependencies = json.loads((project / "package.json").read_text())["dependencies"]
    assert dependencies.get(name) == f"file:sdks/{sdk.name}", f"package.json does not depend on {name}"
    assert f'from "{name}"' in (project / "index.ts").read_text()

    _node_modules(project, sdk, name)
    # npm runs the local SDK's postinstall, which compiles it with tsc: the generated code compiles against the
    # real @pulumi/pulumi.
    built = _node("node", "scripts/postinstall.js", cwd=sdk)
    assert built.returncode == 0, built.stdout + built.stderr
    checked = _node("tsc", "--noEmit", "--skipLibCheck", "-p", str(project), cwd=project)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # And the check has teeth: a misspelt input is an error against the generated SDK too.
    source = (project / "index.ts").read_text()
    (project / "index.ts").write_text(source.replace("nodes: 2,", "nodez: 2,"))
    misspelt = _node("tsc", "--noEmit", "--skipLibCheck", "-p", str(project), cwd=project)
    assert "'nodez' does not exist in type 'TrainingJobArgs'" in misspelt.stdout


GO_PROGRAM = """\
package main

import (
	gpu "{package}"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {{
	pulumi.Run(func(ctx *pulumi.Context) error {{
		platform, err := pulumi.NewStackReference(ctx, "platform", &pulumi.StackReferenceArgs{{
			Name: pulumi.String("organization/gpu-training/prod"),
		}})
		if err != nil {{
			return err
		}}
		pool := platform.GetOutput(pulumi.String("pools")).ApplyT(func(pools interface{{}}) map[string]interface{{}} {{
			return pools.(map[string]interface{{}})["p5"].(map[string]interface{{}})
		}}).(pulumi.MapOutput)
		nodes := 2
		job, err := gpu.NewTrainingJob(ctx, "llama-finetune", &gpu.TrainingJobArgs{{
			Image:         "registry.example.com/training:v2.0",
			Command:       []string{{"train.py", "--output_dir=/checkpoints/llama-finetune"}},
			Nodes:         &nodes,
			Volumes:       []gpu.VolumeMountSpecArgs{{{{Claim: "checkpoints", MountPath: "/checkpoints"}}}},
			Nccl:          map[string]string{{"debug": "WARN"}},
			Pool:          pool,
			SchedulerType: pulumi.String("volcano"),
		}})
		if err != nil {{
			return err
		}}
		ctx.Export("worldSize", job.WorldSize)
		return nil
	}})
}}
"""


def test_a_go_program_using_the_generated_sdk_builds(codegen: Path, schema_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "go-workloads"
    project.mkdir()
    sdk = _generate(codegen, schema_file, "go", project)
    module = (sdk / "go.mod").read_text().split()[1]
    (package,) = [p.name for p in sdk.iterdir() if p.is_dir()]
    assert f"`{module}`" in COMPONENTS_PAGE and f"`{package}`" in COMPONENTS_PAGE, (
        "docs/components.md names the Go module and package"
    )
    sdk_version = engines.pinned(pulumicli.CLI, "github.com/pulumi/pulumi/sdk/v3")
    # What `pulumi package add` links into a Go project: the SDK's module, replaced by its folder.
    (project / "go.mod").write_text(
        f"module example.com/go-workloads\n\ngo 1.26\n\n"
        f"require (\n\tgithub.com/pulumi/pulumi/sdk/v3 {sdk_version}\n\t{module} v0.0.0\n)\n\n"
        f"replace {module} => ./sdks/{sdk.name}\n"
    )
    (project / "main.go").write_text(GO_PROGRAM.format(package=f"{module}/{package}"))
    # The CLI engine's go.sum holds the SDK's dependencies at the same versions: only the rest is fetched.
    shutil.copy(pulumicli.CLI.module_dir / "go.sum", project / "go.sum")
    # The engines' build settings, so the Pulumi SDK's packages come from the Go build cache.
    env = {**engines._env(), "GOFLAGS": "-trimpath -mod=mod -buildvcs=false"}
    for command in (["go", "mod", "tidy"], ["go", "build", "-o", "go-workloads", "."]):
        done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=1800, check=False)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stderr[-5000:]}"
    assert (project / "go-workloads").is_file()


def test_the_generated_python_sdk_constructs_both_components(
    codegen: Path, schema_file: Path, tmp_path: Path, pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    sdk = _generate(codegen, schema_file, "python", tmp_path / "python-workloads")
    site = tmp_path / "site"
    # Installed as the Python language host installs a linked SDK (pip), without its dependencies: this
    # environment has pulumi; the SDK reads its own version from the installed distribution's metadata.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(site), str(sdk)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (name,) = [p.name for p in sdk.iterdir() if (p / "__init__.py").is_file()]
    assert f"`{name}`" in COMPONENTS_PAGE, "docs/components.md names the Python package"
    monkeypatch.syspath_prepend(str(site))
    try:
        gpu = importlib.import_module(name)

        def program() -> None:
            job = gpu.TrainingJob(
                "llama-finetune",
                gpu.TrainingJobArgs(
                    image="registry.example.com/training:v2.0",
                    command=["train.py"],
                    nodes=2,
                    pool={"name": "p5", "gpusPerNode": 8},
                    scheduler_type="volcano",
                    launcher=gpu.Launcher.PYTORCH,
                    volumes=[gpu.VolumeMountSpecArgs(claim="checkpoints", mount_path="/checkpoints")],
                ),
            )
            assert isinstance(job, gpu.TrainingJob)
            gpu.Platform(
                "platform",
                gpu.PlatformArgs(cluster=gpu.ClusterSpecArgs(provider=gpu.ClusterProvider.EXISTING, name="lab")),
            )

        run(program)
    finally:
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]

    (job,) = pulumi_mocks.of_type("gpu-training:index:TrainingJob")
    assert not job.custom, "a component, constructed by the plugin (remote)"
    assert job.inputs["image"] == "registry.example.com/training:v2.0"
    assert job.inputs["nodes"] == 2
    assert job.inputs["launcher"] == "pytorch"
    assert job.inputs["schedulerType"] == "volcano"
    assert job.inputs["volumes"] == [{"claim": "checkpoints", "mountPath": "/checkpoints"}]
    (platform,) = pulumi_mocks.of_type("gpu-training:index:Platform")
    assert platform.inputs["cluster"] == {"provider": "existing", "name": "lab"}


PLATFORM_STACK = """\
config:
  gpu-training:cluster: {provider: existing, name: platform}
  gpu-training:nodePools:
    - {name: p5, instanceType: p5.48xlarge, maxNodes: 4, nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}}
  gpu-training:gpuOperator: {enabled: false}
  gpu-training:addons: {install: false}
  gpu-training:scheduler: {type: none}
  gpu-training:namespaces:
    - {name: training}
"""
"""A platform stack with the `p5` pool the TypeScript example places its job on (an existing cluster)."""

PREVIEW_JS = """\
// Preview a compiled Pulumi program inline, through the Node.js Automation API's own language server (the
// Node.js language host is not served by the Go module proxy); print the change summary as JSON.
const { LocalWorkspace } = require("@pulumi/pulumi/automation");
const [program, workDir, platformStack] = process.argv.slice(2);
(async () => {
    const stack = await LocalWorkspace.createOrSelectStack(
        { stackName: "dev", projectName: "gpu-training-ts-workloads", program: async () => require(program) },
        { workDir },
    );
    await stack.setConfig("platformStack", { value: platformStack });
    const result = await stack.preview({ onOutput: (out) => process.stderr.write(out) });
    console.log(JSON.stringify(result.changeSummary));
})().catch((err) => {
    console.error(err);
    process.exit(1);
});
"""


def test_the_typescript_example_previews_on_a_platform_stacks_pool(
    codegen: Path,
    schema_file: Path,
    project_env: dict[str, str],
    component_plugin: Path,
    tmp_path: Path,
) -> None:
    if not TSC.exists() or shutil.which("node") is None:
        _unavailable("no TypeScript toolchain in .node/ (or no node): `./run test` installs it with npm")
    platform = Project(copy_program(REPO, tmp_path / "platform"), project_env)
    platform.stack_file("platform").write_text(PLATFORM_STACK)
    rendered = render(resolve_file(platform.stack_file("platform")))
    with simulation.running(rendered, tmp_path / "cluster", with_platform=False) as cluster:
        platform.on_cluster("platform", cluster.plane.kubeconfig)
        deployed = platform.run("platform", "up")
        assert deployed["ok"], deployed["error"]

        project = tmp_path / "typescript-workloads"
        project.mkdir()
        for name in ("index.ts", "tsconfig.json", "package.json"):
            shutil.copy(EXAMPLE / name, project / name)
        settings = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
        settings.pop("packages")  # `package add` runs the plugin through the Python host; it is on PATH here
        (project / "Pulumi.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
        sdk = _generate(codegen, schema_file, "nodejs", project)
        _node_modules(project, sdk, json.loads((sdk / "package.json").read_text())["name"])
        built = _node("node", "scripts/postinstall.js", cwd=sdk)
        assert built.returncode == 0, built.stdout + built.stderr
        compiled = _node("tsc", "-p", str(project), cwd=project)
        assert compiled.returncode == 0, compiled.stdout + compiled.stderr
        (project / "preview.js").write_text(PREVIEW_JS)

        env = {**project_env, "PATH": f"{component_plugin}{os.pathsep}{TSC.parent}{os.pathsep}{project_env['PATH']}"}
        done = subprocess.run(
            [
                "node",
                "preview.js",
                str(project / "bin" / "index.js"),
                str(project),
                "organization/gpu-training/platform",
            ],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-5000:]
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        assert summary.get("create", 0) >= 3, summary  # the TrainingJob, its PyTorchJob and its provider
        assert "gpu-training:index:TrainingJob" in done.stderr
