"""Secondary networks: Multus, NetworkAttachmentDefinitions, RDMA and SR-IOV device plugins."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.models.base import DnsLabel, Spec, at, check_variant_fields

NetworkType = Literal["macvlan", "sriov", "ib-sriov", "host-device"]

# Which key names the device behind each network type, and so is required for it.
_DEVICE_KEY: dict[str, str] = {
    "macvlan": "master",
    "sriov": "resourceName",
    "ib-sriov": "resourceName",
    "host-device": "device",
}
_ONLY_FOR: dict[str, tuple[str, ...]] = {
    "master": ("macvlan",),
    "device": ("host-device",),
    "resourceName": ("sriov", "ib-sriov"),
    "pkey": ("ib-sriov",),
    "vlan": ("sriov",),
}


class IpamSpec(Spec):
    """IP address management for a secondary network."""

    type: Literal["whereabouts", "host-local"] = "whereabouts"
    """whereabouts (cluster-wide, no collisions across nodes) | host-local (per node; give each
    node its own range). Default: whereabouts."""
    range: str
    """The subnet in CIDR form, e.g. 192.168.10.0/24. Required."""
    range_start: str | None = None
    """First address to hand out. Default: the subnet's first."""
    range_end: str | None = None
    """Last address to hand out. Default: the subnet's last."""
    gateway: str | None = None
    """Gateway address. Default: none."""
    exclude: list[str] = Field(default_factory=list)
    """whereabouts: CIDRs never handed out. Default: none."""
    routes: list[str] = Field(default_factory=list)
    """Destination CIDRs routed over this network. Default: none."""

    @field_validator("range")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError as exc:
            raise ValueError(f"'{value}' is not a CIDR such as 192.168.10.0/24") from exc
        return value

    @model_validator(mode="after")
    def _host_local(self) -> IpamSpec:
        if self.type == "host-local" and self.exclude:
            raise at("exclude", "`exclude` is a whereabouts option; host-local takes rangeStart/rangeEnd")
        return self


class NetworkSpec(Spec):
    """A NetworkAttachmentDefinition: a secondary interface pods attach through Multus."""

    name: DnsLabel
    """NAD name; pools list it in `networks`. Required."""
    namespace: DnsLabel = "training"
    """Namespace of the NAD (jobs attach NADs of their own namespace). Default: training."""
    type: NetworkType
    """macvlan | sriov | ib-sriov | host-device. Required."""
    master: str | None = None
    """macvlan: the host interface, e.g. enp94s0f0. Required for macvlan."""
    mode: Literal["bridge", "private", "vepa", "passthru"] = "bridge"
    """macvlan mode. Default: bridge."""
    resource_name: str | None = None
    """sriov / ib-sriov: the device-plugin resource of the VFs, e.g. nvidia.com/sriov_rdma_vf.
    Required for those types; pods request one."""
    device: str | None = None
    """host-device: the host device or interface, e.g. mlx5_0. Required for host-device."""
    pkey: str | None = None
    """ib-sriov: InfiniBand partition key, e.g. 0x00FF. Default: none."""
    vlan: int | None = Field(default=None, ge=0, le=4094)
    """sriov: VLAN id. Default: none."""
    mtu: int | None = Field(default=None, ge=576, le=9216)
    """Interface MTU. Default: the plugin's."""
    ipam: IpamSpec
    """Address management. Required."""
    interface: str | None = Field(default=None, pattern=r"^[a-zA-Z0-9_.-]{1,15}$")
    """The interface name the pod sees; NCCL_SOCKET_IFNAME follows it. Default: net1 for a pool's
    first network, net2 for the second, and so on."""

    @model_validator(mode="after")
    def _fields_for_type(self) -> NetworkSpec:
        check_variant_fields(
            self,
            self.type,
            [_DEVICE_KEY[self.type]],
            _ONLY_FOR,
            needs="a {variant} network needs `{key}`",
            applies="`{key}` applies to {variants} networks, not {variant}",
        )
        return self


class MultusSpec(Spec):
    """The Multus meta-plugin."""

    enabled: bool = True
    """Install Multus (thick plugin). Default: true."""


class RdmaSpec(Spec):
    """How pods get RDMA devices on InfiniBand and RoCE pools."""

    shared_device_plugin: bool = True
    """Install the RDMA shared device plugin and have pods request its resource. Default: true."""
    resource_name: str = "rdma/rdma_shared_device_a"
    """The RDMA resource pods request. Default: rdma/rdma_shared_device_a."""
    hca: str = "mlx5"
    """NCCL_IB_HCA: the HCA name prefix NCCL uses. Default: mlx5."""
    interfaces: list[str] = Field(default_factory=list)
    """Host interfaces whose RDMA devices the shared plugin exposes. Default: the NAD masters."""

    @field_validator("resource_name")
    @classmethod
    def _qualified(cls, value: str) -> str:
        if "/" not in value:
            raise ValueError(f"'{value}' is not an extended resource name such as rdma/rdma_shared_device_a")
        return value


class SriovPolicySpec(Spec):
    """An SriovNetworkNodePolicy: which physical functions get how many VFs, exposed as which resource."""

    name: DnsLabel
    """Policy name. Required."""
    resource_name: str = Field(pattern=r"^[A-Za-z0-9_]+$")
    """The VF resource name, without prefix (e.g. sriov_rdma_vf). Required."""
    pf_names: list[str] = Field(min_length=1)
    """Physical function interfaces, e.g. [ens1f0]. Required."""
    num_vfs: int = Field(ge=1, le=256)
    """VFs per physical function. Required."""
    link_type: Literal["eth", "ib"] = "eth"
    """eth (RoCE) | ib (InfiniBand). Default: eth."""
    is_rdma: bool = True
    """Expose the VFs' RDMA devices. Default: true."""
    node_selector: dict[str, str] = Field(
        default_factory=lambda: {"feature.node.kubernetes.io/network-sriov.capable": "true"}
    )
    """Nodes the policy configures. Default: SR-IOV capable nodes (NFD label)."""


class SriovSpec(Spec):
    """The SR-IOV Network Operator."""

    operator: bool = False
    """Install the SR-IOV Network Operator. Default: false."""
    resource_prefix: str = "openshift.io"
    """Prefix of the VF resources the operator advertises. Default: openshift.io."""
    policies: list[SriovPolicySpec] = Field(default_factory=list)
    """SriovNetworkNodePolicies (need the operator). Default: none."""

    @model_validator(mode="after")
    def _operator(self) -> SriovSpec:
        if self.policies and not self.operator:
            raise at("policies", "SR-IOV policies need the operator: set operator: true")
        return self


class NetworkConfig(Spec):
    """Secondary networking for RDMA fabrics."""

    multus: MultusSpec = Field(default_factory=MultusSpec)
    """Multus. Default: enabled."""
    networks: list[NetworkSpec] = Field(default_factory=list)
    """NetworkAttachmentDefinitions. Default: none."""
    rdma: RdmaSpec = Field(default_factory=RdmaSpec)
    """RDMA devices for pods. Default: the shared device plugin with rdma/rdma_shared_device_a."""
    sriov: SriovSpec = Field(default_factory=SriovSpec)
    """SR-IOV operator. Default: off."""
