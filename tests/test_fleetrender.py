"""Render of a fleet: the manager's objects and each worker's, each laid out as a stack's render is, every one
valid, no kubeconfig or token among them, a summary naming each job's workers, and `check` clean over them."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import credentials
from components.addons.scheduler import MULTIKUEUE_FRAMEWORKS, manager_config
from components.cli import main
from components.fleetobjects import manager_addons, manager_objects, worker_objects
from components.fleetrender import render_fleet, write_fleet
from components.fleetstack import resolve_fleet_file
from components.render import MARKER, render, write
from components.resolution import resolve_file
from tests.support.schemas import assert_valid

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "fleet" / "Pulumi.fleet.yaml"
WORKERS = ("p5-east", "p5-west", "a3mega", "dgx")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The example fleet rendered by the command line: its output folder and what it printed."""
    out = tmp_path_factory.mktemp("fleet") / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["render", "--config", str(EXAMPLE), "--out", str(out)]) == 0
    return out, printed.getvalue()


def _objects(folder: Path) -> list[dict[str, Any]]:
    return [
        yaml.safe_load(p.read_text()) for p in sorted(folder.rglob("*.yaml")) if p.parent.name not in ("helm", "remote")
    ]


def test_the_manager_and_each_worker_get_a_folder_of_their_own(rendered: tuple[Path, str]) -> None:
    out, _ = rendered
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER, "manager", "workers"])
    assert sorted(p.name for p in (out / "workers").iterdir()) == sorted(WORKERS)
    assert {p.name for p in (out / "manager" / "helm").iterdir()} == {"kueue.yaml", "kubeflow-trainer.yaml"}
    assert not (out / "workers" / "p5-east" / "helm").exists(), "its own stack installs its add-ons"
    assert (out / "workers" / "dgx" / "helm" / "kueue.yaml").is_file(), "the fleet deploys the inline worker"


def test_every_object_validates_the_multikueue_kinds_against_kueues_module(rendered: tuple[Path, str]) -> None:
    out, _ = rendered
    objects = _objects(out)
    kinds = {o["kind"] for o in objects}
    assert {"MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "TrainJob", "ClusterRole"} <= kinds
    assert_valid(*objects)


def test_no_kubeconfig_or_token_is_in_any_file(rendered: tuple[Path, str]) -> None:
    out, _ = rendered
    for path in out.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text()
        assert not re.search(r"\b(token|client-key-data|client-certificate-data)\s*:", text), path
        assert not [s.what for s in credentials.SHAPES if s.pattern.search(text)], path
    secrets = [o for o in _objects(out) if o["kind"] == "Secret"]
    assert secrets and all(s["type"] == "kubernetes.io/service-account-token" and "data" not in s for s in secrets)
    assert not [o for o in _objects(out / "manager") if o["kind"] == "Secret"], "made only by pulumi up"


def test_the_summary_names_each_jobs_workers_and_what_only_pulumi_up_makes(rendered: tuple[Path, str]) -> None:
    _, printed = rendered
    assert "job training/llama-pretrain: 4 x 8 GPUs on queue h100, runtime p5-torch: can run on p5-east, p5-west" in (
        printed
    )
    assert "job training/llama-sweep: 8 x 8 GPUs on queue h100, runtime p5-torch: can run on p5-east\n" in printed
    assert "never on p5-west (its queue cannot hold it)" in printed
    assert "queue h100: MultiKueue offers its jobs to p5-east, p5-west" in printed
    assert "kueue-system/multikueue-p5-east" in printed and "key kubeconfig" in printed


def test_each_job_is_on_the_manager_for_multikueue_with_its_runtime_and_queue(rendered: tuple[Path, str]) -> None:
    out, _ = rendered
    manager = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in _objects(out / "manager")}
    jobs = [o for o in manager.values() if o["kind"] == "TrainJob"]
    assert len(jobs) == 4
    fleet = resolve_fleet_file(EXAMPLE)
    for job in jobs:
        assert job["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
        runtime = job["spec"]["runtimeRef"]["name"]
        assert ("ClusterTrainingRuntime", None, runtime) in manager
        queue = job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
        namespace = job["metadata"]["namespace"]
        assert ("LocalQueue", namespace, queue) in manager and ("ClusterQueue", None, queue) in manager
        dispatch = next(d for d in fleet.jobs if d.plan.name == job["metadata"]["name"])
        for name in dispatch.workers:  # every worker it may go to has its runtime and its LocalQueue
            worker = fleet.worker(name)
            assert worker.of_kind("ClusterTrainingRuntime")[runtime] == manager["ClusterTrainingRuntime", None, runtime]
            assert (namespace, queue) in worker.local_queues()


def test_the_manager_runs_kueue_for_trainjobs_only_without_waiting_for_pods() -> None:
    fleet = resolve_fleet_file(EXAMPLE)
    (kueue,) = [r for r in manager_addons(fleet).releases if r.name == "kueue"]
    config = yaml.safe_load(kueue.values["managerConfig"]["controllerManagerConfigYaml"])
    assert (
        config["integrations"]
        == {"frameworks": list(MULTIKUEUE_FRAMEWORKS)}
        == {"frameworks": ["trainer.kubeflow.org/trainjob"]}
    )
    assert "waitForPodsReady" not in config and config["fairSharing"]
    assert yaml.safe_load(manager_config([])) == config


def test_the_inline_worker_gets_its_whole_stack_and_the_others_only_multikueues_access() -> None:
    fleet = resolve_fleet_file(EXAMPLE)
    dgx, installs = worker_objects(fleet, fleet.worker("dgx"))
    own = render(fleet.worker("dgx").stack)
    assert dgx[: len(own.objects)] == list(own.objects) and installs == own.addons
    east, installs = worker_objects(fleet, fleet.worker("p5-east"))
    assert [o["kind"] for o in east] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret"]
    assert not installs.releases and not installs.remotes


def test_a_worker_stack_renders_as_itself_beside_the_fleet(tmp_path: Path) -> None:
    stack = resolve_file(EXAMPLE.parent / "Pulumi.p5-east.yaml")
    assert write(render(stack), tmp_path / "p5-east"), "a worker's own stack renders and deploys on its own"


def test_render_replaces_an_earlier_render_and_drops_a_worker_gone(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write(render(resolve_file(REPO / "Pulumi.dev.yaml")), out)
    (out / "workers" / "gone").mkdir(parents=True)
    (out / "workers" / "gone" / "old.yaml").write_text("kind: Old\n")
    files = write_fleet(render_fleet(resolve_fleet_file(EXAMPLE)), out)
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER, "manager", "workers"])
    assert sorted(p.name for p in (out / "workers").iterdir()) == sorted(WORKERS)
    assert {p for p in out.rglob("*") if p.is_file() and p.name != MARKER} == set(files)
    again = write_fleet(render_fleet(resolve_fleet_file(EXAMPLE)), out)
    assert sorted(again) == sorted(files)


def test_render_never_writes_a_fleet_into_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    assert main(["render", "--config", str(EXAMPLE), "--out", str(tmp_path)]) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_check_reviews_the_output_and_the_fleet_clean(rendered: tuple[Path, str], capsys) -> None:
    out, _ = rendered
    assert main(["check", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", "--config", str(EXAMPLE)]) == 0
    assert capsys.readouterr().out.startswith("no findings")


def test_the_managers_objects_are_the_same_on_every_render() -> None:
    fleet = resolve_fleet_file(EXAMPLE)
    assert manager_objects(fleet) == manager_objects(resolve_fleet_file(EXAMPLE))
