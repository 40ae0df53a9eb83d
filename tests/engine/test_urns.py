"""URNs hold on the real engine: a stack deployed by the program at release 0.2.0 is previewed by the program
at HEAD with no replacement and no delete (the aliases the program gives are the ones the engine honours).

Release 0.2.0 has no tag in this repository; it is the commit that set the version to 0.2.0 in pyproject.toml.
The stack is one that release can deploy here: an existing cluster, one pool, a namespace with a GPU quota
and an Indexed Job, with no add-ons (the add-ons of 0.2.0 come from chart repositories and GitHub, which
cannot be reached, and 0.2.0 has no `addons.install` setting).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from components.render import render
from components.resolution import resolve_file
from components.simulate import simulation
from tests.engine.conftest import REPO, Project, checkout, copy_program, replaced

pytestmark = pytest.mark.engine

RELEASE_0_2_0 = "6de0ee75ddec762f7e7c6cf5328500a1a248444c"
STACK = "urn"
STACK_FILE = """\
config:
  gpu-training:cluster: {provider: existing, name: train, context: simulate}
  gpu-training:nodePools:
    - {name: h100, gpusPerNode: 8, nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  gpu-training:gpuOperator: {enabled: false}
  gpu-training:trainingOperator: {enabled: false, mpi: false}
  gpu-training:scheduler: {type: none}
  gpu-training:namespaces:
    - {name: training, gpuQuota: 16}
  gpu-training:jobs:
    - {name: llama-finetune, namespace: training, image: registry.example.com/training:v2.0, command: [train.py],
       nodes: 2, launcher: indexed}
"""


def test_a_stack_deployed_by_release_0_2_0_is_updated_in_place_by_head(
    project_env: dict[str, str], tmp_path: Path
) -> None:
    old = Project(checkout(RELEASE_0_2_0, tmp_path / "v0.2.0"), project_env)
    old.stack_file(STACK).write_text(STACK_FILE)
    rendered = render(resolve_file(old.stack_file(STACK)))
    with simulation.running(rendered, tmp_path / "cluster", with_platform=False) as cluster:
        old.on_cluster(STACK, cluster.plane.kubeconfig)
        deployed = old.run(STACK, "up")
        assert deployed["ok"], deployed["error"]
        assert {s["op"] for s in deployed["steps"]} == {"create"}

        head = Project(copy_program(REPO, tmp_path / "head"), project_env)
        shutil.copy2(old.stack_file(STACK), head.stack_file(STACK))  # the stack's config, secrets and salt
        preview = head.run(STACK, "preview")
        assert preview["ok"], preview["error"]
        assert not replaced(preview), f"HEAD replaces or deletes what 0.2.0 made:\n{replaced(preview)}"
