"""A job's Pulumi secret on the real engine: set with `pulumi config set --secret --path`, it reaches the cluster
in the job's own Secret, which the pods read by secretKeyRef, and its plaintext is nowhere else: not in render's
files, not in the state (exported unencrypted), not in the stack's outputs."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from components.render import render, write
from components.resolution import resolve_file
from components.simulate import simulation
from tests.engine.conftest import Project
from tests.support.waiting import until

pytestmark = pytest.mark.engine

STACK = "secrets"
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
    - name: llama-finetune
      image: registry.example.com/training:v2.0
      command: [train.py]
      nodes: 2
      launcher: indexed
      env:
        WANDB_PROJECT: llama
        WANDB_API_KEY: {secretKeyRef: {name: wandb, key: api-key}}
"""
TOKEN = "hf_engineTierSecretValue0123456789abcd"
SECRET = "/api/v1/namespaces/training/secrets/llama-finetune-env"


def test_a_pulumi_secret_reaches_the_pods_through_the_jobs_own_secret_and_nowhere_in_the_clear(
    project: Project, tmp_path: Path
) -> None:
    project.stack_file(STACK).write_text(STACK_FILE)
    rendered = render(resolve_file(project.stack_file(STACK)))
    encoded = base64.b64encode(TOKEN.encode()).decode()
    with simulation.running(rendered, tmp_path / "cluster", with_platform=False) as cluster:
        client = cluster.client
        project.on_cluster(STACK, cluster.plane.kubeconfig)
        project.cli(
            "config", "set", "--secret", "--path", "gpu-training:jobs[0].env.HF_TOKEN", TOKEN, "-s", STACK
        )  # fmt: skip
        assert TOKEN not in project.stack_file(STACK).read_text()

        # render reads the stack file as it now is, and cannot decrypt: it names the Secret made at deploy.
        offline = render(resolve_file(project.stack_file(STACK)))
        files = write(offline, tmp_path / "rendered")
        text = "\n".join(p.read_text() for p in sorted((tmp_path / "rendered").rglob("*")) if p.is_file())
        assert files and TOKEN not in text and encoded not in text
        assert "Secret training/llama-finetune-env (HF_TOKEN)" in offline.summary()

        up = project.run(STACK, "up")
        assert up["ok"], up["error"]
        state = project.cli("stack", "export", "-s", STACK).stdout
        outputs = project.cli("stack", "output", "--json", "-s", STACK).stdout
        for where, content in {"state": state, "outputs": outputs, "up's outputs": json.dumps(up["outputs"])}.items():
            assert TOKEN not in content and encoded not in content, f"the secret is in the clear in {where}"
        assert "4dabf18193072939515e22adb298388d" in state  # the engine's secret signature: it holds ciphertext

        live = client.get(SECRET)
        assert live is not None and base64.b64decode(live["data"]["HF_TOKEN"]).decode() == TOKEN
        pods = until("the Job's pods made", lambda: client.list("v1", "Pod", "training"), wait=60)
        for pod in pods:
            env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
            assert env["HF_TOKEN"] == {
                "name": "HF_TOKEN",
                "valueFrom": {"secretKeyRef": {"name": "llama-finetune-env", "key": "HF_TOKEN"}},
            }
            assert env["WANDB_API_KEY"]["valueFrom"] == {"secretKeyRef": {"name": "wandb", "key": "api-key"}}
            assert TOKEN not in json.dumps(pod)

        again = project.run(STACK, "up", "--expect-no-changes")
        assert again["ok"], again["error"]
        assert again["steps"] == [], again["steps"]
