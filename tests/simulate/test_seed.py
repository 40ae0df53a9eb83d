"""etcd's seed (components/simulate/seed.py): control planes start with every CRD served, nothing sent again, and
each is still a cluster of its own."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from components.simulate import apply, controlplane, seed
from components.simulate.client import Client
from tests.support.widgets import widget_crd

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def test_the_digest_follows_the_definition_and_ignores_our_own_annotation() -> None:
    crd = widget_crd()
    annotated = copy.deepcopy(crd)
    annotated["metadata"]["annotations"] = {apply.DIGEST: "anything"}
    assert apply.digest_of(annotated) == apply.digest_of(crd)
    assert apply.digest_of(widget_crd("another widget")) != apply.digest_of(crd)


def test_the_seed_is_keyed_by_the_definitions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seed.engines, "key", lambda engine: "k8s")
    assert seed.folder([widget_crd()]) != seed.folder([widget_crd("another widget")])
    assert seed.folder([widget_crd()]) == seed.folder([widget_crd()])


def _applies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    sent: list[str] = []
    real = Client.apply

    def counting(self: Client, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        sent.append(obj["metadata"]["name"])
        return real(self, obj, dry_run)

    monkeypatch.setattr(Client, "apply", counting)
    return sent


@pytest.mark.simulate
def test_a_seeded_plane_serves_every_crd_without_sending_one(
    control_plane, definitions, monkeypatch: pytest.MonkeyPatch
) -> None:
    plane = control_plane()
    client = plane.client()
    sent = _applies(monkeypatch)
    apply.install_crds(client, definitions)
    assert sent == [], "the seed holds every definition as given"
    for crd in definitions:  # served: each kind's collection lists
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        version = next(v["name"] for v in crd["spec"]["versions"] if v.get("served"))
        assert client.get(f"/apis/{group}/{version}/{plural}") is not None, crd["metadata"]["name"]


@pytest.mark.simulate
def test_a_changed_definition_is_applied_again_and_planes_from_one_seed_share_nothing(
    fresh_control_plane, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = fresh_control_plane(), fresh_control_plane()
    sent = _applies(monkeypatch)
    apply.install_crds(first.client(), [widget_crd()])
    apply.install_crds(first.client(), [widget_crd()])
    apply.install_crds(first.client(), [widget_crd("another widget")])
    assert sent == ["widgets.example.com", "widgets.example.com"], "sent when new and when changed, not when held"
    stored = first.client().get(f"{CRDS}/widgets.example.com") or {}
    assert stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] == "another widget"
    assert second.client().get(f"{CRDS}/widgets.example.com") is None, "each plane has its own copy of the seed"


@pytest.mark.simulate
def test_a_stopped_plane_leaves_no_etcd_data_behind(fresh_control_plane) -> None:
    plane = fresh_control_plane()
    assert (plane.folder / controlplane.ETCD_DATA).is_dir()
    plane.stop()
    assert not (plane.folder / controlplane.ETCD_DATA).exists()
    assert (plane.folder / "kube-apiserver.log").is_file(), "the logs stay"
