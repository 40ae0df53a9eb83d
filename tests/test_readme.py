"""The README a newcomer reads: every config key the model takes is in its configuration reference, and the
examples it shows are the shipped stack files, which render and pass review as it says."""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from components.cli.check import review
from components.models import StackConfig
from components.render import render
from components.resolution import resolve_file
from tests.support.workers import worker_spec

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
MINIMAL = REPO / "examples" / "minimal"


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    return README[start : README.index("\n## ", start + 1)]


def _code_words(text: str) -> set[str]:
    """Every identifier in the text's code: fenced blocks and `inline` spans."""
    code = re.findall(r"```.*?```", text, re.S) + re.findall(r"`[^`\n]+`", text)
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(code)))


def _models(annotation: object) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _models(arg)


def _keys(model: type[BaseModel], path: str, seen: set[type[BaseModel]]) -> Iterator[tuple[str, str]]:
    """(config path, key) for every key under a model, as a stack file spells it."""
    if model in seen:
        return
    seen.add(model)
    for name, field in model.model_fields.items():
        key = field.alias or name
        yield f"{path}.{key}", key
        for inner in _models(field.annotation):
            yield from _keys(inner, f"{path}.{key}", seen)


def _rows() -> dict[str, str]:
    """The configuration reference's text about each top-level key: its table row (and, for jobs, the
    TrainingJob section)."""
    reference = _section("Configuration reference")
    rows = {m.group(1): line for line in reference.splitlines() if (m := re.match(r"\| `(\w+)(?:\[\])?` \|", line))}
    rows["jobs"] = rows.get("jobs", "") + reference[reference.index("### TrainingJob") :]
    return rows


def test_every_config_key_is_in_the_configuration_reference() -> None:
    """Walks the config model, so a key added anywhere fails here until its top-level key's row names it."""
    rows = _rows()
    missing: list[str] = []
    for name, field in StackConfig.model_fields.items():
        key = field.alias or name
        if key not in rows:
            missing.append(key)
            continue
        words = _code_words(rows[key])
        seen: set[type[BaseModel]] = set()
        missing += sorted(
            {path for model in _models(field.annotation) for path, k in _keys(model, key, seen) if k not in words}
        )
    assert not missing, f"config keys the README's configuration reference does not name: {', '.join(missing)}"


def test_the_walk_finds_keys_deep_in_the_model() -> None:
    """The walk above reaches nested models (a key it cannot see is a key it cannot ask for)."""
    keys = {path for name in ("nodePools", "health") for path, _ in _keys_of(name)}
    assert {"nodePools.rails.interfaces", "nodePools.fabricCheck.sizes.factor", "health.repair.reboot"} <= keys


def _keys_of(name: str) -> Iterator[tuple[str, str]]:
    field = next(f for n, f in StackConfig.model_fields.items() if (f.alias or n) == name)
    seen: set[type[BaseModel]] = set()
    for model in _models(field.annotation):
        yield from _keys(model, name, seen)


SHOWN = re.findall(r"```yaml\n# (examples/minimal/Pulumi\.[\w-]+\.yaml)\n(.*?)```", README, re.S)


def test_the_readme_shows_the_stack_files_as_they_are() -> None:
    assert {path for path, _ in SHOWN} >= {
        "examples/minimal/Pulumi.aws.yaml",
        "examples/minimal/Pulumi.existing-ib.yaml",
    }
    for path, shown in SHOWN:
        text = (REPO / path).read_text()
        assert shown == text[text.index("config:") :], f"the README's copy of {path} differs from the file"


def test_the_minimal_stacks_table_lists_every_minimal_stack() -> None:
    listed = set(re.findall(r"^\| `(Pulumi\.[\w-]+\.yaml)` \|", _section("Minimal stacks"), re.M))
    assert listed == {p.name for p in MINIMAL.glob("Pulumi.*.yaml")}


@pytest.fixture(scope="module")
def infiniband() -> list[dict]:
    return list(render(resolve_file(MINIMAL / "Pulumi.existing-ib.yaml")).objects)


def test_the_infiniband_example_makes_what_the_readme_says(infiniband: list[dict]) -> None:
    interfaces = ["ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0", "ibp154s0", "ibp192s0", "ibp206s0", "ibp220s0"]
    nads = sorted(
        (o for o in infiniband if o["kind"] == "NetworkAttachmentDefinition"), key=lambda o: o["metadata"]["name"]
    )
    configs = [json.loads(o["spec"]["config"]) for o in nads]
    assert [o["metadata"]["name"] for o in nads] == [f"h100-rail-{i}" for i in range(8)]
    assert [(c["type"], c["master"], c["ipam"]["type"]) for c in configs] == [
        ("ipoib", name, "whereabouts") for name in interfaces
    ]
    assert [c["ipam"]["range"] for c in configs] == [f"192.168.{i}.0/24" for i in range(8)]
    (policy,) = [o for o in infiniband if o["kind"] == "NicClusterPolicy"]
    assert sorted(interfaces) == sorted(re.findall(r"ibp\d+s0", json.dumps(policy)))
    worker = worker_spec(infiniband)
    env = {e["name"]: e.get("value") for c in worker["containers"] for e in c.get("env", [])}
    assert env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"


def test_the_infiniband_example_passes_review() -> None:
    report = review(MINIMAL / "Pulumi.existing-ib.yaml", [])
    assert not report.errors and not [f for f in report.findings if f.enforcement == "mandatory"]
