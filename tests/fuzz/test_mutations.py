"""A valid stack file with one mistake (tests/fuzz/mutations.py) is refused cleanly, or renders a stack still valid.

Clean refusal, as a user sees it from `render --config`: exit 1, no traceback, within a few seconds, every issue
naming the file, the line and the config path (a mistake in the text rather than in a key, such as broken
indentation, may name only the file and line). Mistakes whose kind the model can hold (null where a key is optional, numbers out of range,
a name starting with a digit where DNS-1123 allows it, broken indentation that is still YAML) may render instead; the
stack they render must then be one the schemas and the mandatory rules accept.

The plain run keeps few examples; `-m fuzz` runs FUZZ_EXAMPLES (CI: 1000).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.cli import main
from components.errors import ConfigError
from components.resolution import resolve_file
from tests.fuzz import mutations
from tests.fuzz.mutations import Mutation
from tests.fuzz.test_properties import renders_valid
from tests.support.stacks import STACK_FILES

SECONDS = 3.0
"""How much CPU render may spend answering a broken stack file (a valid one renders in about 0.1 s). CPU time, not
wall time: in CI this tier runs beside the simulate tier on two cores, where a wall clock measures the machine's
load (16 s once for a 0.5 s render), while a hang or an alias bomb burns CPU."""

PATHLESS = frozenset({"indentation", "invalid-utf8"})
"""Mistakes in the text, not in a key: their issues name the file and line only (a YAML syntax error)."""

FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "2000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@functools.cache
def _keys(stack_file: Path) -> dict[str, Any]:
    return mutations.stack_keys(stack_file)


@functools.cache
def _by_kind(stack_file: Path) -> dict[str, list[Mutation]]:
    found: dict[str, list[Mutation]] = {}
    for mutation in mutations.mutations(_keys(stack_file)):
        found.setdefault(mutation.kind, []).append(mutation)
    return found


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Path, Mutation]:
    """A shipped stack file and one mistake in it: the kind drawn first, so that rare kinds are drawn as often."""
    stack_file = draw(st.sampled_from(STACK_FILES))
    kinds = _by_kind(stack_file)
    kind = draw(st.sampled_from(sorted(kinds)))
    return stack_file, draw(st.sampled_from(kinds[kind]))


def refused_cleanly_or_still_valid(stack_file: Path, mutation: Mutation, tmp: Path) -> None:
    """The property, for one mistake in one stack file."""
    broken = tmp / stack_file.name
    broken.write_bytes(mutations.apply(_keys(stack_file), mutation))
    stderr = io.StringIO()
    started = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        code = main(["render", "--config", str(broken), "--out", str(tmp / "out")])
    took = time.process_time() - started
    said = stderr.getvalue()
    assert took < SECONDS, f"{mutation}: render took {took:.1f} s of CPU"
    assert "Traceback" not in said, said
    if code == 0:
        assert not mutation.must_refuse, f"{mutation}: rendered, not refused"
        renders_valid(resolve_file(broken))
        return
    assert code == 1, f"{mutation}: exit {code}\n{said}"
    try:
        resolve_file(broken)
    except ConfigError as exc:
        issues = exc.issues
    else:
        raise AssertionError(f"{mutation}: the CLI refused it but resolve_file did not\n{said}")
    assert issues, said
    for issue in issues:
        assert issue.source == str(broken) and issue.line, f"{mutation}: no file and line: {issue}"
        assert issue.path or mutation.kind in PATHLESS, f"{mutation}: no config path: {issue}"
        assert issue.message, f"{mutation}: no message: {issue}"
        where = f"{broken}:{issue.line}: " + (f"{issue.path}: " if issue.path else "")
        assert where in said, f"{mutation}: stderr does not name {where!r}\n{said}"


def test_every_kind_of_mutation_is_made_on_every_stack() -> None:
    """The mutations reach across the model: every kind on every shipped stack, every top-level key mutated."""
    for stack_file in STACK_FILES:
        assert {"delete-required", "unknown-key", "typo-key", "null", "bad-name", "bad-enum"} <= set(
            _by_kind(stack_file)
        ), stack_file
    touched = {m.path[0] for f in STACK_FILES for ms in _by_kind(f).values() for m in ms if m.path}
    assert set(mutations.StackConfig.config_keys()) <= touched


@FEW
@given(mutated())
def test_a_broken_stack_file_is_refused_cleanly(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[Path, Mutation]
) -> None:
    refused_cleanly_or_still_valid(*case, tmp_path_factory.mktemp("mutated"))


@pytest.mark.fuzz
@MANY
@given(mutated())
def test_fuzz_a_broken_stack_file_is_refused_cleanly(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[Path, Mutation]
) -> None:
    refused_cleanly_or_still_valid(*case, tmp_path_factory.mktemp("mutated"))
