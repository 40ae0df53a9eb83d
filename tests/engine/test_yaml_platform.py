"""examples/yaml-platform on the real engine, through the real CLI and the YAML language host: `pulumi
preview` and `pulumi up` deploy the Platform component (served by the plugin) to a simulated cluster, and
`pulumi destroy --exclude-protected` removes it.

As in tests/engine/test_deploy.py, the platform's add-ons are installed elsewhere and its fabric gate is off.
The program's `packages:` entry is dropped: `pulumi package add ../../provider` runs the plugin through the
Python language host, which the module proxy does not serve; the same plugin is on PATH instead
(`component_plugin`), where the engine finds it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from components.render import render
from components.resolution import resolve_file
from components.simulate import simulation
from tests.engine.conftest import REPO, Project, copy_program
from tests.engine.test_deploy import engine_variant

pytestmark = pytest.mark.engine

EXAMPLE = REPO / "examples" / "yaml-platform"


def _as_deployed_here(workdir: Path) -> None:
    path = workdir / "Pulumi.yaml"
    doc = yaml.safe_load(path.read_text())
    doc.pop("packages", None)
    props = doc["resources"]["platform"]["properties"]
    props["addons"] = {"install": False}
    props["cluster"]["context"] = "simulate"
    for pool in props["nodePools"]:
        pool["fabricCheck"] = {"enabled": False}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_the_yaml_platform_deploys_through_the_cli(
    project_env: dict[str, str], component_plugin: Path, tmp_path: Path
) -> None:
    # The cluster the dev stack gets: the YAML program declares the same platform.
    dev = copy_program(REPO, tmp_path / "dev")
    Project(dev, project_env).edit_config("dev", engine_variant)
    rendered = render(resolve_file(dev / "Pulumi.dev.yaml"))

    workdir = Path(shutil.copytree(EXAMPLE, tmp_path / "yaml-platform"))
    _as_deployed_here(workdir)
    with simulation.running(rendered, tmp_path / "cluster", with_platform=False) as cluster:
        env = {
            **project_env,
            "PATH": f"{component_plugin}{os.pathsep}{project_env['PATH']}",
            "KUBECONFIG": str(cluster.plane.kubeconfig),
        }
        program = Project(workdir, env)
        program.cli("stack", "init", "dev")
        preview = program.cli("preview", "-s", "dev")
        assert "gpu-training:index:Platform" in preview.stdout, preview.stdout
        # The preview above is the one `up` would run first: it is not run twice.
        program.cli("up", "--yes", "--skip-preview", "-s", "dev")
        client = cluster.client
        jobs = {w.objects[-1]["metadata"]["name"] for w in rendered.workloads if not w.gate}
        for workload in rendered.workloads:
            if not workload.gate:
                assert client.get(client.path_of(workload.objects[-1])) is not None, workload.objects[-1]["kind"]
        assert jobs, "the program has jobs"
        outputs = program.cli("stack", "output", "--json", "-s", "dev").stdout
        assert '"pools"' in outputs and "[secret]" in outputs  # the kubeconfig
        program.cli("destroy", "--yes", "--skip-preview", "--exclude-protected", "-s", "dev")
        assert all(client.get(client.path_of(w.objects[-1])) is None for w in rendered.workloads)
