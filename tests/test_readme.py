"""The README a newcomer reads and the docs pages it leads to: the README's commands are `./run`'s and its links
land; every config key the model takes is in the configuration page; the examples the pages show are the shipped
stack files, which render and pass review as they say."""

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
from components.plaintext import SECRETS_SECTION
from components.render import render
from components.resolution import resolve_file
from tests.support.workers import worker_spec

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"
MINIMAL = REPO / "examples" / "minimal"


def _page(name: str) -> str:
    return (DOCS / name).read_text()


def _section(text: str, title: str) -> str:
    """A `## title` section of a page, up to the next `## `."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _sh_commands(text: str) -> list[str]:
    """The commands of the text's `sh` blocks, comments left out."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.split("#")[0].strip()]


def test_the_readme_quick_start_is_two_run_commands_run_handles() -> None:
    """The quick start renders the dev stack and runs the tests; every `./run` command the README names is one the
    run script's usage line lists."""
    quick = _sh_commands(_section(README, "Quick start (fresh machine, offline)"))
    assert quick == ["./run render --stack dev", "./run test"]
    usage = re.search(r'echo "usage: (.*?)" >&2', (REPO / "run").read_text())
    assert usage, "the run script prints its usage"
    commands = set(re.findall(r"\./run (\w+)", usage.group(1)))
    named = set(re.findall(r"\./run (\w+)", README))
    assert named <= commands, f"the README names ./run commands the run script does not list: {named - commands}"
    assert (REPO / "Pulumi.dev.yaml").is_file()


def test_the_readme_is_short_and_its_links_land() -> None:
    assert len(README.splitlines()) <= 80, "the README is read in five minutes: the rest belongs in docs/"
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert links, "the README leads into the docs"
    for link in links:
        if "://" not in link:
            assert (REPO / link).is_file(), f"the README links to {link}, which is not a file"


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
    """The configuration page's text about each top-level key: its table row (and, for jobs, the TrainingJob
    page)."""
    overview = _page("configuration.md")
    rows = {m.group(1): line for line in overview.splitlines() if (m := re.match(r"\| `(\w+)(?:\[\])?` \|", line))}
    rows["jobs"] = rows.get("jobs", "") + _page("jobs.md")
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
    assert not missing, f"config keys docs/configuration.md (or docs/jobs.md) does not name: {', '.join(missing)}"


def test_the_walk_finds_keys_deep_in_the_model() -> None:
    """The walk above reaches nested models (a key it cannot see is a key it cannot ask for)."""
    keys = {path for name in ("nodePools", "health") for path, _ in _keys_of(name)}
    assert {"nodePools.rails.interfaces", "nodePools.fabricCheck.sizes.factor", "health.repair.reboot"} <= keys


def _keys_of(name: str) -> Iterator[tuple[str, str]]:
    field = next(f for n, f in StackConfig.model_fields.items() if (f.alias or n) == name)
    seen: set[type[BaseModel]] = set()
    for model in _models(field.annotation):
        yield from _keys(model, name, seen)


SHOWN = [
    (where, path, shown)
    for where, text in [("README.md", README), *((f"docs/{p.name}", p.read_text()) for p in sorted(DOCS.glob("*.md")))]
    for path, shown in re.findall(r"```yaml\n# (examples/minimal/Pulumi\.[\w-]+\.yaml)\n(.*?)```", text, re.S)
]


def test_the_readme_and_the_docs_show_the_stack_files_as_they_are() -> None:
    assert {(where, path) for where, path, _ in SHOWN} >= {
        ("README.md", "examples/minimal/Pulumi.aws.yaml"),
        ("docs/getting-started.md", "examples/minimal/Pulumi.aws.yaml"),
        ("docs/fabrics.md", "examples/minimal/Pulumi.existing-ib.yaml"),
    }
    for where, path, shown in SHOWN:
        text = (REPO / path).read_text()
        assert shown == text[text.index("config:") :], f"{where}'s copy of {path} differs from the file"


def test_the_minimal_stacks_table_lists_every_minimal_stack() -> None:
    section = _section(_page("getting-started.md"), "Minimal stacks")
    listed = set(re.findall(r"^\| `(Pulumi\.[\w-]+\.yaml)` \|", section, re.M))
    assert listed == {p.name for p in MINIMAL.glob("Pulumi.*.yaml")}


@pytest.fixture(scope="module")
def infiniband() -> list[dict]:
    return list(render(resolve_file(MINIMAL / "Pulumi.existing-ib.yaml")).objects)


def test_the_infiniband_example_makes_what_the_docs_say(infiniband: list[dict]) -> None:
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


def test_the_credential_errors_point_at_the_docs_section() -> None:
    """A credential refused in plain text names where the docs say how to give it."""
    page, _, anchor = SECRETS_SECTION.partition("#")
    heading = next(line for line in (REPO / page).read_text().splitlines() if line.startswith("## Secrets"))
    assert re.sub(r"[^\w\s-]", "", heading[3:]).strip().lower().replace(" ", "-") == anchor
