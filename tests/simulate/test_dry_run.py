"""Whatever render accepts, the real kube-apiserver accepts too: every object of valid variants of the shipped stacks
(tests/fuzz/variants.py), some with a mistake render may accept, passes a server-side dry run (schemas, defaulting, the CRDs' CEL rules, the built-in
validation of core kinds). test_apiserver.py applies the shipped stacks themselves."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st

from components.errors import ConfigError
from components.render import render
from components.resolution import resolve_file
from components.simulate import apply, controlplane, namespaces
from components.simulate.client import Client, ClientError
from components.simulate.crds import UNAVAILABLE
from tests.fuzz import mutations
from tests.fuzz.variants import variants
from tests.support.stacks import REPO, STACK_FILES

pytestmark = pytest.mark.simulate

EXAMPLES = settings(
    max_examples=int(os.environ.get("DRY_RUN_EXAMPLES", "60")),
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each try costs seconds; the failing file is printed
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
"""Under a minute on one control plane, at a third of a second to a second a variant (DRY_RUN_EXAMPLES
for a longer hunt)."""


@pytest.fixture(scope="module")
def api(
    binaries: dict[str, Path],
    etcd_seed: Path,
    definitions: list[dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Client]:
    """One control plane with every CRD, which every example dry-runs against (a dry run stores nothing)."""
    plane = controlplane.start(tmp_path_factory.mktemp("control-plane"), binaries, seed=etcd_seed)
    try:
        client = plane.client()
        apply.install_crds(client, definitions)
        yield client
    finally:
        plane.stop()


def dry_run_refusals(client: Client, objects: list[dict[str, Any]]) -> list[str]:
    """What the API server says against each object under a server-side dry run; the namespaces they live in are
    created first, for real (a dry-run namespace holds nothing)."""
    made = [o for o in objects if o["kind"] == "Namespace"]
    for namespace in made:
        client.apply(namespace)
    refusals = []
    for obj in objects:
        if obj["kind"] == "Namespace" or obj["apiVersion"].rpartition("/")[0] in UNAVAILABLE:
            continue
        try:
            client.apply(obj, dry_run=True)
        except ClientError as exc:
            refusals.append(f"{apply.key(obj)}: {exc}")
    return refusals


@st.composite
def stack_texts(draw: st.DrawFn) -> tuple[str, bytes]:
    """A variant of a shipped stack, half the time with one mistake of a kind the model may hold (a zero, a negative
    number, null, a name starting with a digit: tests/fuzz/mutations.py), which render may accept."""
    stack_file = draw(st.sampled_from(STACK_FILES))
    raw = draw(variants(stack_file))
    if draw(st.booleans()):
        legal = [m for m in mutations.mutations(raw) if not m.must_refuse and m.text is None]
        return stack_file.name, mutations.apply(raw, draw(st.sampled_from(legal)))
    return stack_file.name, mutations.dump(raw)


@given(stack_texts())
@EXAMPLES
def test_whatever_render_accepts_the_api_server_accepts(
    api: Client, tmp_path_factory: pytest.TempPathFactory, case: tuple[str, bytes]
) -> None:
    name, text = case
    variant = tmp_path_factory.mktemp("variant") / name
    variant.write_bytes(text)
    try:
        stack = resolve_file(variant)
    except ConfigError:
        reject()
    rendered = render(stack)
    objects = [*namespaces.stand_ins(rendered), *rendered.objects]
    refusals = dry_run_refusals(api, objects)
    assert not refusals, "\n".join(refusals)


def test_a_dry_run_refuses_what_the_server_would_and_stores_nothing(api: Client) -> None:
    rendered = render(resolve_file(REPO / "Pulumi.dev.yaml"))
    queue = next(o for o in rendered.objects if o["kind"] == "Queue")
    assert dry_run_refusals(api, [queue]) == []
    assert api.get(api.path_of(queue)) is None
    too_heavy = {**queue, "spec": {**queue["spec"], "weight": 70_000}}  # Volcano's CRD: at most 65535
    assert "weight" in "".join(dry_run_refusals(api, [too_heavy]))
