"""Which launcher a job runs on: TrainJob by default where Trainer runs, the v1 operators only where a job uses
them, and a stack deployed by an earlier release keeping its jobs' kinds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import stacks
from components import launchers
from components.config import parse_stack
from components.errors import ConfigError
from components.launchers import Deployed
from components.render import render
from components.resolution import resolve
from tests.support.pulumi_mocks import RecordingMonitor, use_stack
from tests.support.stacks import variant
from tests.test_config import BASE, stack

REPO = Path(__file__).resolve().parents[1]

DEPLOYED = {
    "jobs": {"training/llama-finetune": {"workload": "PyTorchJob/training/llama-finetune", "worldSize": 16}},
    "addons": ["gpu-operator", "mpi-operator", "training-operator", "volcano"],
}
"""The outputs a stack of release 0.2 left: its job a PyTorchJob, both v1 operators installed."""


def _unnamed(**changes: Any) -> dict[str, Any]:
    """The base stack, its job naming no launcher."""
    raw = stack(**changes)
    del raw["jobs"][0]["launcher"]
    return raw


def _kinds(raw: dict[str, Any], deployed: Deployed | None = None) -> list[str]:
    """The kinds of the stack's training jobs (not its fabric check's Job or CronJob)."""
    objects = render(resolve(parse_stack(raw), deployed=deployed)).objects
    return [o["kind"] for o in objects if o["kind"] in ("TrainJob", "PyTorchJob", "Job") and "fabric" not in str(o)]


def test_a_job_that_names_no_launcher_is_a_trainjob_on_its_pools_runtime() -> None:
    resolved = resolve(parse_stack(_unnamed()))
    (plan,) = resolved.jobs
    assert plan.spec.launcher == "trainjob" and resolved.config.trainer.enabled
    assert not resolved.config.training_operator.enabled and not resolved.config.training_operator.mpi
    (job,) = [o for o in render(resolved).objects if o["kind"] == "TrainJob"]
    assert job["spec"]["runtimeRef"]["name"] == "h100-torch"


@pytest.mark.parametrize(
    ("runtime", "command"),
    [("torch", "torchrun"), ("deepspeed", "mpirun"), ("mpi", "mpirun"), ("tensorflow", "sh")],
)
def test_each_family_is_a_trainjob_by_its_runtime(runtime: str, command: str) -> None:
    raw = _unnamed(jobs__0__runtime=runtime)
    (job,) = [o for o in render(resolve(parse_stack(raw))).objects if o["kind"] == "TrainJob"]
    assert job["spec"]["trainer"]["command"][0] == command


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("elastic", {"minNodes": 2, "maxNodes": 4}, "no elastic TrainJob"),
        ("envFrom", [{"secretRef": "s3"}], "no envFrom"),
        ("restartPolicy", "OnFailure", "restarts as a whole"),
        ("ttlSecondsAfterFinished", 60, "no TTL"),
    ],
)
def test_what_trainer_lacks_keeps_the_job_a_pytorchjob_and_says_why(field: str, value: Any, why: str) -> None:
    raw = _unnamed()
    raw["jobs"][0][field] = value
    resolved = resolve(parse_stack(raw))
    assert resolved.jobs[0].spec.launcher == "pytorch" and resolved.config.training_operator.enabled
    (line,) = launchers.warnings(resolved.config.jobs, resolved.launches)
    assert "a PyTorchJob" in line and why in line


def test_no_scheduler_means_no_trainer_and_the_legacy_default() -> None:
    resolved = resolve(parse_stack(_unnamed(scheduler={"type": "none"})))
    assert not resolved.config.trainer.enabled and resolved.jobs[0].spec.launcher == "pytorch"


def test_the_stacks_default_launcher_is_what_a_job_that_names_none_becomes() -> None:
    assert _kinds(_unnamed(defaultLauncher="pytorch")) == ["PyTorchJob"]
    assert _kinds(_unnamed(defaultLauncher="indexed")) == ["Job"]
    with pytest.raises(ConfigError, match="needs Kubeflow Trainer v2, which is disabled"):
        resolve(parse_stack(_unnamed(defaultLauncher="trainjob", trainer={"enabled": False})))


def test_a_deployed_stack_keeps_its_jobs_kind_and_its_operators() -> None:
    deployed = Deployed.from_outputs(DEPLOYED)
    resolved = resolve(parse_stack(_unnamed()), deployed=deployed)
    assert resolved.jobs[0].spec.launcher == "pytorch"
    assert resolved.config.training_operator.enabled and resolved.config.training_operator.mpi, "nothing deleted"
    (line,) = launchers.warnings(resolved.config.jobs, resolved.launches)
    assert "kept because this stack runs it as a PyTorchJob" in line and "launcher: trainjob to move it" in line
    # What its owner states wins: the stack's default, or the job's own launcher.
    assert _kinds(_unnamed(defaultLauncher="trainjob"), deployed) == ["TrainJob"]
    assert _kinds(stack(jobs__0__launcher="trainjob"), deployed) == ["TrainJob"]
    # A job the deployment does not know is new: it takes the new default.
    assert _kinds(_unnamed(jobs__0__name="other"), deployed) == ["TrainJob"]


def test_render_says_what_pulumi_up_keeps_on_a_stack_an_earlier_release_deployed() -> None:
    summary = render(resolve(parse_stack(_unnamed()))).summary()
    assert "training/llama-finetune names no launcher, so it is a TrainJob" in summary
    assert "`pulumi up` keeps each such job the kind it runs as" in summary
    assert "name no launcher" not in render(resolve(parse_stack(_unnamed(defaultLauncher="trainjob")))).summary()


def test_a_named_v1_launcher_renders_and_is_called_legacy_once() -> None:
    resolved = resolve(parse_stack(BASE))
    rendered = render(resolved)
    assert [o["kind"] for o in rendered.objects if o["kind"] == "PyTorchJob"] == ["PyTorchJob"]
    (line,) = rendered.warnings()[-1:]
    assert line.startswith("job training/llama-finetune: a PyTorchJob (the Training Operator v1, the legacy path")
    assert "launcher: trainjob, runtime: torch" in line


@given(
    st.dictionaries(
        st.sampled_from(["training/a", "training/b", "x/y"]),
        st.one_of(
            st.fixed_dictionaries({"workload": st.sampled_from(["PyTorchJob/t/a", "TrainJob/t/a", "Job/t/a", "x"])}),
            st.integers(),
            st.none(),
        ),
    ),
    st.one_of(st.lists(st.one_of(st.text(max_size=5), st.integers())), st.none(), st.integers()),
)
def test_any_outputs_are_read_without_error(jobs: dict[str, Any], addons: Any) -> None:
    deployed = Deployed.from_outputs({"jobs": jobs, "addons": addons})
    assert all(isinstance(k, str) for k in deployed.addons)
    assert set(deployed.kinds) <= set(jobs)
    assert Deployed.from_outputs(None) == Deployed()


def test_the_stack_program_reads_a_scalar_default_launcher(
    pulumi_mocks: RecordingMonitor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    existing = REPO / "examples/minimal/Pulumi.existing.yaml"
    dev = variant(
        existing, tmp_path, lambda config: config.update({"gpu-training:defaultLauncher": "pytorch"}), "Pulumi.dev.yaml"
    )
    monkeypatch.chdir(tmp_path)
    use_stack(pulumi_mocks, dev)
    loaded = stacks.load()
    assert [p.spec.launcher for p in loaded.jobs] == ["pytorch"]
    reads = [c for c in pulumi_mocks.recording.calls if c.token == "pulumi:pulumi:readStackOutputs"]
    assert [c.args["name"] for c in reads] == ["organization/gpu-training/dev"], "its own last outputs, once"


def test_jobs_alike_on_the_legacy_path_share_one_line_naming_a_few() -> None:
    raw = _unnamed()
    template = raw["jobs"][0]
    raw["jobs"] = [{**template, "name": f"run-{i}", "launcher": "pytorch"} for i in range(2500)]
    raw["jobs"].append({**template, "name": "solo", "launcher": "mpi"})
    resolved = resolve(parse_stack(raw))
    many, one = launchers.warnings(resolved.config.jobs, resolved.launches)
    assert many.startswith(
        "2,500 jobs (training/run-0, training/run-1, training/run-2 and 2,497 more), each a PyTorchJob"
    )
    assert "the TrainJob equivalent is launcher: trainjob, runtime: torch" in many
    assert one.startswith("job training/solo: an MPIJob")
    upgrade = launchers.upgrade_line(resolved.config.jobs, resolved.launches, None)
    assert upgrade is None, "every job names its launcher"
    raw["jobs"] = [{k: v for k, v in job.items() if k != "launcher"} for job in raw["jobs"]]
    resolved = resolve(parse_stack(raw))
    upgrade = launchers.upgrade_line(resolved.config.jobs, resolved.launches, None)
    assert upgrade is not None
    assert "training/run-0, training/run-1, training/run-2 and 2,498 more name no launcher, so each is" in upgrade
