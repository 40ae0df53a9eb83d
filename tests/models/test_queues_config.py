"""Queue config: cohorts and borrowing and lending limits, as a stack file states them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from components.models import QueueSpec


def queue(**fields: Any) -> QueueSpec:
    return QueueSpec.model_validate({"name": "research", "gpus": 32, **fields})


def test_sharing_defaults_leave_the_queue_in_the_stacks_cohort_without_limits() -> None:
    spec = queue()
    assert (spec.cohort, spec.borrowing_limit, spec.lending_limit) == (None, None, None)
    assert spec.to_config()["cohort"] is None


def test_sharing_keys_are_camel_case_or_snake_case() -> None:
    camel = queue(cohort="team-a", borrowingLimit=8, lendingLimit=0)
    snake = queue(cohort="team-a", borrowing_limit=8, lending_limit=0)
    assert camel == snake
    assert (camel.cohort, camel.borrowing_limit, camel.lending_limit) == ("team-a", 8, 0)
    assert {"borrowingLimit": 8, "lendingLimit": 0}.items() <= camel.to_config().items()


@pytest.mark.parametrize("fields", [{"borrowingLimit": -1}, {"lendingLimit": -2}, {"cohort": "Team_A"}, {"cohort": ""}])
def test_bad_sharing_values_are_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        queue(**fields)
