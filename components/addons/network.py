"""Secondary networking: Multus, whereabouts, the RDMA shared device plugin, SR-IOV, and EFA."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from components import efadra
from components.addons import gpu_operator
from components.addons.install import HelmRelease, RemoteInstall
from components.manifests.meta import metadata
from components.manifests.pod import tolerations
from components.models.network import plugin_interfaces
from components.pool import taints_of
from components.stack import Stack
from components.versions import (
    AWS_DRANET,
    EFA_DEVICE_PLUGIN,
    MULTUS,
    MULTUS_IMAGE,
    NETWORK_OPERATOR,
    NETWORK_OPERATOR_IMAGE_TAG,
    SRIOV_NETWORK_OPERATOR,
    WHEREABOUTS,
    WHEREABOUTS_IMAGE,
)
from components.wellknown import EFA_DRA_INSTALL as EFA_DRA_NAME
from components.wellknown import EFA_INSTALL as EFA_NAME
from components.wellknown import MULTUS_INSTALL as MULTUS_NAME
from components.wellknown import NETWORK_OPERATOR_INSTALL as NETWORK_OPERATOR_NAME
from components.wellknown import NETWORK_OPERATOR_NAMESPACE, SRIOV_NAMESPACE
from components.wellknown import SRIOV_INSTALL as SRIOV_NAME
from components.wellknown import WHEREABOUTS_INSTALL as WHEREABOUTS_NAME

Patch = Callable[[dict[str, Any]], dict[str, Any] | None]
MELLANOX_REPOSITORY = "nvcr.io/nvidia/mellanox"
NIC_CLUSTER_POLICY = "nic-cluster-policy"  # the only name the Network Operator acts on
MELLANOX_VENDOR = "15b3"
RDMA_HCA_MAX = 63
# The DOCA-OFED driver container the Network Operator runs when the hosts have no MOFED.
DOCA_DRIVER_VERSION = "doca3.4.1-26.04-1.1.0.0-1"


def multus(stack: Stack) -> RemoteInstall | None:
    """The Multus thick plugin, when pools attach secondary networks."""
    if not stack.config.network.multus.enabled or not stack.config.all_networks:
        return None
    return RemoteInstall(MULTUS_NAME, (MULTUS,), patches=(f"the multus container image is pinned to {MULTUS_IMAGE}",))


def pin_image(image: str) -> Patch:
    """A patch that replaces a moving tag of `image`'s repository (snapshot, latest) with the pinned one."""
    repository = image.rsplit(":", 1)[0] + ":"

    def patch(obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") not in ("DaemonSet", "Deployment"):
            return obj
        spec = obj["spec"]["template"]["spec"]
        for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
            if container.get("image", "").startswith(repository):
                container["image"] = image
        return obj

    return patch


pin_multus_image = pin_image(MULTUS_IMAGE)
"""Multus' manifest names the moving `snapshot-thick` image even at release tags."""
pin_whereabouts_image = pin_image(WHEREABOUTS_IMAGE)
"""Whereabouts' manifests name `:latest` at every tag."""


def whereabouts(stack: Stack) -> RemoteInstall | None:
    """Whereabouts IPAM, when a network uses it."""
    if not any(n.ipam and n.ipam.type == "whereabouts" for n in stack.config.all_networks):
        return None
    return RemoteInstall(
        WHEREABOUTS_NAME,
        WHEREABOUTS,
        (f"the whereabouts image is pinned to {WHEREABOUTS_IMAGE}",),
        needs=(MULTUS_NAME,),
    )


def network_operator(stack: Stack) -> HelmRelease | None:
    """The NVIDIA Network Operator, for what its NicClusterPolicy runs: the RDMA shared device plugin, the
    IPoIB CNI, and the DOCA-OFED driver that nvidia-peermem needs without host MOFED."""
    wanted = (
        stack.config.network.rdma.shared_device_plugin or _ipoib(stack) or gpu_operator.needs_mofed_container(stack)
    )
    if not (stack.rdma and wanted):
        return None
    # NFD must run from exactly one chart: the GPU Operator's when it is installed.
    nfd = not gpu_operator.enabled(stack)
    values: dict[str, Any] = {"nfd": {"enabled": nfd}, "sriovNetworkOperator": {"enabled": False}}
    if nfd:
        tolerated = gpu_operator.nfd_worker_tolerations(stack, NETWORK_OPERATOR_NAME)
        values["node-feature-discovery"] = {"worker": {"tolerations": tolerated}}
    return HelmRelease(NETWORK_OPERATOR_NAME, NETWORK_OPERATOR, NETWORK_OPERATOR_NAMESPACE, values)


def nic_cluster_policy(stack: Stack) -> dict[str, Any] | None:
    """The NicClusterPolicy, on the RDMA pools' nodes only: the RDMA shared device plugin exposing the
    configured resource on the rails' interfaces, the standard CNI plugins, the IPoIB CNI when a network
    uses it, and the DOCA-OFED driver only for nvidia-peermem without host MOFED."""
    if network_operator(stack) is None:
        return None
    spec: dict[str, Any] = {}
    pools = [p for p in stack.pools.values() if p.fabric in ("infiniband", "roce")]
    # Its DaemonSets (the driver container above all, which reloads mlx5) stay off nodes whose
    # management NIC is a ConnectX but that carry no RDMA pool.
    terms = [
        {"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(p.node_selector.items())]}
        for p in pools
    ]
    if terms and all(t["matchExpressions"] for t in terms):
        spec["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    taints = taints_of(pools, startup=True)
    if taints:
        spec["tolerations"] = tolerations(taints)
    if gpu_operator.needs_mofed_container(stack):
        spec["ofedDriver"] = {"image": "doca-driver", "repository": MELLANOX_REPOSITORY, "version": DOCA_DRIVER_VERSION}
    if stack.config.network.rdma.shared_device_plugin:
        spec["rdmaSharedDevicePlugin"] = {
            **_image("k8s-rdma-shared-dev-plugin"),
            "config": json.dumps({"configList": [_rdma_resource(stack)]}),
        }
    spec["secondaryNetwork"] = {"cniPlugins": _image("plugins")}
    if _ipoib(stack):
        spec["secondaryNetwork"]["ipoib"] = _image("ipoib-cni")
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": "NicClusterPolicy",
        "metadata": metadata(NIC_CLUSTER_POLICY),
        "spec": spec,
    }


def _rdma_resource(stack: Stack) -> dict[str, Any]:
    """The shared device plugin's resource: Mellanox devices behind the configured interfaces, else behind
    the rails' interfaces and the NADs' parents."""
    network = stack.config.network
    prefix, name = network.rdma.resource_name.split("/", 1)
    rails = [n for pool in stack.config.node_pools for n in pool.rail_networks()]
    interfaces = plugin_interfaces(network.rdma, network.networks, rails)
    selectors: dict[str, Any] = {"vendors": [MELLANOX_VENDOR]}
    if interfaces:
        selectors["ifNames"] = interfaces
    entry: dict[str, Any] = {"resourceName": name, "rdmaHcaMax": RDMA_HCA_MAX, "selectors": selectors}
    if prefix != "rdma":
        entry["resourcePrefix"] = prefix
    return entry


def _ipoib(stack: Stack) -> bool:
    return any(n.type == "ipoib" for n in stack.config.all_networks)


def _image(image: str) -> dict[str, str]:
    return {"image": image, "repository": MELLANOX_REPOSITORY, "version": NETWORK_OPERATOR_IMAGE_TAG}


def sriov_operator(stack: Stack) -> HelmRelease | None:
    """The SR-IOV Network Operator, when asked for."""
    sriov = stack.config.network.sriov
    if not sriov.operator:
        return None
    values = {"sriovOperatorConfig": {"deploy": True}, "operator": {"resourcePrefix": sriov.resource_prefix}}
    return HelmRelease(SRIOV_NAME, SRIOV_NETWORK_OPERATOR, SRIOV_NAMESPACE, values)


def sriov_policies(stack: Stack) -> list[dict[str, Any]]:
    """An SriovNetworkNodePolicy per configured policy."""
    return [
        {
            "apiVersion": "sriovnetwork.openshift.io/v1",
            "kind": "SriovNetworkNodePolicy",
            "metadata": metadata(p.name, SRIOV_NAMESPACE),
            "spec": {
                "resourceName": p.resource_name,
                "nodeSelector": dict(p.node_selector),
                "numVfs": p.num_vfs,
                "nicSelector": {"pfNames": list(p.pf_names)},
                "deviceType": "netdevice",
                "isRdma": p.is_rdma,
                "linkType": p.link_type,
            },
        }
        for p in stack.config.network.sriov.policies
    ]


def efa_device_plugin(stack: Stack) -> HelmRelease | None:
    """The EFA device plugin on AWS, tolerating the taints of the EFA pools (unless the EFA DRA driver serves them)."""
    efa = [p for p in stack.pools.values() if p.fabric == "efa" and not p.efa_dra]
    if stack.config.cluster.provider != "aws" or not efa:
        return None
    values = {"tolerations": tolerations(taints_of(efa, startup=True))}
    return HelmRelease(EFA_NAME, EFA_DEVICE_PLUGIN, "kube-system", values)


def efa_dra_driver(stack: Stack) -> HelmRelease | None:
    """The AWS EFA DRA driver (network.efa.mode dra) on EKS, tolerating the taints of the EFA pools, with its
    DeviceClass."""
    efa = [p for p in stack.pools.values() if p.efa_dra]
    if stack.config.cluster.provider != "aws" or not efa:
        return None
    # The chart already keeps its DaemonSet to EFA instance types (supportedInstanceLabels).
    values = {"tolerations": tolerations(taints_of(efa, startup=True))}
    return HelmRelease(EFA_DRA_NAME, AWS_DRANET, "kube-system", values)


def efa_claim_templates(stack: Stack) -> list[dict[str, Any]]:
    """The ResourceClaimTemplate of each EFA-through-DRA pool in every namespace its jobs or its fabric check run
    in."""
    out: list[dict[str, Any]] = []
    for pool in stack.pools.values():
        if not pool.efa_dra:
            continue
        used = {plan.namespace for plan in stack.jobs if plan.pool.name == pool.name}
        check = stack.checks.get(pool.name)
        if check is not None:
            used.add(check.namespace)
        out += [efadra.claim_template(pool, namespace) for namespace in sorted(used)]
    return out
