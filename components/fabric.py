"""What a pod needs to use its pool's fabric: environment, device resources, annotations, capabilities."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components import efadra, gpudirect, quantity, versions
from components.memo import per_object
from components.models.nodepool import GPUDIRECT_FABRICS, Fabric
from components.pool import Pool

MULTUS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
PRIMARY_INTERFACE = "eth0"
GKE_INTERFACES_ANNOTATION = "networking.gke.io/interfaces"
GKE_DEFAULT_INTERFACE_ANNOTATION = "networking.gke.io/default-interface"
GKE_DEVICES_ANNOTATION = "devices.gke.io/container.{container}"
"""The NRI device injector puts the listed host devices into the named container (the RxDM sidecar)."""
GKE_NVIDIA_LIBRARIES = "/usr/local/nvidia/lib64"
"""Where GKE's NVIDIA libraries, and the NCCL plugins the installers add to them, appear in a container."""


@dataclass(frozen=True, slots=True)
class FabricProfile:
    """The pieces of a worker pod that its fabric decides."""

    fabric: Fabric
    env: dict[str, str] = field(default_factory=dict)
    resources: dict[str, str] = field(default_factory=dict)
    """Device resources a worker requests, as quantity strings (a count given as a number is written as one)."""
    annotations: dict[str, str] = field(default_factory=dict)
    capabilities: tuple[str, ...] = ()
    interfaces: tuple[str, ...] = (PRIMARY_INTERFACE,)
    volumes: tuple[dict[str, Any], ...] = ()
    """Pod volumes the fabric needs: host libraries, devices, the RxDM socket."""
    mounts: tuple[dict[str, Any], ...] = ()
    """Where the worker container mounts them."""
    sidecars: tuple[dict[str, Any], ...] = ()
    """Native sidecars (init containers with restartPolicy Always) that run beside the worker."""
    whole_node: bool = False
    """A worker takes every GPU of its node, since the fabric's NICs serve all of them."""
    claims: tuple[dict[str, str], ...] = ()
    """Dynamic resource claims of the pod (GKE-managed RDMA NICs), each used by the worker container."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", quantity.quantities(self.resources))

    @property
    def socket_ifname(self) -> str:
        """The interface NCCL bootstraps over (NCCL_SOCKET_IFNAME)."""
        return self.env.get("NCCL_SOCKET_IFNAME", PRIMARY_INTERFACE)


@per_object
def profile(pool: Pool, namespace: str) -> FabricProfile:
    """The fabric profile of a worker pod in `namespace` on `pool` (once per pool and namespace: every job on the
    pool shares it, so nothing may change it)."""
    if pool.fabric == "efa":
        return _efa(pool)
    if pool.fabric in ("infiniband", "roce"):
        return _rdma(pool, namespace)
    if pool.fabric in GPUDIRECT_FABRICS:
        return _gpudirect(pool)
    return FabricProfile(
        fabric="tcp",
        env={"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": PRIMARY_INTERFACE},
    )


def _efa(pool: Pool) -> FabricProfile:
    env = {"FI_PROVIDER": "efa"}
    if pool.efa_gpudirect:
        env["FI_EFA_USE_DEVICE_RDMA"] = "1"
    env["FI_EFA_FORK_SAFE"] = "1"
    # No huge pages: no node of ours advertises them (components/allocatable.py), so a pod requesting them
    # never schedules. Saying so matters even beside FI_EFA_FORK_SAFE: libfabric drops huge pages for fork
    # safety only on kernels that need it; on the AL2023 kernels (copy-on-fork) it skips that step and maps its
    # bounce buffers MAP_HUGETLB (ofiwg/libfabric v2.6.0 prov/efa/src/efa_fork_support.c,
    # rdm/efa_rdm_ep_fiops.c), which, on a node whose AMI did set pages aside, a pod granted none of them may
    # fault on. The cost is a minor one on small messages only: with GPUDirect RDMA the payload never passes
    # through these buffers (fi_efa(7) "small performance advantage"; awsome-distributed-training @7217859
    # 1.architectures/efa-cheatsheet.md, whose training recipes set it too).
    env["FI_EFA_USE_HUGE_PAGE"] = "0"
    # The buffer and chunk sizes ADT's nccl-tests run with on EFA (awsome-distributed-training @7217859
    # micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml); a job's `nccl` or `env` overrides them.
    env["NCCL_BUFFSIZE"] = "8388608"
    env["NCCL_P2P_NET_CHUNKSIZE"] = "524288"
    env["NCCL_SOCKET_IFNAME"] = PRIMARY_INTERFACE
    # Through the AWS EFA DRA driver the devices come as a claim, not as the device plugin's resource.
    claim = {"name": efadra.CLAIM, "resourceClaimTemplateName": efadra.claim_template_name(pool)}
    return FabricProfile(
        fabric="efa",
        env=env,
        resources={} if pool.efa_dra else {EFA_RESOURCE: str(pool.efa_interfaces)},
        capabilities=("IPC_LOCK",),
        whole_node=True,
        claims=(claim,) if pool.efa_dra else (),
    )


ROCE_AUTO_GID_NCCL = "2.21"
"""The first NCCL that picks a port's RoCE v2 GID itself: NCCL_IB_GID_INDEX defaults to -1 (auto), steered by
NCCL_IB_ADDR_FAMILY / NCCL_IB_ADDR_RANGE, which it also introduced (NVIDIA/nccl v2.21.5-1
src/transport/net_ib.cc). Before it the index defaults to 0 (v2.20.5-1): the port's link-local RoCE v1 GID,
which is not the pod's address and carries no DSCP, so traffic misses the fabric's lossless class."""


def min_nccl(fabric: str, env: Mapping[str, str]) -> str | None:
    """The least NCCL version (e.g. "2.21") a worker on `fabric` with environment `env` needs; None when any
    will do. RoCE with no NCCL_IB_GID_INDEX relies on NCCL choosing the GID."""
    if fabric == "roce" and "NCCL_IB_GID_INDEX" not in env:
        return ROCE_AUTO_GID_NCCL
    return None


def _rdma(pool: Pool, namespace: str) -> FabricProfile:
    networks = pool.networks_in(namespace)
    resources: dict[str, str] = {}
    if pool.rdma_resource:
        resources[pool.rdma_resource] = "1"
    for net in networks:
        if net.resource_name:
            resources[net.resource_name] = str(int(resources.get(net.resource_name, "0")) + 1)
    env = {
        "NCCL_IB_DISABLE": "0",
        "NCCL_IB_HCA": pool.ib_hca,
        # NCCL bootstraps over sockets, so on the first network with an address (an IPoIB NAD may have none).
        "NCCL_SOCKET_IFNAME": next((n.interface for n in networks if n.ip_range), PRIMARY_INTERFACE),
    }
    address_range = pool.address_range(namespace)
    if pool.fabric == "roce" and address_range:
        # No NCCL_IB_GID_INDEX: with macvlan each pod's address sits at its own GID index, different per
        # pod and node (multus-cni#1100, NVIDIA/nccl#890), and NCCL >= 2.21 finds the RoCE v2 GID itself
        # (min_nccl; render's pool line and the fabric check's verdict hold the image to it).
        # Naming the networks' subnet makes it pick the GID of the pod's own interface on every rail.
        env["NCCL_IB_ADDR_FAMILY"] = "AF_INET6" if ":" in address_range else "AF_INET"
        env["NCCL_IB_ADDR_RANGE"] = address_range
    if pool.ib_tc is not None:
        env["NCCL_IB_TC"] = str(pool.ib_tc)
    if pool.ib_sl is not None:
        env["NCCL_IB_SL"] = str(pool.ib_sl)
    annotations = {MULTUS_ANNOTATION: ",".join(f"{n.name}@{n.interface}" for n in networks)} if networks else {}
    return FabricProfile(
        fabric=pool.fabric,
        env=env,
        resources=resources,
        annotations=annotations,
        capabilities=("IPC_LOCK",),
        interfaces=(PRIMARY_INTERFACE, *(n.interface for n in networks)),
    )


# GKE GPUDirect. Sources: GoogleCloudPlatform/container-engine-accelerators @992db81 (gpudirect-tcpx/
# nccl-config.yaml and nccl-test-unprivileged-without-hostnetwork.yaml; gpudirect-tcpxo/README.md, release of
# 2026-01-09, and best-practice.md; gpudirect-rdma/nccl-test-a4.yaml); cluster-toolkit @1047080
# examples/gke-a3-highgpu, gke-a3-megagpu, gke-a4; /work/shared/research/gcp-anchors.md section 2.
_HOST_SYS = ({"name": "sys", "hostPath": {"path": "/sys"}}, {"name": "proc-sys", "hostPath": {"path": "/proc/sys"}})
_HOST_SYS_MOUNTS = ({"name": "sys", "mountPath": "/hostsysfs"}, {"name": "proc-sys", "mountPath": "/hostprocsysfs"})
_LIBRARIES = {"name": "nvidia-libraries", "hostPath": {"path": "/home/kubernetes/bin/nvidia/lib64"}}
_LIBRARIES_MOUNT = {"name": "nvidia-libraries", "mountPath": GKE_NVIDIA_LIBRARIES}
_TCPX_SOCKET = "/run/tcpx"
_TCPXO_HEALTH_FILE = "/run/health-check"  # the daemon writes it once initialised; no underscore allowed

# CPU sets of an a3-highgpu-8g per GPU NIC: the NUMA node each NIC sits on, one range for the transmit
# threads and one for the receive threads (container-engine-accelerators gpudirect-tcpx/nccl-config.yaml).
_TCPX_TX_BINDINGS = "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177"
_TCPX_RX_BINDINGS = "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191"

_TCPX_ENV = {
    "NCCL_GPUDIRECTTCPX_CTRL_DEV": PRIMARY_INTERFACE,
    "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": _TCPX_SOCKET,
    "NCCL_GPUDIRECTTCPX_TX_BINDINGS": _TCPX_TX_BINDINGS,
    "NCCL_GPUDIRECTTCPX_RX_BINDINGS": _TCPX_RX_BINDINGS,
    "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS": "500000",
    "NCCL_CROSS_NIC": "0",
    "NCCL_ALGO": "Ring,Tree",
    "NCCL_PROTO": "Simple",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_PXN_LEVEL": "0",
    "NCCL_DYNAMIC_CHUNK_SIZE": "524288",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_BUFFSIZE": "4194304",
    "NCCL_NSOCKS_PERTHREAD": "4",
    "NCCL_SOCKET_NTHREADS": "1",
}
_TCPXO_ENV = {
    "NCCL_FASTRAK_CTRL_DEV": PRIMARY_INTERFACE,
    "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": "/dev/aperture_devices",
    "NCCL_CROSS_NIC": "0",
    "NCCL_PROTO": "Simple,LL128",
    "NCCL_MIN_NCHANNELS": "4",
    "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
    # The installer copies the plugin's files, these two among them, next to GKE's NVIDIA libraries.
    "NCCL_TUNER_CONFIG_PATH": f"{GKE_NVIDIA_LIBRARIES}/a3plus_tuner_config.textproto",
    "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": f"{GKE_NVIDIA_LIBRARIES}/a3plus_guest_config.textproto",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE": "131072",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_FASTRAK_NUM_FLOWS": "2",
    "NCCL_FASTRAK_USE_SNAP": "1",
    "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS": "600000",
    "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0",
    "NCCL_BUFFSIZE": "8388608",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
    "NCCL_FASTRAK_USE_LLCM": "1",
    "NCCL_NVLS_ENABLE": "1",
}
# gIB's own set_nccl_env.sh, spelled out so the pod shows (and the rules can check) what NCCL runs with
# (the machine's tuner profile, NCCL_TUNER_CONFIG_PATH, comes from the catalog); the rdma gate warns of any
# value the node's script sets otherwise (components/fabriccheck.py);
# values as ai-on-gke/tutorials-and-examples dws-flex-training-pytorch/training/values.yaml lists them.
# NCCL_NET=gIB makes NCCL fail at start-up when the plugin is missing instead of falling back to sockets.
GIB_MOUNT = "/usr/local/gib"
"""Where RDMA pods see the gIB installer's files (plugin, configs/, scripts/)."""
GIB_NCCL_ENV = f"{GIB_MOUNT}/scripts/set_nccl_env.sh"
"""The installer's script exporting the NCCL environment of its version."""
_GIB_ENV = {
    "NCCL_NET": "gIB",
    "NCCL_CROSS_NIC": "0",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_NET_CHUNKSIZE": "131072",
    "NCCL_P2P_PCI_CHUNKSIZE": "131072",
    "NCCL_P2P_NVL_CHUNKSIZE": "524288",
    "NCCL_NVLS_CHUNKSIZE": "524288",
    # GKE hands each pod the RDMA NIC itself (deviceMode RDMA), not a macvlan on it, so its RoCE v2
    # GID sits at index 3 on every node.
    "NCCL_IB_GID_INDEX": "3",
    "NCCL_IB_ADAPTIVE_ROUTING": "1",
    "NCCL_IB_QPS_PER_CONNECTION": "4",
    "NCCL_IB_TC": "52",
    "NCCL_IB_FIFO_TC": "84",
}


def _gke_annotations(networks: tuple[gpudirect.GpuNetwork, ...]) -> dict[str, str]:
    """GKE multi-networking: eth0 on the pod network, then one interface per GPU NIC network."""
    interfaces = [{"interfaceName": PRIMARY_INTERFACE, "network": gpudirect.DEFAULT_NETWORK}]
    interfaces += [{"interfaceName": n.interface, "network": n.name} for n in networks]
    return {
        GKE_DEFAULT_INTERFACE_ANNOTATION: PRIMARY_INTERFACE,
        GKE_INTERFACES_ANNOTATION: json.dumps(interfaces, separators=(",", ":")),
    }


def _gpu_devices(container: str, gpus: int, *extra: str) -> dict[str, str]:
    """The NRI device injector's annotation giving `container` every GPU's device node."""
    paths = [*(f"/dev/nvidia{i}" for i in range(gpus)), "/dev/nvidiactl", "/dev/nvidia-uvm", *extra]
    return {GKE_DEVICES_ANNOTATION.format(container=container): "".join(f"- path: {p}\n" for p in paths)}


def _gpudirect(pool: Pool) -> FabricProfile:
    networks = gpudirect.pod_networks(pool)
    nics = ",".join(n.interface for n in networks)
    # With GKE's accelerator network profile, DRA puts the RDMA NICs into the pod: nothing to attach by name.
    annotations = _gke_annotations(networks) if not pool.dranet else {}
    claims = (
        ({"name": "rdma-nics", "resourceClaimTemplateName": gpudirect.claim_template_name(pool)},)
        if pool.dranet
        else ()
    )
    env = {"LD_LIBRARY_PATH": GKE_NVIDIA_LIBRARIES, "NCCL_SOCKET_IFNAME": PRIMARY_INTERFACE}
    volumes: tuple[dict[str, Any], ...] = (_LIBRARIES,)
    mounts: tuple[dict[str, Any], ...] = (_LIBRARIES_MOUNT,)
    sidecars: tuple[dict[str, Any], ...] = ()
    if pool.fabric == "tcpx":
        env |= {"NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": nics, **_TCPX_ENV}
        socket = {"name": "tcpx-socket", "mountPath": _TCPX_SOCKET}
        volumes += ({"name": "tcpx-socket", "emptyDir": {}}, *_HOST_SYS)
        mounts += (socket,)
        sidecars = (_tcpx_daemon(socket),)
        annotations |= _gpu_devices("tcpx-daemon", pool.gpus_per_node)
    elif pool.fabric == "tcpxo":
        env |= {"NCCL_FASTRAK_IFNAME": nics, **_TCPXO_ENV}
        volumes += ({"name": "aperture-devices", "hostPath": {"path": "/dev/aperture_devices"}}, *_HOST_SYS)
        mounts += ({"name": "aperture-devices", "mountPath": "/dev/aperture_devices"},)
        sidecars = (_tcpxo_daemon(),)
        annotations |= _gpu_devices("tcpxo-daemon", pool.gpus_per_node, "/dev/dmabuf_import_helper")
    else:
        env |= _GIB_ENV
        machine = pool.machine()
        if machine is not None and machine.gib_tuner_config:
            env["NCCL_TUNER_CONFIG_PATH"] = f"{GIB_MOUNT}/configs/{machine.gib_tuner_config}"
        volumes = (
            {"name": "nvidia-install", "hostPath": {"path": "/home/kubernetes/bin/nvidia"}},
            {"name": "gib", "hostPath": {"path": "/home/kubernetes/bin/gib"}},
        )
        mounts = (
            {"name": "nvidia-install", "mountPath": "/usr/local/nvidia"},
            {"name": "gib", "mountPath": GIB_MOUNT},
        )
    return FabricProfile(
        fabric=pool.fabric,
        env=env,
        annotations=annotations,
        capabilities=("IPC_LOCK",),
        interfaces=(PRIMARY_INTERFACE, *(n.interface for n in networks)),
        volumes=volumes,
        mounts=mounts,
        sidecars=sidecars,
        whole_node=True,
        claims=claims,
    )


def _tcpx_daemon(socket: dict[str, Any]) -> dict[str, Any]:
    """The TCPX receive-datapath manager: it owns the GPU NICs' receive queues for NCCL."""
    return {
        "name": "tcpx-daemon",
        "image": versions.TCPX_RXDM_IMAGE,
        "restartPolicy": "Always",
        "command": [
            "/tcpgpudmarxd/build/app/tcpgpudmarxd",
            "--gpu_nic_preset",
            "a3vm",
            "--gpu_shmem_type",
            "fd",
            "--uds_path",
            _TCPX_SOCKET,
            "--setup_param",
            "--verbose 128 2 0 ",
        ],
        "env": [{"name": "LD_LIBRARY_PATH", "value": GKE_NVIDIA_LIBRARIES}],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}},
        "volumeMounts": [_LIBRARIES_MOUNT, socket, *_HOST_SYS_MOUNTS],
    }


def _tcpxo_daemon() -> dict[str, Any]:
    """The TCPXO receive-datapath manager; the startup probe fails the pod early on a node whose
    GPUDirect host components are broken, rather than let NCCL hang."""
    return {
        "name": "tcpxo-daemon",
        "image": versions.TCPXO_RXDM_IMAGE,
        "restartPolicy": "Always",
        "command": ["/bin/sh", "-c"],
        "args": [
            # No --num_nics: the RxDM finds the NICs itself and upstream dropped the flag as deprecated
            # (container-engine-accelerators 992db81 gpudirect-tcpxo/nccl-test-latest.yaml: --num_hops=2 only).
            "set -ex\nchmod 755 /fts/entrypoint_rxdm_container.sh\n/fts/entrypoint_rxdm_container.sh --num_hops=2\n"
        ],
        "env": [
            {"name": "LD_LIBRARY_PATH", "value": GKE_NVIDIA_LIBRARIES},
            {"name": "HEALTH_CHECK_LOG_FILE", "value": _TCPXO_HEALTH_FILE},
        ],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"]}},
        "volumeMounts": [_LIBRARIES_MOUNT, *_HOST_SYS_MOUNTS],
        "startupProbe": {
            "exec": {"command": ["cat", _TCPXO_HEALTH_FILE]},
            "initialDelaySeconds": 1,
            "periodSeconds": 5,
            "failureThreshold": 24,
        },
    }


@dataclass(frozen=True, slots=True)
class Bandwidth:
    """A pool's GPU-fabric bandwidth: what its workers use against what the machine has, and why not all."""

    nics: str
    """The fabric's devices in words, e.g. "32 EFA" or "8 GPU NICs"; empty when there are none."""
    usable: float | None
    """Gbps a worker's fabric reaches; None when the line rate is not known."""
    nominal: float | None
    """Gbps the machine's GPU fabric has; None when not known."""
    shortfall: str | None = None
    """Why `usable` falls short of `nominal`, when it does."""
    beside: str = ""
    """What the machine's published total counts beside its GPU fabric, e.g. "1800 Gbps with the gVNIC"."""

    def describe(self) -> str:
        """E.g. "8 GPU NICs, 1600 of 1600 Gbps (1800 Gbps with the gVNIC)"."""
        parts = [self.nics] if self.nics else []
        if self.usable is not None and self.nominal:
            parts.append(
                f"{_gbps(self.usable)} of {_gbps(self.nominal)} Gbps" + (f" ({self.beside})" if self.beside else "")
            )
        return ", ".join(parts)


def _gbps(value: float) -> str:
    return f"{value:g}"


def _gvnics(pool: Pool) -> str:
    """Google's total for a GPUDirect machine counts its gVNICs, which carry no GPU traffic: say so beside the
    GPU fabric's figure, so that 1600 of A3 Mega's published 1800 Gbps is not read as a loss."""
    machine = pool.machine()
    if machine is None or not machine.gvnic_gbps:
        return ""
    gvnics = 1 + machine.extra_gvnics
    return f"{_gbps(machine.network_gbps)} Gbps with the {f'{gvnics} gVNICs' if gvnics > 1 else 'gVNIC'}"


def bandwidth(pool: Pool, namespace: str | None = None) -> Bandwidth:
    """The pool's GPU-fabric bandwidth account, for workers in `namespace` (default: attaching every network
    of the pool). RoCE / InfiniBand count the rails NCCL can use (Pool.rail_use)."""
    nominal = pool.fabric_gbps or None
    if pool.fabric == "efa":
        return Bandwidth(f"{pool.efa_interfaces} EFA", nominal, nominal)
    if pool.fabric in GPUDIRECT_FABRICS:
        managed = " (metal RoCE VPC, DRA)" if pool.roce_metal else " (GKE-managed, DRA)" if pool.dranet else ""
        return Bandwidth(f"{pool.gpu_nics} GPU NICs{managed}", nominal, nominal, beside=_gvnics(pool))
    use = pool.rail_use(namespace)
    if use is not None:
        nics = f"{use.usable} of {use.total} rails" + (", one per GPU assumed" if use.assumed else "")
        if pool.rail_gbps is None:
            return Bandwidth(nics, None, None, use.limit)
        return Bandwidth(nics, use.usable * pool.rail_gbps, use.total * pool.rail_gbps, use.limit)
    if nominal is None:
        return Bandwidth("", None, None)
    if pool.machine_fabric == "tcp":
        # A machine whose only network is eth0: tcp is its fabric, at its full rate.
        return Bandwidth("eth0", nominal, nominal)
    return Bandwidth(
        "eth0",
        0,
        nominal,
        f"NCCL runs over eth0, not the machine's {pool.machine_fabric} fabric (`fabric: tcp`; drop it to use "
        f"{pool.machine_fabric})",
    )
