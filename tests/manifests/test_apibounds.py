"""Counts render derives past what the API takes are refused at the job's key."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.manifests.plan import plan
from components.models.base import INT32_MAX
from tests.support.factories import job, pool


def test_an_indexed_job_past_the_apis_parallelism_is_refused() -> None:
    with pytest.raises(ConfigError, match="past the 100,000 pods an Indexed Job may run at once") as caught:
        plan(job(launcher="indexed", nodes=100_001, name="a"), pool("tcp", maxNodes=200_000), path="jobs[0]")
    assert "jobs[0].nodes" in {i.path for i in caught.value.issues}


@pytest.mark.parametrize("launcher", ["pytorch", "tensorflow", "indexed"])
def test_a_backoff_limit_scaled_past_int32_is_refused(launcher: str) -> None:
    most = INT32_MAX // 4
    plan(job(launcher=launcher, nodes=4, backoffLimit=most), pool("tcp"))  # 4 x most fits
    with pytest.raises(ConfigError, match=f"ask for at most {most} retries") as caught:
        plan(job(launcher=launcher, nodes=4, backoffLimit=most + 1), pool("tcp"), path="jobs[0]")
    assert "jobs[0].backoffLimit" in {i.path for i in caught.value.issues}


def test_an_mpi_job_states_its_backoff_limit_unscaled() -> None:
    plan(job(launcher="mpi", nodes=4, backoffLimit=INT32_MAX), pool("tcp"))
