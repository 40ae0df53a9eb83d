"""Stand-in CRDs for the add-ons whose CRDs no module here provides (components/simulate/crds.py)."""

from __future__ import annotations

from pathlib import Path

from components.render import render
from components.resolution import resolve_file
from components.simulate import crds

REPO = Path(__file__).resolve().parents[2]


def test_each_unavailable_kind_a_stack_emits_gets_a_crd_that_serves_it() -> None:
    objects = list(render(resolve_file(REPO / "Pulumi.dev.yaml")).objects)
    (policy,) = crds.stand_ins(objects)
    assert policy["metadata"]["name"] == "nicclusterpolicies.mellanox.com"
    spec = policy["spec"]
    assert (spec["group"], spec["names"]["kind"], spec["scope"]) == ("mellanox.com", "NicClusterPolicy", "Cluster")
    assert [v["name"] for v in spec["versions"] if v["served"] and v["storage"]] == ["v1alpha1"]
    assert policy["metadata"]["annotations"]["gpu-training/stand-in"] == crds.UNAVAILABLE["mellanox.com"]


def test_kinds_whose_crds_a_module_provides_get_none() -> None:
    objects = list(render(resolve_file(REPO / "Pulumi.prod.yaml")).objects)
    assert all(c["spec"]["group"] in crds.UNAVAILABLE for c in crds.stand_ins(objects))
    assert crds.stand_ins([{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "x"}}]) == []


def test_plurals_as_kubebuilder_makes_them() -> None:
    assert [crds._plural(k) for k in ("NicClusterPolicy", "Network", "GKENetworkParamSet", "Ingress")] == [
        "nicclusterpolicies",
        "networks",
        "gkenetworkparamsets",
        "ingresses",
    ]
