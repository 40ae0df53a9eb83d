"""`python -m components render`: offline, files per object, a summary, and no traceback on mistakes."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from components.cli import main
from components.render import MARKER
from tests.support.schemas import assert_valid

REPO = Path(__file__).resolve().parents[1]


def test_render_dev_writes_every_object_and_a_summary(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "dev"
    assert main(["render", "--stack", "dev", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "pool h100 (8x NVIDIA H100 80GB GPU, roce, " in printed
    assert "up to 4 nodes): 4 jobs, 13 pods, 96 GPUs" in printed
    assert "trainjob   training/llama-pretrain: 4 x 8 GPUs" in printed
    assert "runtime h100-torch" in printed
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml"))
    assert "training/pytorchjob-llama-finetune.yaml" in files
    assert "_cluster/queue-research.yaml" in files
    objects = [yaml.safe_load(p.read_text()) for p in out.rglob("*.yaml") if p.parent.name not in ("helm", "remote")]
    assert_valid(*objects)
    gpu_operator = yaml.safe_load((out / "helm" / "gpu-operator.yaml").read_text())
    assert gpu_operator["chart"] == "gpu-operator" and gpu_operator["version"] == "v26.7.0"
    assert gpu_operator["repository"] == "https://helm.ngc.nvidia.com/nvidia"
    assert gpu_operator["values"]["driver"]["rdma"]["enabled"] is False, "GPUDirect RDMA through DMA-BUF"
    assert gpu_operator["values"]["driver"]["kernelModuleType"] == "open"
    training = yaml.safe_load((out / "remote" / "training-operator.yaml").read_text())
    assert training["kind"] == "kustomize" and training["ref"] == "v1.9.4"
    assert "--gang-scheduler-name=volcano" in training["patches"]


def test_render_warns_of_gpus_sharing_a_rail_and_a_bare_hca_prefix(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert main(["render", "--stack", "dev", "--out", str(tmp_path / "dev")]) == 0
    rails = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: pool")]
    assert not rails, "dev attaches all 8 rails and names their devices"
    config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    config["gpu-training:nodePools"][0]["rails"] = 1
    config["gpu-training:nodePools"][0]["networks"] = ["roce-network"]
    config["gpu-training:network"]["networks"] = [
        {"name": "roce-network", "type": "macvlan", "master": "enp94s0f0", "ipam": {"range": "192.168.10.0/24"}}
    ]
    one_rail = tmp_path / "Pulumi.one-rail.yaml"
    one_rail.write_text(yaml.safe_dump({"config": config}))
    assert main(["render", "--config", str(one_rail), "--out", str(tmp_path / "one")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("warning: pool 'h100' (roce) has 1 rail for 8 GPUs per node (rails: 1)")
    assert err[1].startswith("warning: pool 'h100': NCCL_IB_HCA=mlx5 is a prefix")


def test_render_replaces_its_own_output_and_refuses_a_foreign_folder(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "out"
    assert main(["render", "--out", str(out)]) == 0
    (out / "training" / "stale.yaml").write_text("kind: Stale\n")
    assert main(["render", "--out", str(out)]) == 0
    assert not (out / "training" / "stale.yaml").exists() and (out / MARKER).exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["render", "--out", str(foreign)]) == 1
    assert (foreign / "notes.txt").read_text() == "keep me"
    assert "not empty and was not written by render" in capsys.readouterr().err


def test_a_config_mistake_prints_the_error_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    text = (REPO / "Pulumi.dev.yaml").read_text().replace("nodes: 4\n", "nodes: 40\n", 1)
    bad.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "components", "render", "--config", str(bad), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{bad}:" in result.stderr and "jobs[0].nodes: 40 nodes, but pool 'h100' has at most 4" in result.stderr


@pytest.mark.parametrize("stack", sorted(p.name.split(".")[1] for p in REPO.glob("Pulumi.*.yaml")))
def test_every_stack_renders_objects_that_validate(tmp_path: Path, monkeypatch, stack: str) -> None:
    monkeypatch.chdir(REPO)
    assert main(["render", "--stack", stack, "--out", str(tmp_path / stack)]) == 0
    objects = [
        yaml.safe_load(p.read_text())
        for p in (tmp_path / stack).rglob("*.yaml")
        if p.parent.name not in ("helm", "remote")
    ]
    assert objects
    assert_valid(*objects)
    for release in (tmp_path / stack / "helm").glob("*.yaml"):
        described = yaml.safe_load(release.read_text())
        assert described["version"] and described["namespace"] and described["chart"]


def test_simulate_without_go_says_how_to_get_it_and_exits_2(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PATH", str(tmp_path))  # no `go` anywhere
    monkeypatch.setenv("GPU_TRAINING_CACHE", str(tmp_path / "cache"))
    assert main(["simulate", "--stack", "dev"]) == 2
    err = capsys.readouterr().err
    assert "simulate builds its engines with Go >= 1.26" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--stack", "nope"], "no such stack file: Pulumi.nope.yaml"),
        (["--nodes", "0"], "--nodes: 0 is not at least 1"),
        (["--timeout", "soon"], "--timeout: 'soon' is not a whole number"),
        (["--stack", "dev", "--take-away", "east"], "--take-away names a worker of a fleet"),
        (
            ["--config", "examples/fleet/Pulumi.fleet.yaml", "--take-away", "nowhere"],
            "--take-away nowhere: the fleet's workers are p5-east, p5-west, a3mega, dgx",
        ),
        (["--config", "examples/fleet/Pulumi.fleet.yaml", "--keep"], "--keep and --nodes are for one stack"),
    ],
)
def test_simulate_usage_mistakes_exit_2_naming_the_mistake(args, says, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    try:
        code = main(["simulate", *args])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    assert code == 2
    assert says in capsys.readouterr().err


def test_render_warns_of_a_checkpoint_over_its_budget_on_stderr(tmp_path: Path, capsys) -> None:
    stack = tmp_path / "Pulumi.slow.yaml"
    stack.write_text(
        yaml.safe_dump(
            {
                "config": {
                    "gpu-training:cluster": {"provider": "aws", "name": "train", "region": "us-east-1"},
                    "gpu-training:nodePools": [{"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a"}],
                    "gpu-training:storage": {"volumes": [{"name": "ckpt", "backend": "efs", "size": "1Ti"}]},
                    "gpu-training:jobs": [
                        {
                            "name": "llama",
                            "image": "train:v1",
                            "command": ["train.py"],
                            "nodes": 2,
                            "checkpoint": {"claim": "ckpt", "size": "1.1T"},
                        }
                    ],
                }
            }
        )
    )
    assert main(["render", "--config", str(stack), "--out", str(tmp_path / "out")]) == 0
    warned = capsys.readouterr().err
    assert "warning: job training/llama: a checkpoint takes at least 1025 s, over checkpoint.maxSeconds (300)" in warned


def test_version_is_pyprojects(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert capsys.readouterr().out.strip() == f"gpu-training {pyproject['project']['version']}"


def test_no_command_prints_the_help(capsys) -> None:
    assert main([]) == 2
    printed = capsys.readouterr().out
    assert printed.startswith("usage: python -m components") and "render" in printed and "--version" in printed


def test_check_on_a_stack_file_checks_the_stack_it_renders(capsys, monkeypatch) -> None:
    """`check Pulumi.dev.yaml` reviews what the stack renders, as --config does, never an empty "no findings"."""
    monkeypatch.chdir(REPO)
    code = main(["check", "--config", "Pulumi.dev.yaml"])
    expected = capsys.readouterr().out
    assert main(["check", "Pulumi.dev.yaml"]) == code
    out, err = capsys.readouterr()
    assert out == expected and "read 0 objects" not in out
    assert "Pulumi.dev.yaml is a stack file: checking the objects it renders (as check --config" in err


def test_a_stack_file_among_manifests_is_named(capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    with pytest.raises(SystemExit):
        main(["check", "Pulumi.dev.yaml", "examples"])
    assert "Pulumi.dev.yaml is a stack file: check it alone (check --config Pulumi.dev.yaml)" in capsys.readouterr().err


def test_check_never_says_no_findings_beside_a_file_it_could_not_read(tmp_path: Path, capsys) -> None:
    (tmp_path / "bad.yaml").write_bytes(b"kind: Pod\nname: caf\xe9\n")
    assert main(["check", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "no findings" not in out and "no all clear" in out
    assert err.startswith(f"error: {tmp_path / 'bad.yaml'}:2: the file is not UTF-8 text: byte 0xe9 at line 2")
