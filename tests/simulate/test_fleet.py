"""A fleet on one machine (components/simulate/fleet.py, through `simulate`): a fleet stack file rendered as `render`
renders it (components/fleetrender.py), its manager's real Kueue dispatching the TrainJobs with MultiKueue to two
workers, each its own stack's control plane with kwok GPU nodes of its own shapes and the real Kueue, Trainer and
JobSet.

east has one pool of 8-GPU H100 nodes (six of them); west has two H100 nodes and two A100 nodes, each pool behind its
own queue. A 4-node H100 job fits only east's queue, an A100 job only west's, a 2-node H100 job either. Every
assertion reads the clusters: the manager's Workloads, the workers' pods and the nodes they run on.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.cli.simulate import fleet_stacks, simulate
from components.simulate import fleet

WAIT = 90.0
SELECTOR = "gpu-training.example/pool"


def _pool(name: str, instance: str, nodes: int) -> dict[str, Any]:
    return {"name": name, "instanceType": instance, "maxNodes": nodes, "nodeSelector": {SELECTOR: name}}


def _job(name: str, queue: str, nodes: int) -> dict[str, Any]:
    image = "registry.example.com/training:v2.0"
    return {
        "name": name,
        "image": image,
        "command": ["train.py"],
        "nodes": nodes,
        "nodePool": queue,
        "scheduler": {"queue": queue},
    }


WORKERS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "east": ([_pool("h100", "p5.48xlarge", 6)], [{"name": "h100", "gpus": 48, "namespaces": ["training"]}]),
    "west": (
        [_pool("h100", "p5.48xlarge", 2), _pool("a100", "p4d.24xlarge", 2)],
        [
            {"name": "h100", "gpus": 16, "namespaces": ["training"], "pools": ["h100"]},
            {"name": "a100", "gpus": 16, "namespaces": ["training"], "pools": ["a100"]},
        ],
    ),
}
"""Each worker's pools and queues: east six 8-GPU H100 nodes, west two H100 and two A100 nodes."""
JOBS = {
    "east-only": _job("east-only", "h100", 4),
    "either": _job("either", "h100", 2),
    "west-only": _job("west-only", "a100", 2),
}


def _fleet_file(folder: Path, jobs: list[str]) -> Path:
    """A fleet stack file (the manager an existing cluster, each worker a stack file of its own) and its workers'."""
    for name, (pools, queues) in WORKERS.items():
        config = {
            "gpu-training:cluster": {"provider": "existing", "name": name},
            "gpu-training:nodePools": pools,
            "gpu-training:scheduler": {"type": "kueue", "queues": queues},
            "gpu-training:namespaces": [{"name": "training"}],
        }
        (folder / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    workers = [
        {"name": name, "stackFile": f"Pulumi.{name}.yaml", "stackReference": f"organization/gpu-training/{name}"}
        for name in WORKERS
    ]
    config = {
        "gpu-training:cluster": {"provider": "existing", "name": "manager"},
        "gpu-training:fleet": {"workers": workers},
        "gpu-training:jobs": [JOBS[name] for name in jobs],
    }
    path = folder / "Pulumi.fleet.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def _no_jobset_on_the_manager(run: fleet.Fleet) -> None:
    """The manager's Trainer leaves a TrainJob MultiKueue manages alone (kubeflow/trainer v2.3.0
    pkg/controller/trainjob_controller.go:89): no JobSet, no pod there."""
    client = run.manager.client
    assert client.list("jobset.x-k8s.io/v1alpha2", "JobSet", "training") == []
    assert client.list("v1", "Pod", "training") == []


@pytest.mark.simulate
def test_each_job_is_dispatched_to_a_worker_that_can_run_it_and_runs_whole_there(
    binaries: dict[str, Path], etcd_seed: Path, tmp_path: Path
) -> None:
    path = _fleet_file(tmp_path, list(JOBS))
    text, code = simulate(path, "fleet", nodes=None, timeout=WAIT, keep=False, output="json")
    report = json.loads(text)
    print(text)
    assert code == 0 and report["ok"], text
    assert "worker east: reached as ServiceAccount kueue-system/gpu-training-multikueue" in " ".join(report["notes"])
    jobs = {j["job"]: j for j in report["jobs"]}
    assert all(j["whole"] and j["podsRunning"] == j["podsExpected"] > 0 for j in jobs.values()), text
    assert jobs["training/east-only"]["worker"] == "east", text
    assert jobs["training/west-only"]["worker"] == "west", text
    assert jobs["training/either"]["worker"] in ("east", "west"), text
    assert jobs["training/west-only"]["pools"] == ["a100"]
    assert jobs["training/east-only"]["pools"] == jobs["training/either"]["pools"] == ["h100"]
    assert not any(j["redispatchedFrom"] for j in jobs.values()), text
    assert all(j["manager"].startswith("admitted") for j in jobs.values()), text


@pytest.mark.simulate
def test_a_job_whose_worker_is_taken_away_is_dispatched_again_to_the_other(
    binaries: dict[str, Path], etcd_seed: Path, tmp_path: Path
) -> None:
    manager, workers = fleet_stacks(_fleet_file(tmp_path, ["either"]))
    with fleet.running(manager, workers, tmp_path / "run", progress=print) as run:
        run.submit()
        first = run.wait(WAIT)["training/either"]
        assert first.whole, run.report()
        lost = first.worker
        assert lost is not None
        run.take_away(lost)
        again = run.wait(WAIT)["training/either"]
        print(run.report())
        assert again.whole and again.worker not in (None, lost), run.report()
        assert again.redispatched_from == [lost], run.report()
        assert again.pools == ["h100"]
        _no_jobset_on_the_manager(run)


def test_the_kubeconfig_a_worker_is_reached_with_holds_its_ca_and_token_inline() -> None:
    # Kueue v0.19.2 refuses a MultiKueue kubeconfig that names a file (multikueuecluster.go:956-999).
    text = fleet.kubeconfig("https://127.0.0.1:6443", b"-----BEGIN CERTIFICATE-----\n", "t0ken", "east")
    config = yaml.safe_load(text)
    [cluster] = config["clusters"]
    assert cluster["cluster"] == {
        "server": "https://127.0.0.1:6443",
        "certificate-authority-data": base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode(),
    }
    assert config["users"] == [{"name": "east", "user": {"token": "t0ken"}}]
    assert "certificate-authority:" not in text and "tokenFile" not in text and "insecure" not in text


def test_only_trainjobs_multikueue_manages_are_held_back_for_dispatch() -> None:
    job = {"kind": "TrainJob", "metadata": {"name": "a", "namespace": "training"}, "spec": {}}
    assert not fleet.dispatched(job)
    assert fleet.dispatched({**job, "spec": {"managedBy": "kueue.x-k8s.io/multikueue"}})
    assert not fleet.dispatched({**job, "spec": {"managedBy": "trainer.kubeflow.org/trainjob-controller"}})
    assert not fleet.dispatched({"kind": "ClusterQueue", "metadata": {"name": "h100"}, "spec": {}})


def test_a_jobs_report_line_says_where_it_ran_how_soon_and_which_worker_it_left() -> None:
    moved = fleet.Job("training/either", "west", 9.0, ["east"], 2, 2, ["h100-0", "h100-1"], ["h100"], "admitted")
    assert moved.whole
    assert moved.line() == (
        "training/either: on west, placed whole in 9.0 s after east was lost (2/2 pods on h100; manager: admitted); "
        "re-dispatched from east"
    )
    stuck = fleet.Job("training/big", None, expected=8, state="pending", reason="insufficient quota")
    assert not stuck.whole
    assert stuck.line() == (
        "training/big: on no worker, not whole (0/8 pods on no pool; manager: pending); insufficient quota"
    )


def test_a_job_no_worker_left_can_take_is_said_taken_not_re_dispatched() -> None:
    orphan = fleet.Job("training/big", None, None, ["east"], expected=8, state="pending", reason="no worker left")
    assert orphan.line() == (
        "training/big: on no worker, not whole (0/8 pods on no pool; manager: pending); taken from east; no worker left"
    )
