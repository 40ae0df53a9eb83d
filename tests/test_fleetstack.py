"""A fleet validated: its workers read from their own stack files or inline, each job with the workers MultiKueue may
send it to, and every mistake refused naming the file, line, key and why."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from components.cli import main
from components.errors import ConfigError
from components.fleetstack import FLEET_KEYS, manager_config, resolve_fleet_file, resolve_fleet_raw
from components.models import StackConfig
from components.resolution import resolve_file
from tests.support.fleets import EXAMPLE, JOB, WORKER, fleet_file, refused, worker
from tests.support.stacks import FLEET_FILES

REPO = Path(__file__).resolve().parents[1]


def test_the_example_fleet_sends_each_job_to_the_workers_of_its_queue_that_can_run_it() -> None:
    fleet = resolve_fleet_file(EXAMPLE)
    assert [w.name for w in fleet.workers] == ["p5-east", "p5-west", "a3mega", "dgx"]
    assert {q: [w.name for w in ws] for q, ws in fleet.queues.items()} == {
        "h100": ["p5-east", "p5-west"],
        "a3-mega": ["a3mega"],
        "ib": ["dgx"],
    }
    workers = {job.plan.name: job.workers for job in fleet.jobs}
    assert workers == {
        "llama-pretrain": ("p5-east", "p5-west"),
        "llama-sweep": ("p5-east",),
        "gemma-finetune": ("a3mega",),
        "ib-pretrain": ("dgx",),
    }
    sweep = next(job for job in fleet.jobs if job.plan.name == "llama-sweep")
    assert list(sweep.passed) == ["p5-west"] and "at most 4" in sweep.passed["p5-west"], "its queue never holds it"
    assert fleet.worker("dgx").inline and not fleet.worker("p5-east").inline


def test_a_worker_given_by_a_stack_file_is_that_stack_as_its_own_render_reads_it() -> None:
    fleet = resolve_fleet_file(EXAMPLE)
    own = resolve_file(EXAMPLE.parent / "Pulumi.p5-east.yaml")
    assert fleet.worker("p5-east").stack.config == own.config
    assert fleet.worker("p5-east").stack.pools == own.pools


def test_the_manager_runs_kueue_and_trainer_and_no_gpu() -> None:
    fleet = resolve_fleet_file(EXAMPLE)
    manager = fleet.manager
    assert manager.scheduler == "kueue" and manager.config.trainer.enabled
    assert not manager.pools and not manager.jobs and not manager.config.runs_gpu_operator
    assert manager.config.cluster == fleet.config.cluster


def test_workers_whose_queue_of_one_name_draws_on_other_pools_are_refused(tmp_path: Path) -> None:
    other = {"nodePools": [{"name": "a100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": {"pool": "a100"}}]}
    issues = refused(fleet_file(tmp_path, [worker(tmp_path, "a"), worker(tmp_path, "b", **other)], [JOB]))
    assert any(
        "fleet.workers[1].stackFile: queue research draws on pools a100 on worker b and h100 on worker a" in i
        for i in issues
    ), issues


def test_a_runtime_name_means_one_runtime_across_the_fleet(tmp_path: Path) -> None:
    # The same pool name, other GPUs per node: the manager cannot hold both h100-torch runtimes.
    other = {"nodePools": [{"name": "h100", "gpusPerNode": 4, "maxNodes": 4, "nodeSelector": {"pool": "h100"}}]}
    other["scheduler"] = {"type": "kueue", "queues": [{"name": "small", "gpus": 16, "namespaces": ["training"]}]}
    issues = refused(fleet_file(tmp_path, [worker(tmp_path, "a"), worker(tmp_path, "b", **other)], [JOB]))
    assert any("worker b's runtime h100-torch differs from worker a's" in i for i in issues), issues


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"scheduler": {"type": "volcano", "queues": [{"name": "research", "gpus": 32}]}}, "runs scheduler volcano"),
        ({"trainer": {"enabled": False}}, "runs no Kubeflow Trainer"),
        ({"scheduler": {"type": "kueue"}}, "declares no queue"),
    ],
)
def test_a_worker_stack_multikueue_cannot_dispatch_to_is_refused(tmp_path: Path, changes: dict, says: str) -> None:
    (issue,) = refused(fleet_file(tmp_path, [worker(tmp_path, "a", **changes)], []))
    assert "fleet.workers[0].stackFile: worker a:" in issue and says in issue


def test_a_worker_stack_file_mistake_is_located_in_that_file(tmp_path: Path) -> None:
    spec = worker(tmp_path, "a", nodePools=[{"name": "h100", "gpusPerNode": 0}])
    (issue,) = refused(fleet_file(tmp_path, [spec], []))
    assert issue.startswith(f"{tmp_path / 'Pulumi.a.yaml'}:") and "nodePools[0].gpusPerNode" in issue


def test_a_missing_worker_stack_file_is_refused_at_its_key(tmp_path: Path) -> None:
    spec = {"name": "a", "stackFile": "Pulumi.nope.yaml", "stackReference": "org/gpu-training/nope"}
    (issue,) = refused(fleet_file(tmp_path, [spec], []))
    assert "fleet.workers[0].stackFile: no such stack file: Pulumi.nope.yaml" in issue


def test_an_inline_workers_mistake_is_located_at_its_key_in_the_fleet_file(tmp_path: Path) -> None:
    keys = copy.deepcopy(WORKER)
    keys["nodePools"][0]["gpusPerNode"] = 0
    path = fleet_file(tmp_path, [{"name": "a", "config": keys}], [])
    (issue,) = refused(path)
    assert "fleet.workers[0].config.nodePools[0].gpusPerNode" in issue
    line = int(issue.split(":")[1])
    assert "gpusPerNode: 0" in path.read_text().splitlines()[line - 1]


def test_a_plain_text_kubeconfig_of_a_worker_is_refused(tmp_path: Path) -> None:
    spec = {**worker(tmp_path, "a"), "stackReference": None}
    spec["kubeconfig"] = "apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: abc}}]\n"
    del spec["stackReference"]
    (issue,) = refused(fleet_file(tmp_path, [spec], []))
    assert "fleet.workers[0].kubeconfig: a kubeconfig's contents" in issue and "in plain text" in issue


def test_a_workers_kubeconfig_as_a_pulumi_secret_or_a_path_is_taken(tmp_path: Path) -> None:
    spec = worker(tmp_path, "a")
    del spec["stackReference"]
    secret = fleet_file(tmp_path, [{**spec, "kubeconfig": {"secure": "AAABAciphertext"}}], [JOB])
    assert resolve_fleet_file(secret).workers[0].spec.kubeconfig == "[secret]"
    path = fleet_file(tmp_path, [{**spec, "kubeconfig": "~/.kube/worker-a.yaml"}], [JOB])
    assert resolve_fleet_file(path).jobs[0].workers == ("a",)


def test_keys_of_a_clusters_gpus_and_queues_are_refused_in_a_fleets_stack(tmp_path: Path) -> None:
    path = fleet_file(tmp_path, [worker(tmp_path, "a")], [], nodePools=WORKER["nodePools"])
    (issue,) = refused(path)
    assert "nodePools: a fleet's stack takes only " + ", ".join(FLEET_KEYS) in issue


def test_an_inline_worker_may_not_take_the_managers_cluster_name(tmp_path: Path) -> None:
    keys = copy.deepcopy(WORKER)
    keys["cluster"]["name"] = "manager"
    (issue,) = refused(fleet_file(tmp_path, [{"name": "a", "config": keys}], []))
    assert "fleet.workers[0].config.cluster.name: 'manager' is the cluster name of the manager too" in issue


def test_raw_keys_resolve_as_the_file_does() -> None:
    raw = {k.removeprefix("gpu-training:"): v for k, v in yaml.safe_load(EXAMPLE.read_text())["config"].items()}
    fleet = resolve_fleet_raw(raw, base_dir=EXAMPLE.parent)
    assert [j.workers for j in fleet.jobs] == [j.workers for j in resolve_fleet_file(EXAMPLE).jobs]


def test_a_fleets_stack_is_not_one_clusters_stack() -> None:
    with pytest.raises(ConfigError, match="fleet: makes this stack a fleet"):
        resolve_file(EXAMPLE)


def test_every_example_fleet_resolves() -> None:
    assert FLEET_FILES and all(resolve_fleet_file(path).jobs for path in FLEET_FILES)


def test_the_manager_config_keeps_the_fleets_cluster_add_ons_and_images() -> None:
    config = StackConfig.model_validate(
        {
            "cluster": {"provider": "existing", "name": "m"},
            "addons": {"install": False},
            "images": {"registryMirror": {"docker.io": "mirror.example.com/docker"}},
        }
    )
    manager = manager_config(config)
    assert (manager.cluster, manager.addons, manager.images) == (config.cluster, config.addons, config.images)
    assert manager.scheduler.type == "kueue" and manager.gpu_operator.enabled is False


def test_an_inline_workers_plain_kubeconfig_is_refused_with_the_fix_at_its_full_key(tmp_path: Path) -> None:
    keys = copy.deepcopy(WORKER)
    keys["cluster"]["kubeconfig"] = "apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: abc}}]\n"
    (issue,) = refused(fleet_file(tmp_path, [{"name": "a", "config": keys}], []))
    assert "fleet.workers[0].config.cluster.kubeconfig: a kubeconfig's contents" in issue
    assert "--path 'gpu-training:fleet.workers[0].config.cluster.kubeconfig'" in issue


def test_a_fleet_key_of_null_is_unset_and_the_stack_renders_as_one_cluster(tmp_path: Path) -> None:
    # Found by the mutation fuzz: `fleet: null` made the command read a fleet while resolve_file read a stack.
    stack = tmp_path / "Pulumi.one.yaml"
    text = (Path(__file__).resolve().parents[1] / "examples" / "minimal" / "Pulumi.gke-dws.yaml").read_text()
    stack.write_text(text.replace("config:\n", "config:\n  gpu-training:fleet: null\n", 1))
    assert main(["render", "--config", str(stack), "--out", str(tmp_path / "out")]) == 0
    assert main(["check", "--config", str(stack)]) != 2
    resolve_file(stack)
