"""An upgrade replaces no running job, on the real engine: a stack deployed by the last 0.2 release, whose job
names no launcher (a PyTorchJob then), is previewed by HEAD, where such a job is a TrainJob. HEAD reads the
stack's last outputs and keeps the job a PyTorchJob: nothing is replaced or deleted. Naming the new default
(`defaultLauncher: trainjob`) is the owner's choice, and only then does the preview replace the job.

The cluster is `simulate`'s with the stack's CRDs and controllers (add-ons installed elsewhere,
`addons.install: false`, as chart repositories cannot be reached here).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from components.render import render
from components.resolution import resolve_file
from components.simulate import simulation
from tests.engine.conftest import REPO, Project, checkout, copy_program, replaced

pytestmark = pytest.mark.engine

RELEASE_0_2 = "4494d131f1f75b841584c0729163ce2dd1a1981d"
"""The last commit of the 0.2 line (pyproject.toml version 0.2.0), before jobs that name no launcher were
TrainJobs."""
STACK = "upgrade"
STACK_FILE = """\
config:
  gpu-training:cluster: {provider: existing, name: train, context: simulate}
  gpu-training:nodePools:
    - {name: h100, gpusPerNode: 8, maxNodes: 2, nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  gpu-training:gpuOperator: {enabled: false}
  gpu-training:addons: {install: false}
  gpu-training:namespaces:
    - {name: training, gpuQuota: 16}
  gpu-training:jobs:
    - {name: llama-finetune, namespace: training, image: registry.example.com/training:v2.0, command: [train.py],
       nodes: 2}
"""
PYTORCHJOB = "kubernetes:kubeflow.org/v1:PyTorchJob"


def test_a_job_deployed_as_a_pytorchjob_by_release_0_2_stays_one_until_its_owner_moves_it(
    project_env: dict[str, str], tmp_path: Path
) -> None:
    old = Project(checkout(RELEASE_0_2, tmp_path / "v0.2"), project_env)
    old.stack_file(STACK).write_text(STACK_FILE)
    # The cluster runs what both releases need: the v1 operators and Trainer (a variant naming the v1 default).
    variant = tmp_path / "cluster" / "Pulumi.variant.yaml"
    variant.parent.mkdir()
    doc = yaml.safe_load(STACK_FILE)
    doc["config"]["gpu-training:defaultLauncher"] = "pytorch"
    variant.write_text(yaml.safe_dump(doc, sort_keys=False))
    rendered = render(resolve_file(variant))
    with simulation.running(rendered, tmp_path / "plane", with_platform=False, checks_pass=True) as cluster:
        old.on_cluster(STACK, cluster.plane.kubeconfig)
        deployed = old.run(STACK, "up")
        assert deployed["ok"], deployed["error"]
        assert PYTORCHJOB in {s["type"] for s in deployed["steps"]}, "0.2 made the job a PyTorchJob"

        head = Project(copy_program(REPO, tmp_path / "head"), project_env)
        shutil.copy2(old.stack_file(STACK), head.stack_file(STACK))  # the stack's config, secrets and salt
        preview = head.run(STACK, "preview")
        assert preview["ok"], preview["error"]
        assert not replaced(preview), f"HEAD replaces or deletes what 0.2 made:\n{replaced(preview)}"
        assert "kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob" not in {s["type"] for s in preview["steps"]}

        # The owner chooses the new default: now, and only now, the PyTorchJob goes and a TrainJob comes.
        head.edit_config(STACK, lambda config: config.__setitem__("gpu-training:defaultLauncher", "trainjob"))
        moved = head.run(STACK, "preview")
        assert moved["ok"], moved["error"]
        ops = {(s["op"], s["type"]) for s in moved["steps"]}
        assert ("delete", PYTORCHJOB) in ops and ("create", "kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob") in ops
