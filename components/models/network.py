"""Secondary networks: Multus, NetworkAttachmentDefinitions, RDMA and SR-IOV device plugins."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from itertools import islice
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from components.models.base import Count, DnsLabel, Number, Spec, at, check_variant_fields, snake

NetworkType = Literal["macvlan", "sriov", "ib-sriov", "host-device", "ipoib"]

# Which key names the device behind each network type, and so is required for it.
_DEVICE_KEY: dict[str, str] = {
    "macvlan": "master",
    "sriov": "resourceName",
    "ib-sriov": "resourceName",
    "host-device": "device",
    "ipoib": "master",
}
_ONLY_FOR: dict[str, tuple[str, ...]] = {
    "master": ("macvlan", "ipoib"),
    "device": ("host-device",),
    "resourceName": ("sriov", "ib-sriov"),
    "pkey": ("ib-sriov",),
    "vlan": ("sriov",),
}
# RDMA device names (not interfaces): what NCCL_IB_HCA takes.
_RDMA_DEVICE = re.compile(r"^mlx[45]_\w+$")


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
    """macvlan | sriov | ib-sriov | host-device | ipoib (InfiniBand: an IPoIB child of `master`, with the
    RDMA shared device plugin). Required."""
    master: str | None = None
    """macvlan / ipoib: the host interface, e.g. enp94s0f0 (macvlan) or ibs1 (ipoib). Required for those."""
    mode: Literal["bridge", "private", "vepa", "passthru"] = "bridge"
    """macvlan mode. Default: bridge."""
    resource_name: str | None = None
    """sriov / ib-sriov: the device-plugin resource of the VFs, e.g. nvidia.com/sriov_rdma_vf.
    Required for those types; pods request one."""
    device: str | None = None
    """host-device: the host device or interface, e.g. mlx5_0. Required for host-device."""
    pkey: str | None = None
    """ib-sriov: InfiniBand partition key, e.g. 0x00FF. Default: none."""
    vlan: Count | None = Field(default=None, ge=0, le=4094)
    """sriov: VLAN id. Default: none."""
    mtu: Count | None = Field(default=None, ge=576, le=9216)
    """Interface MTU. Default: the plugin's."""
    ipam: IpamSpec | None = None
    """Address management. Required, except for ipoib, where the default is none: the pod's IPoIB
    interface then gets no address, and NCCL bootstraps on eth0."""
    interface: str | None = Field(default=None, pattern=r"^[a-zA-Z0-9_.-]{1,15}$")
    """The interface name the pod sees; NCCL_SOCKET_IFNAME follows it. Default: net1 for a pool's
    first network, net2 for the second, and so on."""
    rdma_device: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+(:[0-9]+)?$")
    """The RDMA device behind this network as pods see it, e.g. mlx5_0; when every network a pool attaches
    names one, NCCL_IB_HCA lists exactly those. Default: the host-device `device` when it is an mlx5_*
    device, else none."""

    @property
    def hca(self) -> str | None:
        """The RDMA device NCCL uses for this network, when known."""
        if self.rdma_device:
            return self.rdma_device
        if self.type == "host-device" and self.device and _RDMA_DEVICE.match(self.device):
            return self.device
        return None

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
        if self.ipam is None and self.type != "ipoib":
            example = "{type: whereabouts, range: 192.168.10.0/24}"
            raise at("ipam", f"is required for a {self.type} network, e.g. {example}")
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
    """NCCL_IB_HCA for pools whose rails or networks name no RDMA devices: a prefix (mlx5), an exact list
    (=mlx5_0,mlx5_3) or an exclusion (^mlx5_bond_0). A bare prefix also matches storage and front-end
    ports, so render warns about it. Default: mlx5."""
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
    num_vfs: Count = Field(ge=1, le=256)
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


class EfaSpec(Spec):
    """How pods on EFA pools get their EFA devices (EKS)."""

    mode: Literal["device-plugin", "dra"] = "device-plugin"
    """device-plugin (the AWS EFA device plugin; pods request vpc.amazonaws.com/efa) or dra (the AWS EFA DRA
    driver, aws-dranet; pods claim their EFA devices through a ResourceClaimTemplate: EKS node groups on Kubernetes
    1.34 or later, not Karpenter). Default: device-plugin."""


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
    efa: EfaSpec = Field(default_factory=EfaSpec)
    """EFA devices on EKS: `{mode: device-plugin | dra}`. Default: the EFA device plugin."""


RailType = Literal["macvlan", "sriov", "ib-sriov", "host-device", "ipoib"]
RAIL_TYPES: dict[str, tuple[str, ...]] = {
    "roce": ("macvlan", "sriov", "host-device"),
    "infiniband": ("ipoib", "ib-sriov", "host-device"),
}
"""The rail and network types each RDMA fabric attaches (the first is a rail's default)."""
_PLACEHOLDER = re.compile(r"\{[in]\}")
MAX_RAILS = 32
"""The most rails a node declares (HGX / DGX machines have 8, one per GPU)."""
# Keys that only shape the NADs the rails make (not the count, devices or speed of rails listed by hand).
_MAKES_NADS = ("type", "interfaces", "resourceName", "range", "prefixLength", "namespace", "mtu", "pkey", "vlan")
_RAIL_ONLY_FOR: dict[str, tuple[str, ...]] = {
    "interfaces": ("macvlan", "ipoib", "host-device"),
    "resourceName": ("sriov", "ib-sriov"),
    "devices": ("macvlan", "ipoib", "host-device"),
    "pkey": ("ib-sriov",),
    "vlan": ("sriov",),
}


def expand(pattern: str, count: int) -> list[str]:
    """One name per rail from a pattern: {i} counts rails from 0, {n} from 1 (mlx5_{i}, ens{n}f0np0)."""
    return [pattern.replace("{i}", str(i)).replace("{n}", str(i + 1)) for i in range(count)]


class RailsSpec(Spec):
    """A node's GPU rails, declared once: one NetworkAttachmentDefinition per rail, each on its own subnet,
    every one attached to every worker. Rails that state only count, devices and speedGbps (`rails: 8`)
    make no NADs: the pool's `networks` list them by hand, or (InfiniBand) workers reach the HCAs through
    the RDMA shared device plugin alone."""

    count: Count = Field(ge=1, le=MAX_RAILS)
    """Rails per node: the RDMA NICs (or ports) for GPU traffic, one per GPU on HGX / DGX machines. Required."""
    type: RailType | None = None
    """How a pod attaches each rail: macvlan, sriov or host-device on a roce pool; ipoib, ib-sriov or
    host-device on an infiniband pool. Default: macvlan (roce), ipoib (infiniband)."""
    interfaces: list[str] | None = None
    """Each rail's host interface, in rail order: a list, or a pattern in which {i} counts rails from 0 and
    {n} from 1 ("ens{n}f0np0" gives ens1f0np0 … ens8f0np0). The macvlan / ipoib parent or the host-device
    device, and what the RDMA shared device plugin exposes. Required for macvlan, ipoib and host-device rails."""
    devices: list[str] | None = None
    """Each rail's RDMA device, in rail order: a list or a pattern ("mlx5_{i}"). NCCL_IB_HCA then names
    exactly these (=mlx5_0,mlx5_1,…), never a storage or front-end port. Default: none, and NCCL_IB_HCA
    falls back to network.rdma.hca (render warns)."""
    resource_name: list[str] | None = None
    """sriov / ib-sriov: each rail's VF resource: a list, a pattern ("nvidia.com/rail_{i}"), or one name every
    rail draws from. Required for those types."""
    range: str | None = None
    """The subnet the rails' subnets are carved from, e.g. 192.168.0.0/16: rail i gets its i-th subnet of
    `prefixLength` (whereabouts IPAM). Required when the rails make their NADs."""
    prefix_length: Count | None = Field(default=None, ge=8, le=126)
    """Each rail's subnet size, as a prefix length. Default: 24 for an IPv4 range, 64 for IPv6."""
    speed_gbps: Number | None = Field(default=None, gt=0)
    """One rail's line rate in Gbps (400 for ConnectX-7 NDR / 400GbE); the pool's fabric bandwidth is
    count x this. Default: unknown."""
    namespace: DnsLabel = "training"
    """Namespace of the rails' NADs. Default: training."""
    mtu: Count | None = Field(default=None, ge=576, le=9216)
    """Each rail interface's MTU. Default: the plugin's."""
    pkey: str | None = None
    """ib-sriov: InfiniBand partition key, e.g. 0x00FF. Default: none."""
    vlan: Count | None = Field(default=None, ge=0, le=4094)
    """sriov: VLAN id. Default: none."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        """`rails: 8` is `{count: 8}`; a pattern becomes one name per rail."""
        if isinstance(data, int) and not isinstance(data, bool):
            return {"count": data}
        if not isinstance(data, dict) or not isinstance(data.get("count"), int):
            return data
        data = dict(data)
        count = data["count"]
        if not 1 <= count <= MAX_RAILS:  # left to count's bounds: a pattern would first make that many names
            return data
        for key in ("interfaces", "devices", "resourceName", "resource_name"):
            value = data.get(key)
            if not isinstance(value, str):
                continue
            if _PLACEHOLDER.search(value):
                data[key] = expand(value, count)
            elif key.startswith("resource") or count == 1:
                data[key] = [value] * count
            else:
                example = "ens{n}f0np0" if key == "interfaces" else "mlx5_{i}"
                raise at(
                    key,
                    f"'{value}' names one {key[:-1]}; give {count} in a list, or a pattern such as {example} "
                    "({i} counts from 0, {n} from 1)",
                )
        return data

    @model_validator(mode="after")
    def _shape(self) -> RailsSpec:
        for key in ("interfaces", "devices", "resourceName"):
            names = getattr(self, key if key != "resourceName" else "resource_name")
            if names is not None and len(names) != self.count:
                raise at(key, f"lists {len(names)} names for {self.count} rails: give one per rail")
            if names is not None and not all(name.strip() for name in names):
                raise at(key, "names an empty one: give each rail's name, or a pattern such as mlx5_{i}")
            if key != "resourceName" and names is not None and len(set(names)) != len(names):
                raise at(key, f"names a {key[:-1]} twice ({', '.join(names)}); each rail has its own")
        if self.range is not None:
            self.subnets()
        return self

    def subnets(self) -> list[str]:
        """Each rail's subnet, carved in order from `range`."""
        if self.range is None:
            return []
        try:
            base = ipaddress.ip_network(self.range, strict=False)
        except ValueError as exc:
            raise at("range", f"'{self.range}' is not a CIDR such as 192.168.0.0/16") from exc
        size = self.prefix_length or (24 if base.version == 4 else 64)
        longest = 30 if base.version == 4 else 126
        if size > longest:
            raise at("prefixLength", f"/{size} leaves no addresses for pods; use /{longest} or shorter")
        room = 2 ** (size - base.prefixlen) if size >= base.prefixlen else 0
        if room < self.count:
            needed = size - (self.count - 1).bit_length()
            raise at(
                "range",
                f"{base} holds {room} /{size} subnets and {self.count} rails need {self.count}: "
                f"use a /{needed} or larger, or a longer prefixLength",
            )
        return [str(net) for net in islice(base.subnets(new_prefix=size), self.count)]

    @property
    def makes_nads(self) -> bool:
        """Whether the rails make their own NADs: any key beyond count, devices and speedGbps says so."""
        return any(snake(key) in self.model_fields_set for key in _MAKES_NADS)

    def rail_type(self, fabric: str | None) -> str:
        """The rails' type: as stated, else the fabric's default."""
        return self.type or RAIL_TYPES.get(fabric or "", ("macvlan",))[0]

    def problem(self, fabric: str | None, *, by_hand: bool) -> tuple[str, str] | None:
        """The first way the rails of a roce / infiniband pool do not fit its fabric or lack what makes
        their NADs: (key, message)."""
        if fabric not in RAIL_TYPES:
            return "", (
                "rails are the RDMA NICs of roce and infiniband pools (or, as a bare count, the GPU NICs of GKE "
                f"GPUDirect ones), and this pool's fabric is {fabric or 'unset'}: set fabric: roce or infiniband"
            )
        if by_hand:
            for key in _MAKES_NADS:
                if snake(key) in self.model_fields_set:
                    return key, (
                        f"`{key}` shapes the NADs the rails make, and this pool lists its networks by hand: "
                        "drop one (rails beside `networks` state only count, devices and speedGbps)"
                    )
            return None
        if not self.makes_nads:
            return None
        kind = self.rail_type(fabric)
        if kind not in RAIL_TYPES[fabric]:
            return "type", wrong_type(kind, fabric)
        for key, kinds in _RAIL_ONLY_FOR.items():
            if getattr(self, snake(key)) is not None and kind not in kinds:
                return key, f"`{key}` applies to {' / '.join(kinds)} rails, not {kind}" + _why(key, kind)
        needs = "resourceName" if kind in ("sriov", "ib-sriov") else "interfaces"
        if getattr(self, snake(needs)) is None:
            example = '"nvidia.com/rail_{i}"' if needs == "resourceName" else '"ens{n}f0np0" or [ens1f0np0, ...]'
            return needs, f"{self.count} {kind} rails need their {needs}: a list, or a pattern such as {example}"
        if self.range is None:
            return "range", "is required: the subnet the rails' subnets are carved from, e.g. 192.168.0.0/16"
        return None

    def networks(self, pool: str, fabric: str | None) -> list[NetworkSpec]:
        """The NADs the rails make: <pool>-rail-<i>, each on its own subnet of `range`."""
        kind = self.rail_type(fabric)
        device_key = {"macvlan": "master", "ipoib": "master", "host-device": "device"}.get(kind)
        out: list[NetworkSpec] = []
        for i, subnet in enumerate(self.subnets()):
            fields: dict[str, Any] = {
                "name": f"{pool}-rail-{i}",
                "namespace": self.namespace,
                "type": kind,
                "mtu": self.mtu,
                "ipam": IpamSpec(range=subnet),
                "rdma_device": self.devices[i] if self.devices else None,
            }
            if device_key and self.interfaces:
                fields[device_key] = self.interfaces[i]
            if self.resource_name and kind in ("sriov", "ib-sriov"):
                fields["resource_name"] = self.resource_name[i]
            if kind == "ib-sriov":
                fields["pkey"] = self.pkey
            if kind == "sriov":
                fields["vlan"] = self.vlan
            out.append(NetworkSpec(**fields))
        return out


def nad_parents(networks: Iterable[NetworkSpec], rails: Iterable[NetworkSpec]) -> list[str]:
    """The host interfaces under NADs declared by hand (`networks`) and made by rails (`rails`): every macvlan /
    ipoib master, and each host-device rail's device, sorted."""
    rails = list(rails)
    parents = {n.master for n in [*networks, *rails] if n.master}
    # A host-device rail names its interface (a hand-declared one may name an RDMA device instead).
    parents |= {n.device for n in rails if n.type == "host-device" and n.device}
    return sorted(parents)


def plugin_interfaces(rdma: RdmaSpec, networks: Iterable[NetworkSpec], rails: Iterable[NetworkSpec]) -> list[str]:
    """The host interfaces whose RDMA devices the shared device plugin exposes (its ifNames selector):
    rdma.interfaces, else the parents of every NAD. Empty: the plugin exposes every Mellanox device."""
    return list(rdma.interfaces) or nad_parents(networks, rails)


def wrong_type(kind: str, fabric: str) -> str:
    """Why a network or rail of this type cannot carry the fabric, and what would."""
    fits = " / ".join(RAIL_TYPES[fabric])
    if kind == "macvlan" and fabric == "infiniband":
        return f"macvlan cannot attach to an IPoIB parent (CNI ADD fails); an infiniband pool attaches {fits}"
    if kind == "ipoib":
        return f"ipoib needs an InfiniBand parent; a {fabric} pool attaches {fits}"
    return f"{kind} does not carry {fabric}; a {fabric} pool attaches {fits}"


def _why(key: str, kind: str) -> str:
    if key == "devices" and kind in ("sriov", "ib-sriov"):
        return " (each pod sees only its own VFs' RDMA devices, whose names vary by node; NCCL finds them)"
    return ""
