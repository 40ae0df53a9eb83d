"""A pool's fabric against its machine and provider: every pair the catalog can tell is refused with an error
naming the pool's fabric key, the machine and the fix, and every pair that can run resolves."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import catalog
from components.fabricfit import buildable, machine_fabrics
from components.models.network import NetworkConfig
from components.models.nodepool import Fabric, NodePoolSpec
from components.pools import resolve_pools
from tests.test_config import error_of

FABRICS: tuple[str, ...] = get_args(Fabric)
MACHINES = [catalog.lookup(p, n) for p in ("aws", "gcp") for n in catalog.names(p)]  # type: ignore[arg-type]
REGION = {"aws": "us-east-1", "gcp": "us-central1", "existing": None}
ZONE = {"aws": "us-east-1a", "gcp": "us-central1-a"}


def hardware(machine: catalog.MachineType) -> set[str]:
    """What the machine's NICs carry, from the catalog's raw figures (an oracle apart from fabricfit)."""
    fabrics = {"tcp"}
    if machine.efa_interfaces:
        fabrics.add("efa")
    if machine.gpudirect:
        fabrics.add(machine.gpudirect)
    if machine.gpudirect == "rdma":  # ConnectX RoCE NICs
        fabrics.add("roce")
    return fabrics


BUILDS = {
    "aws": {"efa", "tcp"},
    "gcp": {"tcp", "tcpx", "tcpxo", "rdma"},
    "existing": {"tcp", "efa", "roce", "infiniband"},
}
"""What a provider's pools can run, whatever the machine."""


def pool(machine: catalog.MachineType, provider: str, fabric: str) -> NodePoolSpec:
    key = "instanceType" if machine.provider == "aws" else "machineType"
    spec: dict[str, Any] = {"name": "gpu", key: machine.name, "maxNodes": 2, "fabric": fabric}
    if provider == "existing":
        spec["nodeSelector"] = {"pool": "gpu"}
    else:
        spec["zone"] = ZONE[provider]
    if catalog.ultraservers(machine.name):
        spec["capacity"] = {"type": "capacity-block", "reservationId": "cr-0123456789abcdef0"}
    return NodePoolSpec.model_validate(spec)


@settings(max_examples=150, deadline=None)
@given(
    machine=st.sampled_from(MACHINES),
    fabric=st.sampled_from(FABRICS),
    existing=st.booleans(),
)
def test_a_pool_resolves_its_fabric_exactly_when_machine_and_provider_have_it(
    machine: catalog.MachineType, fabric: str, existing: bool
) -> None:
    provider = "existing" if existing else machine.provider
    network = NetworkConfig.model_validate({"rdma": {"sharedDevicePlugin": True}})
    _, found = resolve_pools(
        [pool(machine, provider, fabric)], provider, REGION[provider], network, kubernetes_version="1.35"
    )
    on_fabric = [i for i in found if i.path == "nodePools[0].fabric"]
    if fabric in hardware(machine) and fabric in BUILDS[provider]:
        assert not on_fabric, on_fabric
        assert fabric in buildable(machine, provider)
    else:
        assert on_fabric, f"{fabric} on {machine.name} ({provider}) was accepted"
        assert machine.name in on_fabric[0].message, on_fabric[0].message
        assert found[-1] == on_fabric[0], "nothing that follows from an impossible fabric is listed after it"
        assert fabric not in buildable(machine, provider)


def test_every_machine_runs_tcp_and_its_default_first() -> None:
    for machine in MACHINES:
        assert machine_fabrics(machine)[0] == machine.fabric
        assert "tcp" in machine_fabrics(machine)
        assert "infiniband" not in machine_fabrics(machine), "no catalogued machine has an InfiniBand HCA"


def test_infiniband_on_an_efa_machine_names_the_fabric_key_the_machine_and_the_fix(tmp_path) -> None:
    path = tmp_path / "Pulumi.ib.yaml"
    path.write_text(
        "config:\n"
        "  gpu-training:cluster: {provider: existing, name: t}\n"
        "  gpu-training:network: {rdma: {sharedDevicePlugin: true}}\n"
        "  gpu-training:nodePools:\n"
        "    - {name: h100, instanceType: p5.48xlarge, fabric: infiniband, maxNodes: 2, nodeSelector: {a: b}}\n"
    )
    from components.errors import ConfigError
    from components.resolution import resolve_file

    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    assert str(caught.value).splitlines() == [
        f"{path}:5: nodePools[0].fabric: infiniband: p5.48xlarge has no InfiniBand HCA; its NICs carry efa and tcp: "
        "set fabric: efa or tcp, or name the type its nodes really are"
    ]


def test_roce_on_eks_is_refused_before_any_rdma_device_error() -> None:
    cluster = {"provider": "aws", "name": "t", "region": "us-east-1"}
    pools = [{"name": "h100", "instanceType": "p5.48xlarge", "fabric": "roce", "zone": "us-east-1a", "maxNodes": 2}]
    error = error_of({"cluster": cluster, "nodePools": pools})
    assert [(i.path, i.message) for i in error.issues] == [
        (
            "nodePools[0].fabric",
            "roce: p5.48xlarge is an EC2 instance type, and EC2 instances have no InfiniBand or RoCE NICs (their GPUs "
            "talk over EFA or TCP): set fabric: efa or tcp",
        )
    ]


def test_efa_on_an_existing_pool_without_an_instance_type_says_what_to_name() -> None:
    cluster = {"provider": "existing", "name": "t"}
    pools = [{"name": "gpu", "gpusPerNode": 8, "fabric": "efa", "maxNodes": 2, "nodeSelector": {"a": "b"}}]
    (issue,) = error_of({"cluster": cluster, "nodePools": pools}).issues
    assert issue.path == "nodePools[0].fabric"
    assert "names no instance type" in issue.message and "'None'" not in issue.message
