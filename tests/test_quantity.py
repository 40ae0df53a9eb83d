"""Quantities and ports as every API server takes them under server-side apply: the helpers that write them,
and every object every stack and example makes."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import stacks
from components import quantity
from components.render import render
from components.resolution import resolve_file
from tests.support.pulumi_mocks import RecordingMonitor, run, use_stack
from tests.support.schemas import apply_hazards
from tests.test_examples import deploy_workloads

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = "examples/workloads"
EXAMPLES = [
    *(str(p.relative_to(REPO)) for p in sorted(REPO.glob("Pulumi.*.yaml"))),
    *(str(p.relative_to(REPO)) for p in sorted((REPO / "examples" / "minimal").glob("Pulumi.*.yaml"))),
    WORKLOADS,
]
"""Every stack and example that makes objects: the stacks, the minimal stacks, and a team's jobs on a platform."""
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
QUANTITY_TEXT = st.builds(
    "{}{}".format,
    st.integers(min_value=0, max_value=10**7),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti"]),
)
"""A quantity as a user writes one: a whole number and a suffix (or none)."""


@given(st.integers(min_value=0, max_value=2**40))
def test_a_count_is_written_as_its_string(n: int) -> None:
    assert quantity.quantities({"nvidia.com/gpu": n}) == {"nvidia.com/gpu": str(n)}
    assert quantity.parse(quantity.canonical(n)) == Decimal(n)


@given(QUANTITY_TEXT)
def test_a_quantity_string_is_kept_as_it_is(text: str) -> None:
    assert quantity.quantities({"memory": text}) == {"memory": text}


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ("4096Gi", "4Ti"),
        ("16384Gi", "16Ti"),
        ("1800Gi", "1800Gi"),
        ("1.5Gi", "1536Mi"),
        ("512", "512"),
        ("1024", "1024"),
        ("1000", "1k"),
        ("0.5", "500m"),
        ("2000m", "2"),
        ("0Gi", "0"),
        ("1e3", "1e3"),
        (16, "16"),
    ],
)
def test_a_quantity_is_stored_as_kubernetes_writes_it_back(written: str | int, kept: str) -> None:
    # As apimachinery's Quantity.String() prints them (e.g. `kubectl get` after Kueue's webhook rewrote a quota).
    assert quantity.stored(written) == kept


@given(QUANTITY_TEXT)
def test_a_stored_quantity_keeps_its_value_and_is_stored_as_itself(text: str) -> None:
    kept = quantity.stored(text)
    assert quantity.parse(kept) == quantity.parse(text)
    assert quantity.stored(kept) == kept


@pytest.mark.parametrize("bad", ["eight", "8 GPUs", "", "-", True])
def test_a_value_that_is_no_quantity_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="is not a Kubernetes quantity"):
        quantity.quantities({"nvidia.com/gpu": bad})


def helm_hazards(values: Any, path: str = "values") -> list[str]:
    """Quantities in Helm values (a chart's `resources.requests` / `.limits`) that are numbers, not strings."""
    out: list[str] = []
    if isinstance(values, dict):
        for key, value in values.items():
            if key in ("requests", "limits") and isinstance(value, dict):
                out += [
                    f"{path}.{key}.{k}: the quantity {v!r} is a number"
                    for k, v in value.items()
                    if type(v) in (int, float)
                ]
            out += helm_hazards(value, f"{path}.{key}")
    elif isinstance(values, list):
        for index, item in enumerate(values):
            out += helm_hazards(item, f"{path}[{index}]")
    return out


def registered(monitor: RecordingMonitor) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Kubernetes objects and Helm values a program sent to the engine under mocks."""
    objects = [
        r.inputs
        for r in monitor.registrations
        if r.type.startswith("kubernetes:") and "kind" in r.inputs and "apiVersion" in r.inputs
    ]
    return objects, [r.inputs.get("values") or {} for r in monitor.registrations if r.type == HELM_RELEASE]


def made_by(example: str, monitor: RecordingMonitor, monkeypatch) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every Kubernetes object and Helm release's values of a stack or example: as `render` writes them (what
    `check` reads), and as the program sends them to the engine (with what render only names, such as the file
    systems' PersistentVolumes and the fabric checks' Secrets)."""
    if example == WORKLOADS:
        deploy_workloads(monitor)
        return registered(monitor)
    stack_file = REPO / example
    monkeypatch.chdir(stack_file.parent)
    rendered = render(resolve_file(stack_file))
    use_stack(monitor, stack_file)
    run(lambda: stacks.run(stacks.load()))
    objects, values = registered(monitor)
    return [*rendered.objects, *objects], [*(r.values for r in rendered.addons.releases), *values]


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_object_states_its_quantities_as_strings_and_its_ports_protocol(
    pulumi_mocks: RecordingMonitor, monkeypatch, example: str
) -> None:
    objects, values = made_by(example, pulumi_mocks, monkeypatch)
    assert any(o["kind"] in ("PyTorchJob", "MPIJob", "TrainJob") for o in objects), "the walk sees the jobs"
    found = [h for o in objects for h in apply_hazards(o)] + [h for v in values for h in helm_hazards(v)]
    assert not found, "\n".join(found)


def test_the_walk_finds_a_number_quantity_and_a_port_without_protocol() -> None:
    """The check above can fail: on a Service, a worker and a Kueue ClusterQueue as a careless builder writes them."""
    objects = render(resolve_file(REPO / "Pulumi.gke.yaml")).objects
    (queue,) = [copy.deepcopy(o) for o in objects if o["kind"] == "ClusterQueue"]
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 832
    queue["spec"]["fairSharing"]["weight"] = 1
    assert [h.split(": ", 1)[0] for h in apply_hazards(queue)] == [
        "ClusterQueue/research.spec.fairSharing.weight",
        "ClusterQueue/research.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
    ]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"clusterIP": "None", "ports": [{"name": "ssh", "port": 22}]},
    }
    assert apply_hazards(service) == ["Service/s.spec.ports[0]: a port without its protocol; state it (protocol: TCP)"]
    (runtime,) = [
        copy.deepcopy(o)
        for o in objects
        if o["kind"] == "ClusterTrainingRuntime" and o["metadata"]["name"] == "a3-torch"
    ]
    job = runtime
    worker = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ][0]
    worker["resources"]["limits"]["nvidia.com/gpu"] = 8.0  # as a preview hands a number to a policy
    worker["ports"] = [{"containerPort": 22}]
    assert len(apply_hazards(job)) == 2
    assert helm_hazards({"controller": {"resources": {"requests": {"cpu": 1, "memory": "1Gi"}}}}) == [
        "values.controller.resources.requests.cpu: the quantity 1 is a number"
    ]


@pytest.mark.parametrize(
    ("a", "b", "total"),
    [
        ("64", "32", "96"),
        ("1800Gi", "900Gi", "2700Gi"),
        ("1Gi", "1024Mi", "2147483648"),
        ("500m", "1", "1.5"),
        ("1e3", "1e3", "2000"),
        (16, 8, "24"),
    ],
)
def test_two_quantities_add_up_in_their_shared_suffix_else_in_units(a: str | int, b: str | int, total: str) -> None:
    assert quantity.add(a, b) == total
    assert quantity.parse(total) == quantity.parse(a) + quantity.parse(b)
