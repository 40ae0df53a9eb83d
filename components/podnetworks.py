"""The secondary networks and RDMA rails a pool's pods attach, resolved from its spec and the network config.

Provider-neutral, part of pool resolution (components/pools.py): RoCE and InfiniBand through Multus on an existing
cluster, and the rails GKE's GPUDirect pools state. Pure: no Pulumi.
"""

from __future__ import annotations

from typing import Any

from components import catalog
from components.errors import Issue
from components.models.base import Spec
from components.models.network import RAIL_TYPES, NetworkConfig, NetworkSpec, nad_parents, wrong_type
from components.models.nodepool import GPUDIRECT_FABRICS, NodePoolSpec


class PodNetwork(Spec):
    """A secondary network a pod on the pool attaches, with the interface name it sees."""

    name: str
    """The NetworkAttachmentDefinition."""
    namespace: str
    """Its namespace."""
    interface: str
    """The interface inside the pod, e.g. net1."""
    resource_name: str | None = None
    """The SR-IOV resource a pod requests for it, if any."""
    ip_range: str | None = None
    """The network's IPAM range (CIDR), which NCCL picks the RoCE GID of the interface by."""
    rdma_device: str | None = None
    """The RDMA device behind it (e.g. mlx5_0), which NCCL_IB_HCA names, when known."""


def rdma_resource(
    network: NetworkConfig, fabric: str, pod_networks: list[PodNetwork], path: str, issues: list[Issue]
) -> str | None:
    """The RDMA shared-device resource a RoCE / InfiniBand pod requests; the pool's issue when it has no RDMA
    device at all (no shared device plugin, no SR-IOV network)."""
    if fabric not in ("infiniband", "roce"):
        return None
    resource = network.rdma.resource_name if network.rdma.shared_device_plugin else None
    if resource is None and not any(n.resource_name for n in pod_networks):
        issues.append(
            Issue(
                f"{path}.fabric",
                f"a {fabric} pod needs an RDMA device: enable network.rdma.sharedDevicePlugin "
                "or attach an sriov / ib-sriov network",
            )
        )
    return resource


def exposed_interfaces(
    spec: NodePoolSpec, network: NetworkConfig, rdma_resource: str | None, plugin_interfaces: list[str] | None
) -> list[str]:
    """The host interfaces whose RDMA devices the shared device plugin exposes on the pool's nodes, as far as the
    stack knows; empty when it exposes every Mellanox device."""
    if not (rdma_resource and plugin_interfaces):
        return []
    # Of a selector made from every NAD's parent, this pool's nodes surely have only its own NADs' parents.
    own = nad_parents([n for n in network.networks if n.name in spec.networks], spec.rail_networks())
    return list(plugin_interfaces) if network.rdma.interfaces else own or list(plugin_interfaces)


def pod_networks(
    spec: NodePoolSpec, network: NetworkConfig, fabric: str, path: str, issues: list[Issue]
) -> list[PodNetwork]:
    """The networks a pod on the pool attaches: those it lists, or the NADs its rails make."""
    out: list[PodNetwork] = []
    rails = spec.rail_networks()
    if (spec.networks or rails) and not network.multus.enabled:
        key = "networks" if spec.networks else "rails"
        issues.append(Issue(f"{path}.{key}", "attaching networks needs Multus: set network.multus.enabled: true"))
    for position, name in enumerate(spec.networks):
        declared = [n for n in network.networks if n.name == name]
        if not declared:
            known = ", ".join(sorted({n.name for n in network.networks})) or "none"
            issues.append(
                Issue(
                    f"{path}.networks[{position}]",
                    f"network '{name}' is not declared in network.networks (declared: {known})",
                )
            )
        for nad in declared:
            if fabric in RAIL_TYPES and nad.type in ("macvlan", "ipoib") and nad.type not in RAIL_TYPES[fabric]:
                issues.append(Issue(f"{path}.networks[{position}]", f"'{name}': {wrong_type(nad.type, fabric)}"))
            out.append(_pod_network(nad, position))
    for position, nad in enumerate(rails):
        if any((n.namespace, n.name) == (nad.namespace, nad.name) for n in network.networks):
            issues.append(
                Issue(
                    f"{path}.rails",
                    f"makes NAD {nad.namespace}/{nad.name}, which network.networks declares too: rename that network",
                )
            )
        out.append(_pod_network(nad, position))
    seen: dict[tuple[str, str], str] = {}
    for net in out:
        other = seen.setdefault((net.namespace, net.interface), net.name)
        if other != net.name:
            issues.append(
                Issue(f"{path}.networks", f"networks '{other}' and '{net.name}' both use interface {net.interface}")
            )
    if fabric == "tcp" and out:
        issues.append(Issue(f"{path}.fabric", "a tcp pool attaches no RDMA networks; set fabric: roce or infiniband"))
    return out


def _pod_network(nad: NetworkSpec, position: int) -> PodNetwork:
    return PodNetwork(
        name=nad.name,
        namespace=nad.namespace,
        interface=nad.interface or f"net{position + 1}",
        resource_name=nad.resource_name,
        ip_range=nad.ipam.range if nad.ipam else None,
        rdma_device=nad.hca,
    )


def rail_fields(
    spec: NodePoolSpec,
    fabric: str,
    networks: list[PodNetwork],
    *,
    machine: catalog.MachineType | None,
    path: str,
    issues: list[Issue],
) -> dict[str, Any]:
    """What a RoCE / InfiniBand pool's rails set on it: their count and speed, the bandwidth they add up
    to, NCCL_IB_HCA naming exactly their devices, and the traffic class and service level."""
    rails = spec.rails
    if fabric not in RAIL_TYPES:
        if rails is None:
            return {}
        if fabric not in GPUDIRECT_FABRICS:
            issues.append(
                Issue(f"{path}.rails", f"rails are the RDMA NICs of roce and infiniband pools; this one is {fabric}")
            )
        elif rails.devices or rails.speed_gbps:
            key = "devices" if rails.devices else "speedGbps"
            issues.append(Issue(f"{path}.rails.{key}", f"GKE names and sizes a {fabric} pool's GPU NICs itself"))
        elif machine and machine.gpu_nics and rails.count != machine.gpu_nics:
            issues.append(Issue(f"{path}.rails", f"{machine.name} has {machine.gpu_nics} GPU NICs, not {rails.count}"))
        return {}
    fields: dict[str, Any] = {"ib_tc": spec.traffic_class, "ib_sl": spec.service_level}
    devices = rails.devices if rails and rails.devices else None
    if devices is None and networks and all(n.rdma_device for n in networks):
        devices = [n.rdma_device for n in networks if n.rdma_device]
    if devices:
        fields["ib_hca"] = "=" + ",".join(dict.fromkeys(devices))
    if rails:
        fields |= {"rails": rails.count, "rail_gbps": rails.speed_gbps}
        if rails.speed_gbps:
            fields["fabric_gbps"] = rails.count * rails.speed_gbps
    return fields
