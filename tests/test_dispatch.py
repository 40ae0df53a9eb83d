"""Where a fleet's jobs may go: each job on each worker that has its queue, planned as that worker's stack plans it;
a worker that could admit it but not run it, or no worker at all, refused with each worker's reason."""

from __future__ import annotations

from pathlib import Path

import yaml

from components.fleetstack import resolve_fleet_file
from tests.support.fleets import JOB, fleet_file, refused, worker


def test_a_job_no_worker_can_run_is_refused_naming_each_workers_pool_and_why(tmp_path: Path) -> None:
    workers = [worker(tmp_path, "a"), worker(tmp_path, "b")]
    path = fleet_file(tmp_path, workers, [{**JOB, "gpusPerNode": 16}])
    (issue,) = refused(path)
    assert issue.startswith(f"{path}:") and "jobs[0]: no worker of the fleet can run it" in issue
    assert "worker a (h100 (8x GPU, tcp, up to 4 nodes))" in issue and "worker b (" in issue
    line = int(issue.split(":")[1])
    assert yaml.safe_load("\n".join(path.read_text().splitlines()[line - 1 :][:1]).strip("- ")) is not None


def test_a_job_whose_queue_no_worker_has_is_refused_at_its_queue(tmp_path: Path) -> None:
    path = fleet_file(tmp_path, [worker(tmp_path, "a")], [{**JOB, "scheduler": {"queue": "prod"}}])
    (issue,) = refused(path)
    assert "jobs[0].scheduler.queue: no worker has queue prod in namespace training" in issue
    assert "queues by worker: a: research in training" in issue


def test_a_job_in_a_namespace_without_its_queue_is_refused_at_its_namespace(tmp_path: Path) -> None:
    path = fleet_file(tmp_path, [worker(tmp_path, "a")], [{**JOB, "namespace": "research"}])
    (issue,) = refused(path)
    assert "jobs[0].namespace: no worker has queue research in namespace research" in issue


def test_a_worker_of_the_queue_that_could_admit_the_job_but_not_run_it_is_refused(tmp_path: Path) -> None:
    # Worker b has the queue but no claim `data`: MultiKueue could send it the job, whose pods would never start.
    volumes = {
        "volumes": [
            {"name": "data", "namespace": "training", "backend": "nfs", "server": "n", "share": "/d", "size": "1Ti"}
        ]
    }
    workers = [worker(tmp_path, "a", storage=volumes), worker(tmp_path, "b")]
    job = {**JOB, "volumes": [{"claim": "data", "mountPath": "/data"}]}
    (issue,) = refused(fleet_file(tmp_path, workers, [job]))
    assert "worker b has queue research in namespace training, so MultiKueue may send the job there" in issue


def test_a_worker_whose_queue_never_holds_the_job_is_passed_not_refused(tmp_path: Path) -> None:
    small = {"nodePools": [{"name": "h100", "gpusPerNode": 8, "maxNodes": 1, "nodeSelector": {"pool": "h100"}}]}
    fleet = resolve_fleet_file(fleet_file(tmp_path, [worker(tmp_path, "a"), worker(tmp_path, "b", **small)], [JOB]))
    (job,) = fleet.jobs
    assert job.workers == ("a",) and list(job.passed) == ["b"]


def test_a_v1_launcher_is_refused_as_not_what_multikueue_dispatches_here(tmp_path: Path) -> None:
    (issue,) = refused(fleet_file(tmp_path, [worker(tmp_path, "a")], [{**JOB, "launcher": "pytorch"}]))
    assert "jobs[0].launcher: a fleet dispatches TrainJobs" in issue


def test_a_job_naming_no_queue_takes_the_first_queue_of_the_first_worker(tmp_path: Path) -> None:
    second = {"scheduler": {"type": "kueue", "queues": [{"name": "batch", "gpus": 32, "namespaces": ["training"]}]}}
    second["nodePools"] = [{"name": "a100", "gpusPerNode": 8, "maxNodes": 4, "nodeSelector": {"pool": "a100"}}]
    fleet = resolve_fleet_file(fleet_file(tmp_path, [worker(tmp_path, "a"), worker(tmp_path, "b", **second)], [JOB]))
    assert fleet.jobs[0].queue == "research" and fleet.jobs[0].workers == ("a",)
