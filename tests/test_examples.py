"""The workloads example: TrainingJobs placed on a platform stack's pools through a StackReference."""

from __future__ import annotations

import runpy
from pathlib import Path

import pulumi

from components.validation import resolve_file
from tests.support.pulumi_mocks import RecordingMonitor, run

REPO = Path(__file__).resolve().parents[1]


def test_workloads_take_their_pool_from_the_platform_stack(pulumi_mocks: RecordingMonitor) -> None:
    platform = resolve_file(REPO / "Pulumi.prod.yaml")
    pulumi_mocks.recording.stack_outputs["acme/gpu-training/prod"] = {
        "pools": {name: pool.to_config() for name, pool in platform.pools.items()},
        "scheduler": {"type": "volcano", "defaultQueue": "pretraining"},
        "kubeconfig": "apiVersion: v1\nkind: Config\n",
    }
    pulumi.runtime.set_mocks(
        pulumi_mocks.recording, project="gpu-training-workloads", stack="dev", preview=False, monitor=pulumi_mocks
    )
    pulumi.runtime.set_all_config({"gpu-training-workloads:platformStack": "acme/gpu-training/prod"})
    run(lambda: runpy.run_path(str(REPO / "examples" / "workloads" / "__main__.py")))

    (job,) = pulumi_mocks.of_type("kubernetes:kubeflow.org/v1:PyTorchJob")
    worker = job.inputs["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    container = worker["containers"][0]
    assert container["resources"]["limits"]["vpc.amazonaws.com/efa"] == 32
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert worker["nodeSelector"] == {"gpu-training/pool": "p5"}
    assert worker["schedulerName"] == "volcano"
    assert job.inputs["spec"]["runPolicy"]["schedulingPolicy"]["queue"] == "pretraining"
    (provider,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert job.provider.startswith(provider.urn)
