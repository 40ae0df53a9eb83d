"""A namespace the stack must not own (Kubernetes' own, `default`, an add-on's) is refused at its key and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.addons.plan import plan as addon_plan
from components.config import parse_stack
from components.errors import ConfigError
from components.reserved import addon_namespaces
from components.resolution import resolve
from tests.support.refusals import refusal
from tests.test_config import BASE, stack


def _moved(namespace: str) -> dict[str, Any]:
    """The base stack with its network, volume and job in `namespace` (jobs attach NADs and claims of their own)."""
    raw = stack(jobs__0__namespace=namespace, trainingOperator={"enabled": True, "mpi": True})
    raw["network"]["networks"][0]["namespace"] = namespace
    raw["storage"]["volumes"][0]["namespace"] = namespace
    return raw


@pytest.mark.parametrize(
    ("namespace", "says"),
    [
        ("kube-system", "Kubernetes' own"),
        ("kube-node-lease", "Kubernetes' own"),
        ("kube-public", "Kubernetes' own"),
        ("default", "'default' is where every workload that names no namespace lands"),
        ("gpu-operator", "the add-on gpu-operator installs"),
        ("volcano-system", "the add-on volcano installs"),
        ("kubeflow", "the add-on training-operator installs"),
        ("mpi-operator", "the add-on mpi-operator installs"),
    ],
)
def test_a_namespace_the_stack_must_not_own_is_refused_at_each_key(tmp_path: Path, namespace: str, says: str) -> None:
    issue, line = refusal(tmp_path, _moved(namespace))
    assert issue.path == "network.networks[0].namespace"
    assert f"namespace: {namespace}" in line
    assert says in issue.message
    assert "use a namespace of the stack's own, such as training" in issue.message
    with pytest.raises(ConfigError) as caught:
        resolve(parse_stack(_moved(namespace)))
    keys = {i.path for i in caught.value.issues}
    assert {"network.networks[0].namespace", "storage.volumes[0].namespace", "jobs[0].namespace"} <= keys


def test_a_declared_namespace_is_refused_too(tmp_path: Path) -> None:
    issue, line = refusal(tmp_path, stack(namespaces=[{"name": "kube-system", "gpuQuota": 8}]))
    assert issue.path == "namespaces[0].name"
    assert "kube-system" in line


def test_every_install_namespace_of_the_plan_is_refused() -> None:
    stack_ = resolve(parse_stack({**BASE, "trainingOperator": {"enabled": True, "mpi": True}}))
    owners = addon_namespaces(addon_plan(stack_))
    assert {"gpu-operator", "volcano-system", "kubeflow", "mpi-operator", "kubeflow-system"} <= set(owners)
    for namespace in sorted(n for n in owners if not n.startswith("kube-")):
        with pytest.raises(ConfigError, match=f"'{namespace}' is where the add-on {owners[namespace]} installs"):
            resolve(parse_stack(_moved(namespace)))


def test_an_add_on_the_stack_does_not_install_leaves_its_namespace_free() -> None:
    assert resolve(parse_stack(_moved("kueue-system"))).jobs[0].namespace == "kueue-system"  # a Volcano stack
