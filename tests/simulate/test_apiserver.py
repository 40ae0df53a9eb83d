"""Every object every stack renders meets a real kube-apiserver: schema, defaults, CEL, under server-side apply."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.immutable import replace_paths
from components.render import render
from components.resolution import resolve_file
from components.simulate import apply, controlplane, crds, namespaces
from components.simulate.client import Client
from tests.support import waiting
from tests.support.stacks import STACK_FILES, variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
STACKS = STACK_FILES
NEVER_EDITED = {("batch/v1", "Job")}
"""A Job's pod template is immutable: Pulumi replaces a Job whose template changed, it never updates it."""


def _refusals(outcomes: list[apply.Outcome]) -> list[str]:
    return [f"{o.key}: {o.message}" for o in outcomes if not o.accepted and not o.skipped]


def _cluster(start: Callable[[], controlplane.ControlPlane], definitions: list[dict[str, Any]]):
    client = start().client()
    apply.install_crds(client, definitions)
    return client


def _accepted_on_a_new_cluster(client: Client, stack_file: Path) -> list[dict[str, Any]]:
    """Every object the stack renders applied to a cluster holding none of them: what the first `pulumi up` sends."""
    rendered = render(resolve_file(stack_file))
    objects = rendered.objects
    # The namespaces an add-on's install would make (kube-prometheus-stack's, for the pack's objects).
    outcomes = apply.apply_all(client, [*objects, *namespaces.stand_ins(rendered)])
    assert not _refusals(outcomes)
    skipped = {o.key.split("/")[0] for o in outcomes if o.skipped}
    assert skipped <= {"NicClusterPolicy", "GKENetworkParamSet", "Network", "ClusterPolicy"}
    # What the server stores is what we sent, plus its defaults: read one back to prove the apply landed.
    first = next(o for o in objects if o["apiVersion"].rpartition("/")[0] not in crds.UNAVAILABLE)
    assert client.get(client.path_of(first)) is not None
    return objects


def _edited(stack_file: Path, tmp_path: Path) -> Path:
    """The stack after a typical change: every job on a new image with one more env var, queues resized."""

    def change(config: dict[str, Any]) -> None:
        for job in config.get("gpu-training:jobs", []):
            if isinstance(job, dict):
                job["image"] = job.get("image", "registry.example.com/training:v1").rsplit(":", 1)[0] + ":edited"
                job["env"] = {**job.get("env", {}), "SIMULATE_EDIT": "1"}
        for queue in config.get("gpu-training:scheduler", {}).get("queues", []):
            if "gpus" in queue:
                queue["gpus"] = int(queue["gpus"]) * 2

    return variant(stack_file, tmp_path, change)


@pytest.mark.parametrize("stack_file", STACKS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_object_is_accepted_and_an_edit_applies_over_it(
    stack_file: Path, control_plane, definitions, tmp_path: Path
) -> None:
    """The first apply creates every object; the edit's goes through the server's update path (transition rules on
    oldSelf, immutability). One cluster for both: the edit needs the first apply's objects in place, and a second
    cluster made only to apply them again cost each stack a control plane."""
    client = _cluster(control_plane, definitions)
    before = _accepted_on_a_new_cluster(client, stack_file)
    previous = {apply.key(o): o for o in before}
    edited = [
        o
        for o in render(resolve_file(_edited(stack_file, tmp_path))).objects
        if (o["apiVersion"], o["kind"]) not in NEVER_EDITED
    ]
    replaced = [o for o in edited if _replace(client, previous.get(apply.key(o)), o)]
    assert not _refusals(apply.apply_all(client, edited))
    if any(o["kind"] == "TrainJob" for o in edited):
        assert any(o["kind"] == "TrainJob" for o in replaced), "a new trainer image replaces the TrainJob"


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _replace(client: Client, old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    """Do what `pulumi up` does with our resource options: when a field the object replaces on
    (components/immutable.py) changed between the two renders, delete it first so the apply creates it
    anew. True when it did."""
    if old is None or all(_at(old, p) == _at(new, p) for p in replace_paths(new)):
        return False
    client.delete(old)
    # Foreground deletion waits for its dependents.
    waiting.until(f"{apply.key(old)} deleted", lambda: client.get(client.path_of(old)) is None, wait=30, poll=0.2)
    return True
