"""The API client's readers of status: what the server sends before a controller has written a status."""

from __future__ import annotations

from components.simulate.client import conditions_of, status_of


def test_a_new_crd_whose_conditions_are_null_has_no_conditions() -> None:
    # kube-apiserver serialises a CRD's unset condition list as null right after creation (seen in CI).
    crd = {"metadata": {"name": "jobtemplates.flow.volcano.sh"}, "status": {"acceptedNames": {}, "conditions": None}}
    assert conditions_of(crd) == []


def test_missing_objects_and_statuses_read_as_empty() -> None:
    assert status_of(None) == {} and conditions_of(None) == []
    assert status_of({"status": None}) == {} and conditions_of({"metadata": {}}) == []


def test_conditions_are_returned_as_the_server_wrote_them() -> None:
    established = {"type": "Established", "status": "True"}
    assert conditions_of({"status": {"conditions": [established]}}) == [established]
    assert status_of({"status": {"phase": "Bound"}})["phase"] == "Bound"
