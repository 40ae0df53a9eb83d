"""The add-ons' per-node DaemonSets, as their pinned charts and manifests set them: what each pod requests of every
node it lands on, which nodes it selects, what it tolerates, and what switches it on. Plain data, each with its source.

The stack's own DaemonSets (the node check, GKE's GPUDirect installers) are not here: they are read from the objects
render emits. Where a chart sets no requests, a DaemonSet is listed with none, and says so: it still runs on the
node, but takes nothing from the scheduler's count. Left out: EKS's and GKE's own node agents (the VPC CNI, kube-proxy,
GKE's logging and metadata agents), which the cloud installs and the kubelet's reservation does not cover either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from components import versions

Lands = Literal["all", "gpu", "efa", "rdma"]
"""Which nodes a DaemonSet selects: every node; every GPU node (the GPU Operator labels each node with an NVIDIA GPU
nvidia.com/gpu.deploy.<operand>=true once it joins, and its operands select those labels); nodes whose machine has
EFA (the EFA charts' node affinity lists EFA instance types); the InfiniBand and RoCE pools' nodes (the
NicClusterPolicy's node affinity, which components/addons/network.py sets to those pools)."""

Toleration = Mapping[str, str]

_GPU_TOLERATION: Toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
_ALL: tuple[Toleration, ...] = ({"operator": "Exists"},)
_NO_SCHEDULE: tuple[Toleration, ...] = ({"operator": "Exists", "effect": "NoSchedule"},)


@dataclass(frozen=True, slots=True)
class AddonDaemonSet:
    """One DaemonSet an add-on runs: its pod's requests per container, where it lands, and where that is read."""

    install: str
    """The Helm release or remote install that makes it (components/addons names)."""
    name: str
    """The DaemonSet's name, as the cluster shows it."""
    version: str
    """The chart or manifest version the facts were read at (components/versions.py pins it)."""
    source: str
    """The file(s) the requests, selection and tolerations were read from."""
    containers: tuple[Mapping[str, str], ...] = ()
    """Each container's requests; empty mappings where the chart sets none."""
    init: tuple[Mapping[str, str], ...] = ()
    """Each init container's requests."""
    lands: Lands = "all"
    """Which nodes it selects."""
    tolerations: tuple[Toleration, ...] = ()
    """Its tolerations when the stack's values set none (the chart's defaults)."""
    tolerations_value: tuple[str, ...] | None = None
    """The values key that replaces `tolerations` (Helm replaces a list whole); None when no value sets them."""
    added_tolerations: tuple[Toleration, ...] = ()
    """Tolerations its template adds whatever the values say."""
    switch: tuple[str, ...] | None = None
    """The values key that turns it on or off; None when it always runs with its install."""
    default_on: bool = True
    """Whether it runs when `switch` is unset."""


_GPU_OPERATOR = f"NVIDIA/gpu-operator {versions.GPU_OPERATOR.version}"


def _gpu_operand(name: str, source: str, switch: tuple[str, ...] | None = None, *, on: bool = True) -> AddonDaemonSet:
    """A GPU Operator operand: on every GPU node, tolerating daemonsets.tolerations, requesting nothing."""
    return AddonDaemonSet(
        install="gpu-operator",
        name=name,
        version=versions.GPU_OPERATOR.version,
        source=f"{_GPU_OPERATOR} {source}",
        containers=({},),
        lands="gpu",
        tolerations=(_GPU_TOLERATION,),
        tolerations_value=("daemonsets", "tolerations"),
        switch=switch,
        default_on=on,
    )


_NIC_POLICY = f"Mellanox/network-operator {versions.NETWORK_OPERATOR.version}"


def _nic_operand(
    name: str, source: str, switch: tuple[str, ...], containers: Mapping[str, str], *, init: bool = False
) -> AddonDaemonSet:
    """A NicClusterPolicy operand: on the RDMA pools' nodes when its key is in the policy's spec ("policy")."""
    return AddonDaemonSet(
        install="network-operator",
        name=name,
        version=versions.NETWORK_OPERATOR.version,
        source=f"{_NIC_POLICY} {source}",
        containers=(containers,),
        init=({},) if init else (),
        lands="rdma",
        tolerations_value=("policy", "tolerations"),
        added_tolerations=(_GPU_TOLERATION,),
        switch=("policy", *switch),
        default_on=False,
    )


_NVSENTINEL = (
    f"NVIDIA/NVSentinel distros/kubernetes/nvsentinel (the stored commits named; the {versions.NVSENTINEL.version} "
    "tag itself could not be read here)"
)

ADDON_DAEMONSETS: tuple[AddonDaemonSet, ...] = (
    # GPU Operator: every operand's resources are {} in values.yaml, and its assets/state-*/*daemonset* templates set
    # none (only the sandbox operands cc-manager and vfio-manager do, which run on vm-passthrough nodes only). No
    # operand requests nvidia.com/gpu; the validator's CUDA check is a one-off Pod, not a DaemonSet.
    _gpu_operand("nvidia-driver-daemonset", "values.yaml driver.resources {}", ("driver", "enabled")),
    _gpu_operand("nvidia-container-toolkit-daemonset", "values.yaml toolkit.resources {}", ("toolkit", "enabled")),
    _gpu_operand(
        "nvidia-device-plugin-daemonset", "values.yaml devicePlugin.resources {}", ("devicePlugin", "enabled")
    ),
    _gpu_operand("nvidia-dcgm", "values.yaml dcgm.enabled false, dcgm.resources {}", ("dcgm", "enabled"), on=False),
    _gpu_operand("nvidia-dcgm-exporter", "values.yaml dcgmExporter.resources {}", ("dcgmExporter", "enabled")),
    _gpu_operand("gpu-feature-discovery", "values.yaml gfd.resources {}", ("gfd", "enabled")),
    _gpu_operand(
        "nvidia-mig-manager", "values.yaml migManager.resources {} (MIG-capable GPUs)", ("migManager", "enabled")
    ),
    _gpu_operand("nvidia-operator-validator", "values.yaml validator.resources {}"),
    _gpu_operand(
        "nvidia-node-status-exporter",
        "values.yaml nodeStatusExporter.enabled false",
        ("nodeStatusExporter", "enabled"),
        on=False,
    ),
    AddonDaemonSet(
        install="gpu-operator",
        name="gpu-operator-node-feature-discovery-worker",
        version=versions.GPU_OPERATOR.version,
        source=f"{_GPU_OPERATOR} charts/node-feature-discovery (0.19.0) values.yaml worker.resources; the operator's "
        "values.yaml node-feature-discovery.worker.tolerations",
        containers=({"cpu": "5m", "memory": "64Mi"},),
        tolerations=(
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule"},
            _GPU_TOLERATION,
        ),
        tolerations_value=("node-feature-discovery", "worker", "tolerations"),
        switch=("nfd", "enabled"),
    ),
    # The Network Operator's NicClusterPolicy operands: the policy's tolerations, and nvidia.com/gpu which each
    # template adds. Each runs when its key is in the policy ("policy" is the NicClusterPolicy's spec); none requests
    # anything unless the policy sets containerResources.
    _nic_operand(
        "rdma-shared-dp-ds",
        "manifests/state-rdma-shared-device-plugin/0060_rdma-shared-dev-plugin-ds.yaml",
        ("rdmaSharedDevicePlugin",),
        {},
    ),
    _nic_operand(
        "cni-plugins-ds",
        "manifests/state-container-networking-plugins/0010-container-networking-plugins-ds.yml (its default)",
        ("secondaryNetwork", "cniPlugins"),
        {"cpu": "100m", "memory": "50Mi"},
    ),
    _nic_operand(
        "kube-ipoib-cni-ds",
        "manifests/state-ipoib-cni/0050-ipoib-cni-ds.yml (its default)",
        ("secondaryNetwork", "ipoib"),
        {"cpu": "100m", "memory": "50Mi"},
    ),
    _nic_operand(
        "mofed",
        "manifests/state-ofed-driver/0050_ofed-driver-ds.yaml (driver and init container)",
        ("ofedDriver",),
        {},
        init=True,
    ),
    AddonDaemonSet(
        install="network-operator",
        name="network-operator-node-feature-discovery-worker",
        version=versions.NETWORK_OPERATOR.version,
        source=f"{_NIC_POLICY} deployment/network-operator/charts/node-feature-discovery values.yaml "
        "worker.resources; the chart's values.yaml node-feature-discovery.worker.tolerations",
        containers=({"cpu": "5m", "memory": "64Mi"},),
        tolerations=(
            {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
            _GPU_TOLERATION,
        ),
        tolerations_value=("node-feature-discovery", "worker", "tolerations"),
        switch=("nfd", "enabled"),
    ),
    AddonDaemonSet(
        install="aws-efa-k8s-device-plugin",
        name="aws-efa-k8s-device-plugin-daemonset",
        version=versions.EFA_DEVICE_PLUGIN.version,
        source=f"aws/eks-charts @5239609 (chart {versions.EFA_DEVICE_PLUGIN.version}) stable/aws-efa-k8s-device-plugin "
        "values.yaml resources, tolerations []; "
        "templates/daemonset.yaml (node affinity: supportedInstanceLabels)",
        containers=({"cpu": "10m", "memory": "20Mi"},),
        lands="efa",
        tolerations_value=("tolerations",),
    ),
    AddonDaemonSet(
        install="aws-dranet",
        name="aws-dranet",
        version=versions.AWS_DRANET.version,
        source=f"aws/eks-charts @5239609 (chart {versions.AWS_DRANET.version}) stable/aws-dranet values.yaml "
        "resources, tolerations []",
        containers=({"cpu": "100m", "memory": "50Mi"},),
        lands="efa",
        tolerations_value=("tolerations",),
    ),
    AddonDaemonSet(
        install="multus",
        name="kube-multus-ds",
        version=versions.MULTUS.ref,
        source=f"k8snetworkplumbingwg/multus-cni {versions.MULTUS.ref} deployments/multus-daemonset-thick.yml",
        containers=({"cpu": "100m", "memory": "50Mi"},),
        init=({"cpu": "10m", "memory": "15Mi"},),
        tolerations=(
            {"operator": "Exists", "effect": "NoSchedule"},
            {"operator": "Exists", "effect": "NoExecute"},
        ),
    ),
    AddonDaemonSet(
        install="whereabouts",
        name="whereabouts",
        version=versions.WHEREABOUTS_VERSION,
        source=f"k8snetworkplumbingwg/whereabouts {versions.WHEREABOUTS_VERSION} doc/crds/daemonset-install.yaml",
        containers=({"cpu": "100m", "memory": "100Mi"},),
        tolerations=_NO_SCHEDULE,
    ),
    AddonDaemonSet(
        install="csi-driver-nfs",
        name="csi-nfs-node",
        version=versions.NFS_CSI_DRIVER.version,
        source=f"kubernetes-csi/csi-driver-nfs charts/v{versions.NFS_CSI_DRIVER.version}/csi-driver-nfs values.yaml "
        "node.resources (liveness-probe, node-driver-registrar, nfs)",
        containers=({"cpu": "10m", "memory": "20Mi"},) * 3,
        tolerations=_ALL,
        tolerations_value=("node", "tolerations"),
    ),
    AddonDaemonSet(
        install="aws-efs-csi-driver",
        name="efs-csi-node",
        version=versions.EFS_CSI_DRIVER.version,
        source=f"kubernetes-sigs/aws-efs-csi-driver helm-chart-aws-efs-csi-driver-{versions.EFS_CSI_DRIVER.version} "
        "values.yaml node.resources {}, sidecars.*.resources {}",
        containers=({}, {}, {}),
        tolerations=_ALL,
        tolerations_value=("node", "tolerations"),
    ),
    AddonDaemonSet(
        install="aws-fsx-csi-driver",
        name="fsx-csi-node",
        version=versions.FSX_CSI_DRIVER.version,
        source=f"kubernetes-sigs/aws-fsx-csi-driver helm-chart-aws-fsx-csi-driver-{versions.FSX_CSI_DRIVER.version} "
        "values.yaml node.resources, sidecars.nodeDriverRegistrar and livenessProbe resources; node.tolerateAllTaints",
        containers=(
            {"cpu": "10m", "memory": "40Mi"},
            {"cpu": "10m", "memory": "32Mi"},
            {"cpu": "10m", "memory": "32Mi"},
        ),
        tolerations=_ALL,
    ),
    AddonDaemonSet(
        install="kube-prometheus-stack",
        name="prometheus-node-exporter",
        version=versions.KUBE_PROMETHEUS_STACK.version,
        source="prometheus-community/helm-charts prometheus-node-exporter-4.56.1 (kube-prometheus-stack-"
        f"{versions.KUBE_PROMETHEUS_STACK.version}'s dependency) values.yaml resources {{}}, tolerations",
        containers=({},),
        tolerations=_NO_SCHEDULE,
        tolerations_value=("prometheus-node-exporter", "tolerations"),
        switch=("nodeExporter", "enabled"),
    ),
    AddonDaemonSet(
        install="nvidia-dra-driver-gpu",
        name="nvidia-dra-driver-gpu-kubelet-plugin",
        version=versions.DRA_DRIVER.version,
        source="kubernetes-sigs/dra-driver-nvidia-gpu @9593204 (0.5.0-dev) deployments/helm/dra-driver-nvidia-gpu "
        "values.yaml kubeletPlugin.containers.*.resources {}",
        containers=({}, {}),
        init=({},),
        lands="gpu",
        tolerations=_ALL,
    ),
    AddonDaemonSet(
        install="nvsentinel",
        name="gpu-health-monitor",
        version=versions.NVSENTINEL.version,
        source=f"{_NVSENTINEL}: charts/gpu-health-monitor/values.yaml @111c031 resources, nodeSelector "
        "nvidia.com/gpu.present",
        containers=({"cpu": "100m", "memory": "128Mi"},),
        lands="gpu",
        tolerations=({"operator": "Exists", "effect": "NoSchedule"}, {"operator": "Exists", "effect": "NoExecute"}),
        tolerations_value=("global", "tolerations"),
        switch=("global", "gpuHealthMonitor", "enabled"),
    ),
    AddonDaemonSet(
        install="nvsentinel",
        name="syslog-health-monitor",
        version=versions.NVSENTINEL.version,
        source=f"{_NVSENTINEL}: charts/syslog-health-monitor/values.yaml @2a6e1f1 resources",
        containers=({"cpu": "100m", "memory": "128Mi"},),
        tolerations_value=("global", "tolerations"),
        switch=("global", "syslogHealthMonitor", "enabled"),
    ),
    AddonDaemonSet(
        install="nvsentinel",
        name="platform-connectors",
        version=versions.NVSENTINEL.version,
        source=f"{_NVSENTINEL}: values.yaml @033cd49 platformConnector.resources; templates/daemonset.yaml",
        containers=({"cpu": "200m", "memory": "512Mi"},),
        tolerations_value=("global", "tolerations"),
    ),
)
"""Every add-on DaemonSet the stack may install, as its pinned chart or manifest sets it."""
