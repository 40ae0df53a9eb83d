"""Stand-ins for the DRA drivers clouds run themselves: the classes and devices a pool's workers claim."""

from __future__ import annotations

from components import efadra, gpudirect
from components.simulate import devices
from tests.support.factories import gb200, pool
from tests.support.schemas import assert_valid


def test_a_dranet_pool_claims_every_rdma_nic_of_its_node() -> None:
    a4 = pool("rdma").model_copy(update={"dranet": True})
    assert devices.claimed(a4) == {gpudirect.RDMA_DEVICE_CLASS: a4.gpu_nics}
    assert devices.claimed(gb200()) == {}, "the ComputeDomain driver is the real one, not a stand-in"


def test_an_efa_dra_pool_claims_every_efa_device() -> None:
    p5 = pool("efa").model_copy(update={"efa_dra": True})
    assert devices.claimed(p5) == {efadra.DEVICE_CLASS: 32}


def test_the_stand_ins_are_valid_objects_that_say_they_stand_in() -> None:
    device_class = devices.device_class(gpudirect.RDMA_DEVICE_CLASS)
    slice_ = devices.resource_slice("a4-0", gpudirect.RDMA_DEVICE_CLASS, 8)
    assert_valid(device_class, slice_)
    assert len(slice_["spec"]["devices"]) == 8
    assert slice_["spec"]["driver"] in device_class["spec"]["selectors"][0]["cel"]["expression"]
    assert all(devices.STAND_IN in o["metadata"]["annotations"] for o in (device_class, slice_))
