"""Stand-ins for the DRA drivers a cloud runs itself, so that pods claiming their devices can be scheduled here.

GKE's managed DRANET serves the RDMA NICs of A3 Ultra, A4 and A4X nodes (DeviceClass mrdma.google.com), and the AWS
EFA DRA driver (aws/eks-charts aws-dranet) the EFA devices of EFA-through-DRA pools. Neither is published as a Go
module, so the simulation makes each DeviceClass the pods' claim templates name, selecting devices of a stand-in
driver, and publishes on each node of such a pool as many of those devices as the pool's claims take (its GPU NICs,
its EFA interfaces). What the drivers do on a real node (attach the NICs to the pod) is not simulated: the claims
are allocated and the pods scheduled, as the real scheduler would with the real drivers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from components import efadra, gpudirect
from components.gcp.pools import GKE_NETWORKING_DRA_LABEL
from components.pool import Pool
from components.simulate import nodes
from components.simulate.client import Client

RESOURCE_API = "resource.k8s.io/v1"
STAND_IN = "gpu-training/stand-in"
_REASONS = {
    gpudirect.RDMA_DEVICE_CLASS: "GKE's managed DRANET serves these RDMA NICs; it is published in no module",
    efadra.DEVICE_CLASS: "the AWS EFA DRA driver (aws-dranet) serves these EFA devices; it is published in no module",
}


def _driver(device_class: str) -> str:
    return f"simulated.{device_class}"


def claimed(pool: Pool) -> dict[str, int]:
    """The stand-in DeviceClasses a worker on the pool claims devices of, and how many per node."""
    found = {gpudirect.RDMA_DEVICE_CLASS: pool.gpu_nics} if pool.dranet else {}
    if pool.efa_dra:
        found[efadra.DEVICE_CLASS] = pool.efa_interfaces
    return found


def device_class(name: str) -> dict[str, Any]:
    """A stand-in DeviceClass named as the cloud's, selecting its stand-in driver's devices."""
    return {
        "apiVersion": RESOURCE_API,
        "kind": "DeviceClass",
        "metadata": {"name": name, "annotations": {STAND_IN: _REASONS[name]}},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{_driver(name)}'"}}]},
    }


def resource_slice(node: str, device_class_name: str, count: int) -> dict[str, Any]:
    """The stand-in driver's ResourceSlice on `node`: `count` devices."""
    driver = _driver(device_class_name)
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}", "annotations": {STAND_IN: _REASONS[device_class_name]}},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"device-{i}"} for i in range(count)],
        },
    }


def publish(client: Client, pools: Iterable[Pool]) -> None:
    """Make the stand-in DeviceClasses the pools' workers claim, and their devices on each node of those pools."""
    wanted = {pool.name: claimed(pool) for pool in pools}
    for name in sorted({c for classes in wanted.values() for c in classes}):
        client.apply(device_class(name))
    for node in client.list("v1", "Node"):
        labels = node["metadata"].get("labels") or {}
        for name, count in wanted.get(nodes.pool_of(node) or "", {}).items():
            if name == gpudirect.RDMA_DEVICE_CLASS and labels.get(GKE_NETWORKING_DRA_LABEL) != "true":
                continue  # GKE runs its networking-dra-driver only on nodes labelled so: nothing is published
            client.apply(resource_slice(node["metadata"]["name"], name, count))
