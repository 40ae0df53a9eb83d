"""The fabric check in the Pulumi program, under mocks: after the add-ons, before the pool's jobs, awaited."""

from __future__ import annotations

from pathlib import Path

import yaml

import stacks
from tests.support.pulumi_mocks import RecordingMonitor, exported, run, use_stack

REPO = Path(__file__).resolve().parents[2]
# How the engine marks a secret value (pulumi.runtime.rpc's special signatures).
SECRET_SIG, SECRET_VALUE = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"
P5 = {
    "name": "p5",
    "instanceType": "p5.48xlarge",
    "minNodes": 2,
    "maxNodes": 8,
    "zone": "us-east-1a",
    "fabricCheck": {"minBusBandwidth": 123},
}


def p5_stack(monitor: RecordingMonitor, monkeypatch, tmp_path: Path) -> dict:
    """prod with its p5 pool keeping two nodes and a fabric check at 123 GB/s, run as `pulumi up` would."""
    monkeypatch.chdir(tmp_path)
    config = yaml.safe_load((REPO / "Pulumi.prod.yaml").read_text())["config"]
    config["gpu-training:nodePools"] = [P5]
    use_stack(monitor, tmp_path / "Pulumi.p5.yaml", config)
    return run(lambda: stacks.run(stacks.load()))


def test_the_gate_runs_after_the_nodes_and_every_install_and_the_pools_jobs_wait_for_it(
    pulumi_mocks: RecordingMonitor, monkeypatch, tmp_path: Path
) -> None:
    exports = p5_stack(pulumi_mocks, monkeypatch, tmp_path)

    (gate,) = pulumi_mocks.of_type("gpu-training:index:FabricCheck")
    job = pulumi_mocks.named("fabric-check-p5-job")
    assert job.parent == gate.urn
    container = job.inputs["spec"]["template"]["spec"]["containers"][0]
    variables = {e["name"]: e.get("value") for e in container["env"]}
    assert variables["FLOOR_GBS"] == "123" and variables["FI_PROVIDER"] == "efa"
    assert container["resources"]["limits"]["vpc.amazonaws.com/efa"] == "32"
    assert "hugepages-2Mi" not in container["resources"]["limits"]

    for install in ("gpu-operator", "aws-efa-k8s-device-plugin", "volcano"):
        assert pulumi_mocks.waits_for(job, pulumi_mocks.named(install).urn), install
    node_group = next(r for r in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup") if "p5" in r.name)
    assert pulumi_mocks.waits_for(job, node_group.urn), "the pool's nodes exist before the test asks for them"
    for supporting in ("fabric-check-p5-secret", "fabric-check-p5-configmap", "fabric-check-p5-service"):
        assert pulumi_mocks.named(supporting).urn in job.dependencies
    assert pulumi_mocks.waits_for(job, pulumi_mocks.named("namespace-training").urn)

    for workload in ("training-llama-pretrain-trainjob", "training-nccl-tests-trainjob"):
        assert pulumi_mocks.waits_for(pulumi_mocks.named(workload), job.urn), f"{workload} waits for the gate"

    assert job.create_timeout == "35m", "Pulumi waits past the Job's 30-minute deadline, so the Job's failure shows"
    assert job.inputs["metadata"]["annotations"] == {"pulumi.com/replaceUnready": "true"}

    secret = pulumi_mocks.named("fabric-check-p5-secret")
    data = secret.inputs["stringData"]
    assert data[SECRET_SIG] == SECRET_VALUE, "the private key stays a Pulumi secret"
    assert data["value"]["id_ed25519"].startswith("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    assert data["value"]["id_ed25519.pub"].startswith("ssh-ed25519 ")
    assert {"stringData", "data"} <= set(secret.ignore_changes), "the key made at create stays: no later up replaces it"

    result = exported(exports)["fabricChecks"]["p5"]
    assert result["enabled"] is True and result["passed"] is True
    assert result["minBusBandwidth"] == 123 and result["floorSource"] == "fabricCheck.minBusBandwidth"
    assert result["logs"] == "kubectl logs -n training job/fabric-check-p5"


def test_a_pool_that_scales_from_zero_gets_its_watcher_and_no_job_holds_its_jobs(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    use_stack(pulumi_mocks, REPO / "Pulumi.prod.yaml")
    exports = run(lambda: stacks.run(stacks.load()))
    (gate,) = pulumi_mocks.of_type("gpu-training:index:FabricCheck")
    children = {r.name: r for r in pulumi_mocks.registrations if r.parent == gate.urn}
    assert set(children) == {
        f"fabric-check-p5-{kind}"
        for kind in ("secret", "configmap", "service", "template", "serviceaccount", "role", "rolebinding",
                     "clusterrole", "clusterrolebinding", "cronjob")
    }  # fmt: skip
    assert not pulumi_mocks.of_type("kubernetes:batch/v1:Job"), "the watcher makes the Job when the nodes exist"
    secret = children["fabric-check-p5-secret"].urn
    assert secret in children["fabric-check-p5-cronjob"].dependencies, "the pods' key is there before they are"
    for workload in ("training-llama-pretrain-trainjob", "training-nccl-tests-trainjob"):
        assert not {r.urn for r in children.values()} & set(pulumi_mocks.named(workload).dependencies)
    result = exported(exports)["fabricChecks"]["p5"]
    assert result["enabled"] is True and result["when"] == "scale-up"
    assert result["result"] == "configmap training/fabric-check-p5-result"
