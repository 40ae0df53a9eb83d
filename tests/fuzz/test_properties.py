"""Properties over the config spaces: accepted configs render valid, rule-abiding objects; rejected ones fail
with the project's ConfigError only; render and check never crash.

The plain run keeps few examples; `-m fuzz` runs thousands (FUZZ_EXAMPLES, default 2000).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from components import rules
from components.cli import main
from components.config import parse_stack
from components.errors import ConfigError
from components.render import render
from components.resolution import resolve
from components.rules.rule import Settings
from components.rules.subjects import from_objects, from_pools
from components.stack import Stack
from tests.fuzz.strategies import broken_stacks, stacks
from tests.support.schemas import errors

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "2000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def renders_valid(stack: Stack) -> None:
    """Every object the stack renders validates against its schema, and no mandatory rule finds anything."""
    rendered = render(stack)
    problems = [e for obj in rendered.objects for e in errors(obj)]
    assert not problems, problems
    subjects = from_objects(rendered.objects) + from_pools(stack.pools.values())
    mandatory = [
        f for f in rules.run(subjects, Settings(gang_scheduler=stack.scheduler)) if f.enforcement == "mandatory"
    ]
    assert not mandatory, mandatory


def accepted_configs_render_valid_objects_that_pass_the_rules(raw: dict[str, Any]) -> None:
    try:
        stack = resolve(parse_stack(raw))
    except ConfigError as exc:
        assert exc.issues and all(i.message for i in exc.issues)
        return
    renders_valid(stack)
    for plan in stack.jobs:
        assert plan.world_size == plan.nodes * plan.gpus_per_node <= plan.pool.gpus_per_node * plan.pool.max_nodes


def rejected_configs_fail_with_config_error_only(raw: dict[str, Any]) -> None:
    try:
        resolve(parse_stack(raw))
    except ConfigError as exc:
        assert exc.issues and all(i.message for i in exc.issues)


def render_and_check_never_crash(raw: dict[str, Any], tmp: Path) -> None:
    stack_file = tmp / "Pulumi.fuzz.yaml"
    stack_file.write_text(yaml.safe_dump({"config": {f"gpu-training:{k}": v for k, v in raw.items()}}))
    assert main(["render", "--config", str(stack_file), "--out", str(tmp / "out")]) in (0, 1)
    assert main(["check", "--config", str(stack_file)]) in (0, 1, 2)


@FEW
@given(stacks())
def test_accepted_configs_render_valid_objects_that_pass_the_rules(raw: dict[str, Any]) -> None:
    accepted_configs_render_valid_objects_that_pass_the_rules(raw)


@FEW
@given(broken_stacks())
def test_rejected_configs_fail_with_config_error_only(raw: dict[str, Any]) -> None:
    rejected_configs_fail_with_config_error_only(raw)


@FEW
@given(broken_stacks())
def test_render_and_check_never_crash(tmp_path_factory: pytest.TempPathFactory, raw: dict[str, Any]) -> None:
    render_and_check_never_crash(raw, tmp_path_factory.mktemp("fuzz"))


@pytest.mark.fuzz
@MANY
@given(stacks())
def test_fuzz_accepted_configs(raw: dict[str, Any]) -> None:
    accepted_configs_render_valid_objects_that_pass_the_rules(raw)


@pytest.mark.fuzz
@MANY
@given(broken_stacks())
def test_fuzz_rejected_configs(raw: dict[str, Any]) -> None:
    rejected_configs_fail_with_config_error_only(raw)


@pytest.mark.fuzz
@MANY
@given(broken_stacks())
def test_fuzz_render_and_check(tmp_path_factory: pytest.TempPathFactory, raw: dict[str, Any]) -> None:
    render_and_check_never_crash(raw, tmp_path_factory.mktemp("fuzz"))
