"""NetworkAttachmentDefinitions: the CNI config of each secondary network."""

from __future__ import annotations

import json
from typing import Any

from components.manifests.meta import metadata
from components.models.network import IpamSpec, NetworkSpec

CNI_VERSION = "0.3.1"
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"


def ipam(spec: IpamSpec) -> dict[str, Any]:
    """The CNI ipam block: whereabouts takes `range`, host-local a `subnet`."""
    out: dict[str, Any] = {"type": spec.type}
    if spec.type == "whereabouts":
        out["range"] = spec.range
        if spec.range_start:
            out["range_start"] = spec.range_start
        if spec.range_end:
            out["range_end"] = spec.range_end
        if spec.exclude:
            out["exclude"] = list(spec.exclude)
    else:
        out["subnet"] = spec.range
        if spec.range_start:
            out["rangeStart"] = spec.range_start
        if spec.range_end:
            out["rangeEnd"] = spec.range_end
    if spec.gateway:
        out["gateway"] = spec.gateway
    if spec.routes:
        out["routes"] = [{"dst": dst} for dst in spec.routes]
    return out


def cni_config(spec: NetworkSpec) -> dict[str, Any]:
    """The CNI plugin config of a network."""
    config: dict[str, Any] = {"cniVersion": CNI_VERSION, "name": spec.name, "type": spec.type}
    if spec.type == "macvlan":
        config |= {"master": spec.master, "mode": spec.mode}
    elif spec.type == "ipoib":
        # The IPoIB CNI (NicClusterPolicy secondaryNetwork.ipoib) makes a child of the host's IPoIB link.
        config["master"] = spec.master
    elif spec.type == "host-device":
        config["device"] = spec.device
    elif spec.type == "sriov":
        if spec.vlan is not None:
            config["vlan"] = spec.vlan
    elif spec.type == "ib-sriov":
        if spec.pkey:
            config["pkey"] = spec.pkey
        config |= {"link_state": "enable", "rdmaIsolation": True}
    if spec.mtu is not None:
        config["mtu"] = spec.mtu
    if spec.ipam is not None:
        config["ipam"] = ipam(spec.ipam)
    return config


def network_attachment_definition(spec: NetworkSpec) -> dict[str, Any]:
    """The NetworkAttachmentDefinition of a network; SR-IOV types name their device resource."""
    annotations = {RESOURCE_ANNOTATION: spec.resource_name} if spec.resource_name else None
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": metadata(spec.name, spec.namespace, annotations=annotations),
        "spec": {"config": json.dumps(cni_config(spec), indent=2)},
    }
