"""The NVIDIA DRA driver's ComputeDomain controller as a process, with the devices its kubelet plugin publishes.

The controller is the real one (sigs.k8s.io/dra-driver-nvidia-gpu at the chart's version): for each ComputeDomain
it makes the ResourceClaimTemplate of its channel, which the pods of a job name. Its kubelet plugin needs GPUs and
IMEX, so on kwok's nodes the simulation plays its part as kwok plays the kubelet's: each node of a rack-scale pool
publishes the ResourceSlice the plugin would (driver compute-domain.nvidia.com, pool named after the node, devices
channel-0 and daemon-0 with their `type` and `id` attributes: cmd/compute-domain-kubelet-plugin deviceinfo.go and
driver.go), and the DeviceClasses come from the chart's own templates in the module. The scheduler allocates each
pod's channel on its node through them, as on a real cluster.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from components import nvlink, yamlio
from components.addons import dra_driver as addon
from components.pool import Pool
from components.render import Rendered
from components.simulate import engines, nodes
from components.simulate.client import Client
from components.simulate.controlplane import ControlPlane, StartError, wait_log

MODULE = "sigs.k8s.io/dra-driver-nvidia-gpu"
ENGINE = engines.Engine("dra-driver", {"compute-domain-controller": f"{MODULE}/cmd/compute-domain-controller"})
VERSION_NOTE: str | None = (
    "NVIDIA DRA driver: the real ComputeDomain controller; the kubelet plugin's ResourceSlices are published for it "
    "(no GPUs or IMEX here), so channels are allocated but no IMEX daemon runs"
)
CHART = "deployments/helm/dra-driver-nvidia-gpu"
DEVICE_CLASS_TEMPLATES = ("deviceclass-compute-domain-daemon.yaml", "deviceclass-compute-domain-default-channel.yaml")
RESOURCE_API = "resource.k8s.io/v1"
READY_LINE = "starting controller directly"
"""What the controller logs once it runs without leader election (cmd/compute-domain-controller/main.go)."""
READY_TIMEOUT = 120.0
TEMPLATES = Path("/templates")
"""Where the controller reads the templates of the objects it makes (cmd/compute-domain-controller daemonset.go and
resourceclaimtemplate.go: fixed paths), which its image carries: the simulation lays them there from the module."""
_TEMPLATE_LINE = re.compile(r"^\s*\{\{-?\s*(if|end)\b.*\}\}\s*$")
_API_VERSION = re.compile(r"\{\{\s*include\s+\"[^\"]+\.resourceApiVersion\"\s+\.\s*\}\}")


def installed(rendered: Rendered) -> bool:
    """Whether the stack installs the DRA driver (it has a rack-scale NVLink pool)."""
    return any(r.name == addon.NAME for r in rendered.addons.releases)


def source() -> Path:
    """The driver's module tree at the pinned version, in the Go module cache."""
    return engines.download(MODULE, engines.pinned(ENGINE, MODULE))


def device_classes(root: Path) -> list[dict[str, Any]]:
    """The chart's ComputeDomain DeviceClasses, as it renders them with ComputeDomains on and IMEX driver-managed:
    its templates without their `if` guards, at resource.k8s.io/v1."""
    out: list[dict[str, Any]] = []
    for name in DEVICE_CLASS_TEMPLATES:
        text = (root / CHART / "templates" / name).read_text()
        lines = [line for line in text.splitlines() if not _TEMPLATE_LINE.match(line)]
        rendered = _API_VERSION.sub(RESOURCE_API, "\n".join(lines))
        if "{{" in rendered:
            raise StartError(f"{name} of the DRA driver's chart has templating this simulation does not render")
        out += [doc for doc in yamlio.documents(rendered) if doc.get("kind") == "DeviceClass"]
    return out


def _lay_templates(root: Path) -> None:
    """Put the module's templates where the controller's image has them, unless they are there already."""
    wanted = {path.name: path.read_bytes() for path in (root / "templates").glob("*.tmpl.*")}
    if all((TEMPLATES / name).is_file() and (TEMPLATES / name).read_bytes() == data for name, data in wanted.items()):
        return
    try:
        TEMPLATES.mkdir(exist_ok=True)
        for name, data in wanted.items():
            (TEMPLATES / name).write_bytes(data)
    except OSError as exc:
        raise StartError(
            f"the ComputeDomain controller reads its templates from {TEMPLATES}, as its image lays them out, and this "
            f"user cannot write there ({exc}): run simulate as root (as CI does), or create {TEMPLATES} writable"
        ) from None


def resource_slice(node: str) -> dict[str, Any]:
    """The ResourceSlice the ComputeDomain kubelet plugin publishes for `node`: IMEX channel 0 and daemon 0."""
    devices = [
        {"name": f"{kind}-0", "attributes": {"type": {"string": kind}, "id": {"int": 0}}}
        for kind in ("channel", "daemon")
    ]
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{nvlink.DRIVER}"},
        "spec": {
            "driver": nvlink.DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def rack_scale(pools: Iterable[Pool]) -> bool:
    """Whether any of the pools joins NVLink across its nodes, so that its jobs need the ComputeDomain controller."""
    return any(pool.nvlink_domain_nodes for pool in pools)


def publish(client: Client, pools: Iterable[Pool]) -> list[str]:
    """Publish the plugin's ResourceSlice on every node of a rack-scale pool; the nodes' names."""
    rack = {pool.name for pool in pools if pool.nvlink_domain_nodes}
    names = [n["metadata"]["name"] for n in client.list("v1", "Node") if nodes.pool_of(n) in rack]
    for name in names:
        client.apply(resource_slice(name))
    return names


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Start the ComputeDomain controller for the stack's rack-scale pools (see `serve`)."""
    serve(plane, rendered.stack.pools.values(), progress)


def serve(plane: ControlPlane, pools: Iterable[Pool], progress: Callable[[str], None] = lambda _: None) -> None:
    """Start the ComputeDomain controller against `plane` as the chart runs it (in the release's namespace, no
    leader election), after the DeviceClasses and the ResourceSlices of the pools' nodes; return once it runs."""
    binary = engines.build(ENGINE, progress)["compute-domain-controller"]
    root = source()
    client = plane.client()
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": addon.NAMESPACE}})
    for device_class in device_classes(root):
        client.apply(device_class)
    _lay_templates(root)
    published = publish(client, pools)
    progress(f"published the ComputeDomain plugin's devices on {len(published)} nodes")
    version = engines.pinned(ENGINE, MODULE)
    process = plane.start(
        "compute-domain-controller",
        [str(binary), "-v", "4"],
        env={
            "KUBECONFIG": str(plane.kubeconfig),
            "NAMESPACE": addon.NAMESPACE,
            "POD_NAME": "compute-domain-controller-simulated",
            "IMAGE_NAME": f"registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:{version}",
            "LEADER_ELECTION_ENABLED": "false",
            "LOG_VERBOSITY_CD_DAEMON": "4",
            "IMEX_MODE": "driverManaged",
            "IMEX_ISOLATION": "domain",
        },
    )
    wait_log(plane, process, READY_LINE, "the ComputeDomain controller", READY_TIMEOUT)
