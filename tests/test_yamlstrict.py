"""Reading a stack file safely: a key stated twice, bytes that are not UTF-8 and alias bombs are refused with the
file and line, quickly, and never with a traceback; `render`, `check --config` and `simulate` all say so."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from components import yamlio, yamlstrict
from components.cli import main
from components.config import load_stack_file
from components.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
MINIMAL = (REPO / "examples" / "minimal" / "Pulumi.aws.yaml").read_text()
JOB = "    - {name: llama-finetune, image: registry.example.com/training:v2.0, command: [train.py], nodes: 2}\n"


def bomb(levels: int = 9) -> str:
    """A "billion laughs" stack file: each level an alias list of nine of the level before (9**levels strings)."""
    lines = ["config:", "  gpu-training:cluster: {provider: aws, name: train, region: us-east-1}", '  l0: &l0 ["lol"]']
    lines += [f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels + 1)]
    return "\n".join([*lines, f"  gpu-training:jobs: *l{levels}", ""])


def error_of(tmp_path: Path, text: str | bytes, name: str = "Pulumi.bad.yaml") -> ConfigError:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    with pytest.raises(ConfigError) as caught:
        load_stack_file(path)
    return caught.value


def test_a_second_jobs_block_is_refused_naming_both_lines(tmp_path: Path) -> None:
    text = MINIMAL + "  gpu-training:jobs:\n" + JOB.replace("llama-finetune", "other")
    (issue,) = error_of(tmp_path, text).issues
    assert issue.path == "jobs" and issue.line == 14
    assert "'gpu-training:jobs' is stated twice (lines 12 and 14)" in issue.message
    assert "Pulumi CLI refuses" in issue.message and "state it once" in issue.message


def test_a_key_repeated_inside_a_job_is_refused_at_its_config_path(tmp_path: Path) -> None:
    text = MINIMAL.replace("nodes: 2}", "nodes: 2}\n    - name: second\n      nodes: 2\n      image: x\n      nodes: 4")
    (issue,) = error_of(tmp_path, text).issues
    assert issue.path == "jobs[1].nodes"
    assert "'nodes' is stated twice (lines 15 and 17)" in issue.message
    assert str(issue).startswith(f"{tmp_path / 'Pulumi.bad.yaml'}:17: jobs[1].nodes: ")


def test_a_key_repeated_in_a_job_file_is_refused_naming_that_file(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text("name: a\nimage: x\nnodes: 2\nnodes: 3\n")
    text = MINIMAL.replace(JOB, "    - job.yaml\n")
    (issue,) = error_of(tmp_path, text).issues
    assert issue.source == str(tmp_path / "job.yaml") and issue.line == 4 and issue.path == "nodes"


def test_repeated_keys_outside_the_namespace_are_refused_too(tmp_path: Path) -> None:
    """The Pulumi CLI reads the whole file, so a key twice anywhere fails `pulumi up`: render says so first."""
    text = MINIMAL + "  aws:region: us-east-1\n  aws:region: us-west-2\n"
    (issue,) = error_of(tmp_path, text).issues
    assert issue.path == "config.aws:region" and issue.line == 15


def test_a_merge_key_overriding_a_value_is_no_duplicate(tmp_path: Path) -> None:
    text = MINIMAL.replace(JOB, "    - &job {name: a, image: registry.example.com/t:v1, command: [t.py], nodes: 2}\n")
    text = text.replace("nodes: 2}\n", "nodes: 2}\n    - {<<: *job, name: b, nodes: 1}\n")
    config = load_stack_file(_write(tmp_path, text))
    assert [(j.name, j.nodes) for j in config.jobs] == [("a", 2), ("b", 1)]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "Pulumi.ok.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "data",
    [
        "config:\n  gpu-training:cluster: {provider: aws, name: tr\xe9in, region: us-east-1}\n".encode("latin-1"),
        b"config:\n  x: \x93quoted\x94\n",
    ],
    ids=["latin-1", "windows-1252"],
)
def test_bytes_that_are_not_utf8_are_refused_with_the_line(tmp_path: Path, data: bytes) -> None:
    (issue,) = error_of(tmp_path, data).issues
    line = 2
    column, byte = next((n + 1, b) for n, b in enumerate(data.splitlines()[line - 1]) if b >= 0x80)
    assert issue.line == line
    assert f"is not UTF-8 text: byte 0x{byte:02x} at line {line}, column {column}" in issue.message
    assert "save the file as UTF-8" in issue.message


def test_a_binary_file_is_refused_as_binary(tmp_path: Path) -> None:
    (issue,) = error_of(tmp_path, b"\x7fELF\x02\x01\x01\x00\x00\xff\xfe" * 20).issues
    assert "is binary, not YAML text" in issue.message


def test_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    assert load_stack_file(_write(tmp_path, "\ufeff" + MINIMAL)).cluster.name == "train"


def test_an_alias_bomb_is_refused_in_well_under_a_second(tmp_path: Path) -> None:
    started = time.perf_counter()
    (issue,) = error_of(tmp_path, bomb()).issues
    assert time.perf_counter() - started < 0.5
    assert "expand the document far past what is written" in issue.message and issue.line is not None


def test_nesting_too_deep_to_read_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    (issue,) = error_of(tmp_path, "config:\n  gpu-training:jobs: " + "[" * 5000 + "]" * 5000 + "\n").issues
    assert "nested too deeply" in issue.message


@pytest.mark.parametrize(
    "command",
    [
        lambda path, out: ["render", "--config", str(path), "--out", str(out)],
        lambda path, out: ["check", "--config", str(path)],
        lambda path, out: ["simulate", "--config", str(path)],
    ],
    ids=["render", "check", "simulate"],
)
@pytest.mark.parametrize(
    "content",
    [MINIMAL.encode().replace(b"train,", b"tr\xe9in,"), b"\x00\x01binary\xff" * 50, bomb().encode()],
    ids=["latin-1", "binary", "alias-bomb"],
)
def test_every_command_refuses_unreadable_stack_files_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command, content: bytes
) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_bytes(content)
    assert main(command(path, tmp_path / "out")) in (1, 2)
    captured = capsys.readouterr()
    assert captured.err.startswith(f"error: {path}"), captured.err
    assert "Traceback" not in captured.err and "no findings" not in captured.out
    assert not (tmp_path / "out").exists()


# Documents with aliases a user writes (a few anchors, merge keys): read, and read as PyYAML reads them.
_values = st.recursive(
    st.one_of(st.integers(-5, 5), st.text("abc", min_size=1, max_size=3)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text("xyz", min_size=1, max_size=2), inner),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(anchored=_values, uses=st.integers(1, 30))
def test_modest_aliasing_is_read_as_pyyaml_reads_it(anchored: object, uses: int) -> None:
    text = yaml.safe_dump({"base": anchored, "uses": [anchored] * uses}, default_flow_style=False)
    node = yamlio.compose(text)
    assert yamlstrict.excessive_aliasing(node) is None
    assert yamlstrict.duplicate_keys(node) == []
    assert yamlio.construct(node) == yaml.safe_load(text)


@given(st.lists(st.sampled_from("abc"), min_size=1, max_size=8))
def test_duplicates_are_exactly_the_repeated_keys(keys: list[str]) -> None:
    text = "".join(f"{k}: {n}\n" for n, k in enumerate(keys))
    found = yamlstrict.duplicate_keys(yamlio.compose(text))
    assert [(d.key, d.second) for d in found] == [(k, n + 1) for n, k in enumerate(keys) if k in keys[:n]]
    assert all(keys[d.first - 1] == d.key and d.first < d.second for d in found)
