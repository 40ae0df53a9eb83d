"""`python -m components check`: the rules over a stack or rendered YAML, as a table or JSON, exit 1 on a mandatory finding."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from components.cli import main
from components.render import render
from components.resolution import resolve_file
from components.rules.pods import templates
from components.rules.rule import PRIVILEGED_NAMESPACES
from tests.rules.corpus import bad_objects

REPO = Path(__file__).resolve().parents[1]


STACK_FILES = sorted(REPO.glob("Pulumi.*.yaml")) + sorted((REPO / "examples" / "minimal").glob("Pulumi.*.yaml"))
FLEET_EXAMPLE = sorted((REPO / "examples" / "fleet").glob("Pulumi.*.yaml"))
"""The example fleet: its workers' stacks and the fleet's own, which check reviews cluster by cluster."""


EXPECTED_ADVICE = {
    "examples/minimal/Pulumi.gke-dws.yaml": [("gpu-pool-health-agent", "NodePool/a3")],
    "Pulumi.dev.yaml": [
        ("legacy-launcher", "MPIJob/training/nccl-allreduce"),
        ("legacy-launcher", "PyTorchJob/training/llama-finetune"),
    ],
}
"""Advice a stack file of ours is meant to get: GKE makes flex-start pools (DWS, queued provisioning) without
auto-repair (GKE's flex-start guide: --no-enable-autorepair), so nothing repairs their nodes, and check says so; the
dev stack keeps one job on each v1 operator, to show the legacy path still runs, and check says it is legacy."""


@pytest.mark.parametrize("stack_file", STACK_FILES + FLEET_EXAMPLE, ids=lambda p: str(p.relative_to(REPO)))
def test_our_stacks_pass(stack_file: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert main(["check", "--config", str(stack_file)]) == 0
    report = capsys.readouterr().out.splitlines()
    expected = EXPECTED_ADVICE.get(str(stack_file.relative_to(REPO)))
    if expected is not None:
        advice = [line.split()[:3] for line in report if line.startswith("advisory ")]
        assert advice == [["advisory", rule, subject] for rule, subject in expected], report
        summary = f"{len(expected)} findings, 0 mandatory"
        assert summary in report
        report = report[report.index(summary) :]
    else:
        assert report[0] == "no findings"
    workloads, with_gpus = (int(n) for n in re.findall(r"(\d+) workloads, (\d+) with GPUs", report[1])[0])
    assert with_gpus >= 1 and workloads >= with_gpus


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_only_our_node_agents_run_privileged(stack_file: Path) -> None:
    """Training jobs and fabric checks never run privileged; the GPUDirect installers and device injector that
    do are DaemonSets in a namespace privileged-containers exempts by default."""
    privileged = {
        (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        for obj in render(resolve_file(stack_file)).objects
        for t in templates(obj)
        for c in t.containers
        if (c.get("securityContext") or {}).get("privileged")
    }
    assert all(kind == "DaemonSet" and namespace in PRIVILEGED_NAMESPACES for kind, namespace, _ in privileged)


def write(tmp_path: Path, rule: str) -> Path:
    subjects, _ = bad_objects(rule)
    path = tmp_path / f"{rule}.yaml"
    path.write_text(yaml.safe_dump_all([s.data for s in subjects]))
    return path


def test_a_bad_manifest_fails_with_rule_object_message_and_fix(tmp_path: Path, capsys) -> None:
    assert main(["check", str(write(tmp_path, "nccl-socket-interface"))]) == 1
    out = capsys.readouterr().out
    assert "nccl-socket-interface" in out and "PyTorchJob/training/train" in out
    assert "NCCL bootstraps on eth0" in out and "fix: set NCCL_SOCKET_IFNAME" in out
    assert "legacy-launcher" in out, "a PyTorchJob: advice that it is on the legacy path"
    assert "2 findings, 1 mandatory\nread 2 objects: 1 workloads, 1 with GPUs" in out


def test_json_output_and_advisory_findings_exit_0(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "nccl-debug-production")
    assert main(["check", str(path), "--production", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert {(f["rule"], f["enforcement"]) for f in found} == {
        ("nccl-debug-production", "advisory"),
        ("legacy-launcher", "advisory"),
    }
    assert main(["check", str(path), "--format", "json"]) == 0
    assert [f["rule"] for f in json.loads(capsys.readouterr().out)] == ["legacy-launcher"]


def test_policy_config_sets_registries_and_levels(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"pinned-images": {"allowedRegistries": ["nvcr.io"]}}))
    assert main(["check", "--stack", "dev", "--policy-config", str(config)]) == 1
    assert "not from an allowed registry" in capsys.readouterr().out
    config.write_text(json.dumps({"pinned-images": {"enforcementLevel": "advisory", "allowedRegistries": ["nvcr.io"]}}))
    assert main(["check", "--stack", "dev", "--policy-config", str(config)]) == 0


def test_a_rendered_folder_is_checked_with_its_gang_scheduler(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert main(["render", "--stack", "dev", "--out", str(tmp_path / "dev")]) == 0
    training = tmp_path / "dev" / "training"
    pytorchjob = training / "pytorchjob-llama-finetune.yaml"
    document = yaml.safe_load(pytorchjob.read_text())
    del document["spec"]["runPolicy"]["schedulingPolicy"]
    pytorchjob.write_text(yaml.safe_dump(document))
    capsys.readouterr()
    assert main(["check", str(tmp_path / "dev")]) == 0, "the Training Operator, installed for Volcano, makes the gang"
    job = training / "job-fabric-check-h100.yaml"
    document = yaml.safe_load(job.read_text())
    del document["spec"]["template"]["spec"]["schedulerName"]
    job.write_text(yaml.safe_dump(document))
    capsys.readouterr()
    assert main(["check", str(tmp_path / "dev")]) == 1, (
        "Volcano is installed (helm/volcano.yaml): a bare Job joins a gang itself"
    )
    assert "gang-scheduling" in capsys.readouterr().out


def test_mistakes_are_reported_without_a_traceback(tmp_path: Path) -> None:
    bad_config = tmp_path / "policy.json"
    bad_config.write_text(json.dumps({"no-such-rule": {"enforcementLevel": "advisory"}}))
    result = subprocess.run(
        [sys.executable, "-m", "components", "check", "--stack", "dev", "--policy-config", str(bad_config)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown policy 'no-such-rule'" in result.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "components", "check", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr and "Traceback" not in missing.stderr


def test_a_rendered_eks_job_short_of_efa_is_caught_through_its_karpenter_pool(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    assert main(["render", "--stack", "prod", "--out", str(tmp_path / "prod")]) == 0
    job = tmp_path / "prod" / "training" / "trainjob-nccl-tests.yaml"
    document = yaml.safe_load(job.read_text())
    resources = document["spec"]["trainer"]["resourcesPerNode"]
    for section in resources.values():
        section["vpc.amazonaws.com/efa"] = 8
    job.write_text(yaml.safe_dump(document))
    capsys.readouterr()
    assert main(["check", str(tmp_path / "prod")]) == 1
    out = capsys.readouterr().out
    assert "fabric-attached" in out and "attaches 8 of 32 EFA devices of pool p5 (p5.48xlarge)" in out
    assert main(["check", str(job)]) == 0, "alone, the job's pool label tells nothing of its nodes"


def test_a_bad_file_is_an_error_naming_it_and_the_rest_of_the_folder_is_still_checked(tmp_path: Path, capsys) -> None:
    good_file = write(tmp_path, "nccl-socket-interface")
    (tmp_path / "chart.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }\n")
    (tmp_path / "envsubst.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: $NODES, template: {spec: {}}}\n"
    )
    assert main(["check", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert f"error: {tmp_path / 'chart.yaml'}: not YAML" in captured.err
    assert (
        f"error: {tmp_path / 'envsubst.yaml'}: document 1 (Job/j) is an unsubstituted template ($NODES at spec.parallelism)"
        in captured.err
    )
    assert "nccl-socket-interface" in captured.out, f"{good_file.name} is still checked"
    assert "Traceback" not in captured.err


def test_the_cluster_changes_what_is_required(tmp_path: Path, capsys) -> None:
    subjects, _ = bad_objects("gpu-placement")
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump_all([s.data for s in subjects if s.kind != "NodePool"]))
    assert main(["check", str(path), "--format", "json"]) == 0
    assert {f["enforcement"] for f in json.loads(capsys.readouterr().out)} == {"advisory"}
    assert main(["check", str(path), "--cluster", "eks", "--format", "json"]) == 0
    assert [f["rule"] for f in json.loads(capsys.readouterr().out)] == ["legacy-launcher"], "a PyTorchJob"
