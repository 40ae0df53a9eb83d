"""GKE GPUDirect in the cluster: a GKENetworkParamSet and a Network per GPU NIC network, the NCCL plugin
installer of each fabric, and the NRI device injector the TCPX / TCPXO sidecars need.

The installers follow Google's DaemonSets (GoogleCloudPlatform/container-engine-accelerators @992db81:
gpudirect-tcpx/nccl-tcpx-installer.yaml, gpudirect-tcpxo/nccl-tcpxo-installer.yaml,
gpudirect-rdma/nccl-rdma-installer.yaml, nri_device_injector/nri-device-injector.yaml), written here so that
their images are pinned in components/versions.py and they run on this stack's pools only.
"""

from __future__ import annotations

from typing import Any

from components import gpudirect, versions
from components.models.nodepool import GPUDIRECT_FABRICS
from components.pool import Pool
from components.stack import Stack
from components.wellknown import POOL_LABEL
from components.wellknown import SYSTEM_NAMESPACE as NAMESPACE

GROUP = "networking.gke.io"
API_VERSION = f"{GROUP}/v1"
INSTALLERS = {"tcpx": "nccl-tcpx-installer", "tcpxo": "nccl-tcpxo-installer", "rdma": "nccl-rdma-installer"}
"""The installer DaemonSet of each fabric (on x86_64 nodes; see GIB_INSTALLERS for rdma on each architecture)."""
GIB_INSTALLERS = {"x86_64": ("nccl-rdma-installer", versions.GIB_PLUGIN_IMAGE)}
GIB_INSTALLERS["arm64"] = ("nccl-rdma-installer-arm64", versions.GIB_PLUGIN_IMAGE_ARM64)
"""The gIB installer DaemonSet and its image for each CPU architecture (Pool.arch); Google builds one image per
architecture (cluster-toolkit v1.95.0 examples/gke-a4x: nccl-plugin-gib-arm64 on Grace)."""
DEVICE_INJECTOR = "device-injector"


def gpudirect_pools(stack: Stack) -> list[Pool]:
    """The stack's pools on a GPUDirect fabric."""
    return [p for p in stack.pools.values() if p.fabric in GPUDIRECT_FABRICS]


def network_objects(cluster: str, networks: tuple[gpudirect.GpuNetwork, ...]) -> list[dict[str, Any]]:
    """A GKENetworkParamSet (VPC, subnet, device mode) and a Device Network per GPU network."""
    out: list[dict[str, Any]] = []
    for net in networks:
        out.append(
            {
                "apiVersion": API_VERSION,
                "kind": "GKENetworkParamSet",
                "metadata": {"name": net.name},
                "spec": {
                    "vpc": gpudirect.vpc_name(cluster, net),
                    "vpcSubnet": gpudirect.subnet_name(cluster, net),
                    "deviceMode": net.device_mode,
                },
            }
        )
        out.append(
            {
                "apiVersion": API_VERSION,
                "kind": "Network",
                "metadata": {"name": net.name},
                "spec": {
                    "type": "Device",
                    "parametersRef": {"group": GROUP, "kind": "GKENetworkParamSet", "name": net.name},
                },
            }
        )
    return out


def _daemonset(name: str, pools: list[Pool], spec: dict[str, Any]) -> dict[str, Any]:
    """A kube-system DaemonSet on these pools' nodes, tolerating every taint (like GKE's own node agents),
    in the pod network: installing files and injecting devices need no host network."""
    labels = {"k8s-app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": POOL_LABEL,
                                                "operator": "In",
                                                "values": sorted(p.name for p in pools),
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": [{"operator": "Exists"}],
                    **spec,
                },
            },
        },
    }


_PAUSE = [{"name": "pause", "image": versions.GKE_PAUSE_IMAGE, "resources": {"requests": {"cpu": "10m"}}}]
_INSTALL_REQUESTS = {"requests": {"cpu": "150m"}}


def _installer(name: str, image: str, script: str, mounts: dict[str, str]) -> dict[str, Any]:
    """A privileged init container that runs an NCCL plugin image's install script, then `script`'s copies."""
    return {
        "name": name,
        "image": image,
        "resources": _INSTALL_REQUESTS,
        "securityContext": {"privileged": True},
        "command": ["/bin/sh", "-c"],
        "args": ["set -ex\n" + script],
        "volumeMounts": [{"name": volume, "mountPath": path} for volume, path in mounts.items()],
    }


def _tcp_installer(fabric: str, image: str, pools: list[Pool]) -> dict[str, Any]:
    """TCPX / TCPXO: the plugin (and, for TCPXO, NCCL itself) copied next to GKE's NVIDIA libraries."""
    lib = f"/var/lib/{fabric}/lib64"
    install = _installer(
        INSTALLERS[fabric],
        image,
        "/scripts/container_entry.sh install --install-nccl\n"
        "mkdir -p /usr/local/nvidia/lib64\n"
        f"cp -r {lib}/. /usr/local/nvidia/lib64\n",
        {"var-lib": "/var/lib", "library-dir-host": "/usr/local"},
    )
    init = [install]
    host: dict[str, Any] = {}
    if fabric == "tcpxo":
        init.insert(0, _tcpxo_node_preparation())
        host["hostPID"] = True
    # Google's installers also run on the host network; copying files needs none of it, and no
    # training-pod rule has to make an exception for them.
    return _daemonset(
        INSTALLERS[fabric],
        pools,
        {
            **host,
            "volumes": [
                {"name": "var-lib", "hostPath": {"path": "/var/lib"}},
                {"name": "library-dir-host", "hostPath": {"path": "/home/kubernetes/bin"}},
            ],
            "initContainers": init,
            "containers": _PAUSE,
        },
    )


# TCPXO's data path reads the NICs' aperture (PCI BAR) devices, which the node exposes under
# /dev/aperture_devices once each (vendor 1ae0, device 0084) is bind-mounted there; it also needs the
# import-helper kernel module loaded and the host accepting the plugin's TCP connections.
_TCPXO_PREPARE = """set -ex
/sbin/iptables -I INPUT -p tcp -m tcp -j ACCEPT
modprobe import-helper
mkdir -p /dev/aperture_devices
lspci -nn -D | grep '1ae0:0084' | awk '{print $1}' | while read -r bdf; do
  target=/dev/aperture_devices/$bdf
  mkdir -p "$target"
  umount -R "$target" 2>/dev/null || true
  mount --bind "$(readlink -f /sys/bus/pci/devices/$bdf)" "$target"
done
chmod -R a+r /dev/aperture_devices/
# Only when a device was bound: an unmatched glob would fail the step and crash-loop the installer
# (upstream gpudirect-tcpxo/nccl-tcpxo-installer.yaml guards these chmods too).
for resource in /dev/aperture_devices/*/resource*; do
  if [ -e "$resource" ]; then chmod a+rw "$resource"; fi
done
"""


def _tcpxo_node_preparation() -> dict[str, Any]:
    """Runs the preparation in the host's namespaces (the pod shares the host's PIDs; nsenter into PID 1)."""
    return {
        "name": "pre-installation",
        "image": versions.HOST_TOOLS_IMAGE,
        "securityContext": {"privileged": True},
        "command": ["nsenter", "-at", "1", "--", "bash", "-c", _TCPXO_PREPARE],
    }


def _gib_installer(pools: list[Pool], arch: str = "x86_64") -> dict[str, Any]:
    """RDMA: the gIB plugin of the pools' CPU architecture and its NCCL environment scripts, in
    /home/kubernetes/bin/gib."""
    name, image = GIB_INSTALLERS[arch]
    return _daemonset(
        name,
        pools,
        {
            "volumes": [
                {
                    "name": "library-dir-host",
                    "hostPath": {"path": "/home/kubernetes/bin/nvidia/lib64", "type": "DirectoryOrCreate"},
                },
                {"name": "gib", "hostPath": {"path": "/home/kubernetes/bin/gib"}},
            ],
            "initContainers": [
                _installer(
                    INSTALLERS["rdma"],
                    image,
                    "/scripts/container_entry.sh install\n"
                    "cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64\n"
                    "cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib\n",
                    {
                        "library-dir-host": "/usr/local/home/kubernetes/bin/nvidia/lib64",
                        "gib": "/usr/local/home/kubernetes/bin/gib",
                    },
                )
            ],
            "containers": _PAUSE,
        },
    )


def _device_injector(pools: list[Pool]) -> dict[str, Any]:
    """Gives the RxDM sidecars the GPU device nodes their pod's devices.gke.io annotation lists."""
    return _daemonset(
        DEVICE_INJECTOR,
        pools,
        {
            "containers": [
                {
                    "name": DEVICE_INJECTOR,
                    "image": versions.NRI_DEVICE_INJECTOR_IMAGE,
                    "resources": _INSTALL_REQUESTS,
                    "securityContext": {"privileged": True},
                    "volumeMounts": [
                        {"name": "dev", "mountPath": "/dev"},
                        {"name": "nri", "mountPath": "/var/run/nri"},
                    ],
                }
            ],
            "volumes": [
                {"name": "dev", "hostPath": {"path": "/dev"}},
                {"name": "nri", "hostPath": {"path": "/var/run/nri"}},
            ],
        },
    )


def installers(pools: list[Pool]) -> list[dict[str, Any]]:
    """The NCCL plugin installer of each fabric the pools use, and the device injector for TCPX / TCPXO."""
    by_fabric: dict[str, list[Pool]] = {}
    for pool in pools:
        by_fabric.setdefault(pool.fabric, []).append(pool)
    out: list[dict[str, Any]] = []
    if "tcpx" in by_fabric:
        out.append(_tcp_installer("tcpx", versions.TCPX_PLUGIN_IMAGE, by_fabric["tcpx"]))
    if "tcpxo" in by_fabric:
        out.append(_tcp_installer("tcpxo", versions.TCPXO_PLUGIN_IMAGE, by_fabric["tcpxo"]))
    for arch in GIB_INSTALLERS:
        rdma = [p for p in by_fabric.get("rdma", []) if p.arch == arch]
        if rdma:
            out.append(_gib_installer(rdma, arch))
    sidecar_pools = [p for p in pools if p.fabric in ("tcpx", "tcpxo")]
    if sidecar_pools:
        out.append(_device_injector(sidecar_pools))
    return out


def objects(stack: Stack) -> list[dict[str, Any]]:
    """Every GPUDirect object of the stack: the networks, then the installers."""
    pools = gpudirect_pools(stack)
    if not pools:
        return []
    # Network objects are for pods that attach networks by name; bare metal's pods claim their NICs through DRANET.
    networks = gpudirect.cluster_networks(gpudirect.multinetwork_pools(pools))
    claims = [
        gpudirect.claim_template(pool, namespace)
        for pool in pools
        if pool.dranet
        for namespace in sorted({plan.namespace for plan in stack.jobs if plan.pool.name == pool.name})
    ]
    return [*network_objects(stack.config.cluster.name, networks), *installers(pools), *claims]
