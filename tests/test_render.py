"""Render's output folder: exactly this render's files, unchanged ones left as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.config import read_stack_file
from components.errors import ConfigError
from components.fabric import min_nccl, profile
from components.fabriccheck import home_namespace
from components.manifests import fabriccheck
from components.render import ELSEWHERE, ELSEWHERE_NOTE, MARKER, render, write
from components.resolution import resolve_file, resolve_raw
from tests.support.stacks import EXAMPLE_STACKS

REPO = Path(__file__).resolve().parents[1]


def test_a_second_render_rewrites_only_what_changed_and_removes_what_is_gone(tmp_path: Path) -> None:
    raw, _ = read_stack_file(REPO / "Pulumi.dev.yaml")
    out = tmp_path / "out"
    first = write(render(resolve_raw(raw)), out)
    before = {path: path.stat().st_mtime_ns for path in first}
    job = out / "training" / "pytorchjob-llama-finetune.yaml"
    claim = out / "training" / "persistentvolumeclaim-training-checkpoints.yaml"
    for path in (job, claim):
        path.write_text(path.read_text())  # same bytes, newer time
        before[path] = path.stat().st_mtime_ns
    (out / "stale" / "deep").mkdir(parents=True)
    (out / "stale" / "deep" / "old.yaml").write_text("kind: Old\n")

    raw["jobs"][0]["image"] = "registry.example.com/training:v3.0"
    second = write(render(resolve_raw(raw)), out)

    assert sorted(second) == sorted(first)
    assert "training:v3.0" in job.read_text() and job.stat().st_mtime_ns >= before[job]
    assert claim.stat().st_mtime_ns == before[claim], "an unchanged file is not rewritten"
    assert not (out / "stale").exists(), "files and folders of earlier renders are removed"
    assert {p for p in out.rglob("*") if p.is_file()} == {*second, out / MARKER}


def test_render_never_writes_into_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="not written by render"):
        write(render(resolve_file(REPO / "Pulumi.dev.yaml")), tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


STACK_FILES = sorted([*REPO.glob("Pulumi.*.yaml"), *EXAMPLE_STACKS])


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_pool_line_and_gate_state_the_nccl_its_fabric_settings_need(path: Path) -> None:
    # RoCE leaves the GID to NCCL (>= 2.21): the pool's line says so, and its gate fails an older NCCL.
    rendered = render(resolve_file(path))
    lines = rendered.summary().splitlines()
    for pool in rendered.stack.pools.values():
        (line,) = [line for line in lines if line.startswith(f"  pool {pool.name} (")]
        needed = min_nccl(pool.fabric, profile(pool, home_namespace(pool)).env)
        assert needed == ("2.21" if pool.fabric == "roce" else None)
        assert (f"needs NCCL >= {needed}" in line) == (needed is not None), line
    for check in rendered.stack.checks.values():
        # A scale-up check's Job waits in its template until the watcher creates it.
        objects = rendered.objects if check.when == "deploy" else fabriccheck.run(check)
        (job,) = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == check.name]
        variables = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert variables["MIN_NCCL"] == (min_nccl(check.pool.fabric, variables) or "")


@pytest.mark.parametrize("stack", ["dev", "prod", "gke"])
def test_each_job_is_a_workload_whose_objects_are_the_stacks_and_whose_last_object_makes_the_pods(stack) -> None:
    rendered = render(resolve_file(REPO / f"Pulumi.{stack}.yaml"))
    keys = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in rendered.objects]
    gates = [w for w in rendered.workloads if w.gate]
    assert len(gates) == len([c for c in rendered.stack.checks.values() if c.when == "deploy"])
    assert rendered.workloads[: len(gates)] == tuple(gates), "the fabric checks first: the jobs wait for them"
    assert [w.plan.name for w in rendered.workloads if not w.gate] == [p.name for p in rendered.stack.jobs]
    for workload in rendered.workloads:
        for obj in workload.objects:
            assert (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]) in keys
        assert workload.workload["metadata"]["name"] == workload.plan.name
        assert workload.workload["kind"] in ("Job", "PyTorchJob", "MPIJob", "TFJob", "TrainJob")
        mpi = workload.plan.spec.launcher == "mpi"
        assert workload.pods == workload.plan.nodes + (1 if mpi else 0)


def test_add_ons_installed_elsewhere_are_rendered_as_before_and_marked_so(tmp_path: Path) -> None:
    raw, _ = read_stack_file(REPO / "Pulumi.dev.yaml")
    ours = render(resolve_raw(raw))
    theirs = render(resolve_raw({**raw, "addons": {"install": False}}))
    plan = (ours.addons.releases, ours.addons.remotes, ours.addons.objects, ours.addons.patches.keys())
    assert (theirs.addons.releases, theirs.addons.remotes, theirs.addons.objects, theirs.addons.patches.keys()) == plan
    assert theirs.objects == ours.objects, "the same plan and objects"

    line = next(line for line in theirs.summary().splitlines() if line.startswith("add-ons"))
    names = [r.name for r in ours.addons.remotes] + [r.name for r in ours.addons.releases]
    assert line == f"add-ons to install elsewhere (addons.install: false): {', '.join(names)}"
    assert f"add-ons: {', '.join(names)}" in ours.summary().splitlines()

    written = write(ours, tmp_path / "ours")
    elsewhere = write(theirs, tmp_path / "theirs")
    notes = [tmp_path / "theirs" / folder / ELSEWHERE for folder in ("helm", "remote")]
    assert sorted(elsewhere) == sorted(
        [*(tmp_path / "theirs" / p.relative_to(tmp_path / "ours") for p in written), *notes]
    )
    assert all(n.read_text() == ELSEWHERE_NOTE for n in notes)
    for path in written:
        assert path.read_bytes() == (tmp_path / "theirs" / path.relative_to(tmp_path / "ours")).read_bytes()

    write(ours, tmp_path / "theirs")
    assert not any(n.exists() for n in notes), "installing them again removes the notes"


@pytest.mark.parametrize("stack", ["dev", "gke"])
def test_every_job_line_is_followed_by_what_one_node_fault_costs_it(stack: str) -> None:
    rendered = render(resolve_file(REPO / f"Pulumi.{stack}.yaml"))
    lines = rendered.summary().splitlines()
    for plan in rendered.stack.jobs:
        index = next(i for i, line in enumerate(lines) if f" {plan.namespace}/{plan.name}: " in line)
        assert lines[index + 1].startswith("      node fault: "), lines[index + 1]
    trainjobs = [line for i, line in enumerate(lines) if i and "trainjob " in lines[i - 1]]
    assert all("counted against no retry limit" in line for line in trainjobs), trainjobs


def test_each_job_with_a_checkpoint_states_its_volumes_throughput_and_the_time_one_takes() -> None:
    prod = render(resolve_file(REPO / "Pulumi.prod.yaml")).summary()
    assert (
        "      checkpoint: 1.1T to training/checkpoints (fsx-lustre): 12.9 GB/s (volume 12.9 GB/s (26400 GiB x 500 "
        "MB/s/TiB); 8 nodes x 12.5 GB/s (100 Gbps: a network card's share)) -> at least 86 s (budget 300 s)"
    ) in prod.splitlines()
    assert "cloud add-ons the stack enables: aws-mountpoint-s3-csi-driver v2.7.0-eksbuild.1" in prod
    assert (
        "made at deploy time, once the file systems and buckets exist: PersistentVolume for training/checkpoints, "
        "PersistentVolume for training/dataset"
    ) in prod
    gke = render(resolve_file(REPO / "Pulumi.gke.yaml")).summary()
    assert "checkpoint: 440G to training/checkpoints (gcs): 50.0 GB/s (2 nodes x 25.0 GB/s" in gke
    assert "cloud add-ons the stack enables: Cloud Storage FUSE CSI driver (GKE add-on" in gke


def test_a_checkpoint_on_managed_lustre_states_the_instances_throughput_and_its_add_on() -> None:
    summary = render(resolve_file(REPO / "examples" / "minimal" / "Pulumi.gke-lustre.yaml")).summary()
    assert (
        "      checkpoint: 1.1T to training/checkpoints (managed-lustre): 17.6 GB/s (volume 17.6 GB/s (18000 GiB x 1000 "
        "MB/s/TiB); 2 nodes x 25.0 GB/s (200 Gbps: eth0, beside the GPU NICs)) -> at least 63 s (budget 300 s)"
    ) in summary.splitlines()
    assert (
        "made at deploy time, once the file systems and buckets exist: PersistentVolume for training/checkpoints"
        in (summary)
    )
    assert (
        "cloud add-ons the stack enables: Managed Lustre CSI driver (GKE add-on, at the cluster's version)" in summary
    )


def test_a_checkpoint_over_its_budget_is_a_warning_saying_what_would_be_faster() -> None:
    config = {
        "cluster": {"provider": "aws", "name": "train", "region": "us-east-1"},
        "nodePools": [{"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a"}],
        "storage": {"volumes": [{"name": "ckpt", "backend": "efs", "size": "1Ti"}]},
        "jobs": [
            {
                "name": "llama",
                "image": "train:v1",
                "command": ["train.py"],
                "nodes": 2,
                "checkpoint": {"claim": "ckpt", "size": "1.1T", "maxSeconds": 600},
            }
        ],
    }
    rendered = render(resolve_raw(config))
    assert "-> at least 1025 s, over its 600 s budget" in rendered.summary()
    assert rendered.warnings() == [
        "job training/llama: a checkpoint takes at least 1025 s, over checkpoint.maxSeconds (600): EFS writes "
        "1-5 GiB/s: put checkpoints on fsx-lustre or s3, or save asynchronously"
    ]
    config["jobs"][0]["checkpoint"]["maxSeconds"] = 1100
    assert render(resolve_raw(config)).warnings() == []


def test_a_slow_managed_lustre_checkpoint_is_told_to_grow_the_instance() -> None:
    config = {
        "cluster": {"provider": "gcp", "name": "train", "project": "my-project", "region": "us-central1"},
        "nodePools": [{"name": "a3", "machineType": "a3-megagpu-8g", "zone": "us-central1-a", "maxNodes": 8}],
        "storage": {
            "volumes": [{"name": "ckpt", "backend": "managed-lustre", "size": "72000Gi", "throughputPerTiB": 125}]
        },
        "jobs": [
            {
                "name": "llama",
                "image": "train:v1",
                "command": ["train.py"],
                "nodes": 8,
                "checkpoint": {"claim": "ckpt", "size": "4T", "maxSeconds": 300},
            }
        ],
    }
    (warning,) = render(resolve_raw(config)).warnings()
    assert warning.startswith("job training/llama: a checkpoint takes at least 456 s, over checkpoint.maxSeconds (300)")
    assert warning.endswith(
        "a larger instance (its capacity grows in place), or save asynchronously; a higher throughputPerTiB takes a "
        "new instance"
    )
