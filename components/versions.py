"""Every add-on the platform installs, pinned: chart or manifest, version, and where it comes from.

One module, so that an upgrade is one reviewed diff. Each entry names the upstream it was read
from; docs/versions.md lists them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Chart:
    """A Helm chart at a pinned version."""

    chart: str
    """Chart name, or an oci:// reference when the chart is only published to a registry."""
    version: str
    """Chart version, exactly as the repository spells it (some carry a leading v)."""
    repository: str | None
    """Helm repository URL; None for an oci:// chart."""
    source: str
    """Upstream repository and path of the chart."""


@dataclass(frozen=True, slots=True)
class Remote:
    """Manifests fetched at deploy time: a kustomize overlay or a manifest file, at a pinned ref."""

    kind: str
    """kustomize | manifest."""
    url: str
    """The overlay or file, with the ref in it."""
    ref: str
    """The pinned tag."""
    source: str
    """Upstream repository and path."""
    namespace: str | None = None
    """The namespace its manifests install into (a kustomize overlay's `namespace:`); None for cluster-wide ones."""


GPU_OPERATOR = Chart(
    "gpu-operator", "v26.7.0", "https://helm.ngc.nvidia.com/nvidia", "NVIDIA/gpu-operator deployments/gpu-operator"
)
NETWORK_OPERATOR = Chart(
    "network-operator",
    "26.4.1",
    "https://helm.ngc.nvidia.com/nvidia",
    "Mellanox/network-operator deployment/network-operator",
)
NETWORK_OPERATOR_IMAGE_TAG = "network-operator-v26.4.1"
"""Tag of the operands a NicClusterPolicy deploys (nvcr.io/nvidia/mellanox/<image>:<tag>)."""
SRIOV_NETWORK_OPERATOR = Chart(
    "oci://ghcr.io/k8snetworkplumbingwg/sriov-network-operator-chart",
    "1.6.0",
    None,
    "k8snetworkplumbingwg/sriov-network-operator deployment/sriov-network-operator-chart",
)
VOLCANO = Chart(
    "volcano", "1.15.1", "https://volcano-sh.github.io/helm-charts", "volcano-sh/volcano installer/helm/chart/volcano"
)
KUEUE = Chart("oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", None, "kubernetes-sigs/kueue charts/kueue")
"""Kueue. v0.20.0 was tried for release 0.3.0 (issue 37) and not taken: the Go module proxy this project builds
its engines from answers 403 for sigs.k8s.io/kueue@v0.20.0 and v0.20.1 (2026-11-27), and a version `simulate`
cannot run is not shipped."""
TRAINER = Chart(
    "oci://ghcr.io/kubeflow/charts/kubeflow-trainer", "2.3.0", None, "kubeflow/trainer charts/kubeflow-trainer"
)
"""Kubeflow Trainer v2; the chart installs JobSet 0.12.0 as its dependency (jobset.install). v2.4.0 (DRA claims
per node, `resourceClaimsPerNode`, for ComputeDomain pools) was tried for release 0.3.0 and not taken: the Go
module proxy answers 403 for github.com/kubeflow/trainer/v2@v2.4.0 and v2.4.0-rc.0 (2026-11-27), so v2.3.0 stays,
with Kueue v0.19.2, which needs Trainer v2.3 or later for TrainJobs (kubernetes-sigs/kueue #14886)."""
JOBSET_VERSION = "0.12.0"
"""The JobSet chart the Trainer chart depends on (its Chart.yaml), whose API the training runtimes use."""
TRAINER_MPI_IMAGE = "ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0"
"""The node image of the DeepSpeed and MPI runtimes (the chart's deepspeedDistributed runtime image)."""
TRAINER_TORCH_IMAGE = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
"""The image of the torch runtime when a TrainJob names none (the chart's torch-distributed runtime)."""
TRAINER_TENSORFLOW_IMAGE = "tensorflow/tensorflow:2.20.0-gpu"
"""The image of the tensorflow runtime when a TrainJob names none (Trainer v2.3 ships no TensorFlow runtime)."""
EFA_DEVICE_PLUGIN = Chart(
    "aws-efa-k8s-device-plugin",
    "v0.5.30",
    "https://aws.github.io/eks-charts",
    "aws/eks-charts stable/aws-efa-k8s-device-plugin",
)
AWS_DRANET = Chart("aws-dranet", "1.0.0", "https://aws.github.io/eks-charts", "aws/eks-charts stable/aws-dranet")
"""The AWS EFA DRA driver (dranet; image eks/dranet v1.2.0-eksbuild.2, the chart's appVersion): a DaemonSet
publishing each node's EFA devices as ResourceSlices, and the DeviceClass efa.networking.k8s.aws (aws/eks-charts
@5239609 stable/aws-dranet, added 2026-04-30). EKS recommends it on Kubernetes 1.34 and later with managed or
self-managed node groups, not with Karpenter or Auto Mode (EKS user guide, "Manage EFA devices on Amazon EKS");
the chart's README asks for Kubernetes 1.35."""
EFS_CSI_DRIVER = Chart(
    "aws-efs-csi-driver",
    "4.4.1",
    "https://kubernetes-sigs.github.io/aws-efs-csi-driver/",
    "kubernetes-sigs/aws-efs-csi-driver charts/aws-efs-csi-driver",
)
FSX_CSI_DRIVER = Chart(
    "aws-fsx-csi-driver",
    "1.17.0",
    "https://kubernetes-sigs.github.io/aws-fsx-csi-driver",
    "kubernetes-sigs/aws-fsx-csi-driver charts/aws-fsx-csi-driver",
)
NFS_CSI_DRIVER = Chart(
    "csi-driver-nfs",
    "4.13.4",
    "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts",
    "kubernetes-csi/csi-driver-nfs charts/v4.13.4/csi-driver-nfs",
)
KARPENTER = Chart(
    "oci://public.ecr.aws/karpenter/karpenter", "1.14.1", None, "aws/karpenter-provider-aws charts/karpenter"
)
CLUSTER_AUTOSCALER = Chart(
    "cluster-autoscaler",
    "9.59.0",
    "https://kubernetes.github.io/autoscaler",
    "kubernetes/autoscaler cluster-autoscaler/charts/cluster-autoscaler",
)
NVSENTINEL = Chart(
    "oci://ghcr.io/nvidia/nvsentinel", "v1.31.0", None, "NVIDIA/NVSentinel distros/kubernetes/nvsentinel"
)
"""NVIDIA NVSentinel: GPU and syslog health monitors, fault quarantine, node drainer (existing clusters). The
newest release with versioned docs (docs.nvidia.com/nvsentinel, "Latest · v1.31.0"); charts are tagged with a
leading v (the project README installs `--version v1.19.0`)."""
DRA_DRIVER = Chart(
    "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
    "0.5.0",
    None,
    "kubernetes-sigs/dra-driver-nvidia-gpu deployments/helm/dra-driver-nvidia-gpu",
)
"""The NVIDIA DRA driver (ComputeDomains, for rack-scale NVLink pools): chart and app 0.5.0, the version NVIDIA's AI
Cluster Runtime pins; its Go module sigs.k8s.io/dra-driver-nvidia-gpu v0.5.0 is what `simulate` builds the
ComputeDomain controller from. ComputeDomains are "fully supported"; GPU allocation through DRA is still a
Technology Preview, so the stack turns it off and GPUs stay with the device plugin."""
KUBE_PROMETHEUS_STACK = Chart(
    "kube-prometheus-stack",
    "88.5.3",
    "https://prometheus-community.github.io/helm-charts",
    "prometheus-community/helm-charts charts/kube-prometheus-stack",
)
"""The observability pack's Prometheus when the stack installs one (monitoring.install): Prometheus Operator v0.93.1
(the chart's appVersion), Prometheus v3.14.0, Grafana (subchart 12.11.1), kube-state-metrics (subchart 8.4.0);
tag kube-prometheus-stack-88.5.3 (ea930baee, 2026-08-21). AICR pins 84.4.0 and AIoEKS 82.16.0."""
PROMETHEUS_OPERATOR_VERSION = "v0.93.1"
"""The Prometheus Operator that chart runs: its Go module's CRDs are what the pack's objects are validated against."""
EKS_NODE_MONITORING_AGENT = "v1.7.0-eksbuild.1"
"""The EKS add-on `eks-node-monitoring-agent` (aws/eks-node-monitoring-agent v1.7.0, 2026-08-04: the chart's
nodeAgent.image.tag). Its CI runs the e2e suite on the newest EKS Kubernetes version; the add-on's own
compatibility list (`aws eks describe-addon-versions --addon-name eks-node-monitoring-agent
--kubernetes-version 1.35`) could not be read offline."""
MOUNTPOINT_S3_CSI_ADDON = "v2.7.0-eksbuild.1"
"""The EKS add-on `aws-mountpoint-s3-csi-driver` for s3 volumes: awslabs/mountpoint-s3-csi-driver v2.7.0
(2026-06-11, chart 2.7.0, the newest release; Mountpoint 1.22.3 inside, whose mount options and IAM actions
components/manifests/storage.py and components/aws/iam.py use). EKS builds are named vX.Y.Z-eksbuild.N; the first
build of v2.7.0 is assumed, as `aws eks describe-addon-versions --addon-name aws-mountpoint-s3-csi-driver` could not
be read offline."""
CLUSTER_AUTOSCALER_IMAGES = {
    "1.29": "v1.29.5",
    "1.30": "v1.30.7",
    "1.31": "v1.31.5",
    "1.32": "v1.32.7",
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
}
"""The newest Cluster Autoscaler of each Kubernetes minor (kubernetes/autoscaler tags
cluster-autoscaler-1.N.P): it is released per minor and should match the cluster's."""


def provisioning_request_crd(kubernetes_version: str) -> Remote:
    """The ProvisioningRequest CRD (autoscaling.x-k8s.io/v1) at the tag of the Cluster Autoscaler released for the
    cluster's minor: its chart (9.59.0) grants the autoscaler the RBAC for ProvisioningRequests but installs no CRD
    (cluster-autoscaler/charts/cluster-autoscaler has no crds/; FAQ.md "Enabling ProvisioningRequest Support")."""
    tag = f"cluster-autoscaler-{CLUSTER_AUTOSCALER_IMAGES[kubernetes_version].removeprefix('v')}"
    path = "cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
    return Remote(
        "manifest",
        f"https://raw.githubusercontent.com/kubernetes/autoscaler/{tag}/{path}",
        tag,
        f"kubernetes/autoscaler {path}",
    )


TRAINING_OPERATOR = Remote(
    "kustomize",
    "https://github.com/kubeflow/trainer.git/manifests/overlays/standalone?ref=v1.9.4",
    "v1.9.4",
    "kubeflow/trainer manifests/overlays/standalone (the Training Operator v1 line)",
    namespace="kubeflow",
)
MPI_OPERATOR = Remote(
    "kustomize",
    "https://github.com/kubeflow/mpi-operator.git/manifests/overlays/standalone?ref=v0.8.0",
    "v0.8.0",
    "kubeflow/mpi-operator manifests/overlays/standalone",
    namespace="mpi-operator",
)
MULTUS = Remote(
    "manifest",
    "https://raw.githubusercontent.com/k8snetworkplumbingwg/multus-cni/v4.3.0/deployments/multus-daemonset-thick.yml",
    "v4.3.0",
    "k8snetworkplumbingwg/multus-cni deployments/multus-daemonset-thick.yml",
)
MULTUS_IMAGE = "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick"
"""The release image: the manifest itself names the moving `snapshot-thick` tag even at release tags."""
WHEREABOUTS_VERSION = "v0.9.4"
WHEREABOUTS = tuple(
    Remote(
        "manifest",
        f"https://raw.githubusercontent.com/k8snetworkplumbingwg/whereabouts/{WHEREABOUTS_VERSION}/doc/crds/{f}",
        WHEREABOUTS_VERSION,
        f"k8snetworkplumbingwg/whereabouts doc/crds/{f}",
    )
    for f in (
        "whereabouts.cni.cncf.io_ippools.yaml",
        "whereabouts.cni.cncf.io_overlappingrangeipreservations.yaml",
        "daemonset-install.yaml",
        "reconciler-deployment.yaml",
    )
)
WHEREABOUTS_IMAGE = f"ghcr.io/k8snetworkplumbingwg/whereabouts:{WHEREABOUTS_VERSION}"
"""The release image: the manifests at every tag name `:latest`, which is built from master."""

CHARTS = {
    "gpu-operator": GPU_OPERATOR,
    "network-operator": NETWORK_OPERATOR,
    "sriov-network-operator": SRIOV_NETWORK_OPERATOR,
    "volcano": VOLCANO,
    "kueue": KUEUE,
    "kubeflow-trainer": TRAINER,
    "aws-efa-k8s-device-plugin": EFA_DEVICE_PLUGIN,
    "aws-dranet": AWS_DRANET,
    "aws-efs-csi-driver": EFS_CSI_DRIVER,
    "aws-fsx-csi-driver": FSX_CSI_DRIVER,
    "csi-driver-nfs": NFS_CSI_DRIVER,
    "karpenter": KARPENTER,
    "cluster-autoscaler": CLUSTER_AUTOSCALER,
    "nvsentinel": NVSENTINEL,
    "dra-driver-nvidia-gpu": DRA_DRIVER,
    "kube-prometheus-stack": KUBE_PROMETHEUS_STACK,
}
"""Every chart, by the name its values are checked under."""

# GKE GPUDirect. The NCCL plugin installers run as DaemonSets this stack writes (components/addons/gpudirect.py),
# from the images Google publishes; each RxDM sidecar is coupled to its installer's version. Sources:
# GoogleCloudPlatform/container-engine-accelerators @992db81 (2026-06-11): gpudirect-tcpx/nccl-tcpx-installer.yaml,
# gpudirect-tcpxo/README.md (release of 2026-01-09: installer v1.0.15, daemon v1.0.21, NCCL 2.28.7-1),
# gpudirect-rdma/nccl-rdma-installer.yaml (gIB v1.1.1), nri_device_injector/nri-device-injector.yaml.
GPUDIRECT_REGISTRY = "us-docker.pkg.dev/gce-ai-infra"
TCPX_PLUGIN_IMAGE = f"{GPUDIRECT_REGISTRY}/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9"
"""The TCPX NCCL plugin installer (A3 High)."""
TCPX_RXDM_IMAGE = f"{GPUDIRECT_REGISTRY}/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12"
"""The TCPX receive-datapath manager, a sidecar of every worker."""
TCPXO_PLUGIN_IMAGE = f"{GPUDIRECT_REGISTRY}/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"
"""The TCPXO NCCL plugin installer (A3 Mega); it ships NCCL 2.28 too."""
TCPXO_RXDM_IMAGE = f"{GPUDIRECT_REGISTRY}/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"
"""The TCPXO receive-datapath manager, a sidecar of every worker."""
GIB_PLUGIN_IMAGE = f"{GPUDIRECT_REGISTRY}/gpudirect-gib/nccl-plugin-gib:v1.1.1"
"""The gIB NCCL plugin installer (RDMA on A3 Ultra and A4); gIB needs NCCL 2.23 or later in the image."""
# Google Cloud, "NCCL/gIB release notes (ARM64)", https://cloud.google.com/ai-hypercomputer/docs/nccl/release-notes-arm64:
# v1.1.2 (2026-05-14), sha256 6b7950cac6e6833661d4206920f5633b6e361b18bfd5315b63f9bf4a4b84a80e, bundles NCCL 2.30.4,
# supports A4X (NCCL 2.25 or later in the image) and A4X Max (NCCL 2.28.9 or later), GPU driver 580.95.05 or later,
# CUDA 13.0. cluster-toolkit v1.95.0 examples/gke-a4x installs the same image at v1.1.0.
GIB_PLUGIN_IMAGE_ARM64 = f"{GPUDIRECT_REGISTRY}/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.2"
"""The gIB NCCL plugin installer for arm64 nodes (RDMA on A4X and A4X Max)."""
NRI_DEVICE_INJECTOR_IMAGE = (
    "gcr.io/gke-release/nri-device-injector@sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970"
)
"""Puts the GPU device nodes into the RxDM sidecars named by a pod's devices.gke.io annotation."""
GKE_PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
"""What an installer DaemonSet's pod runs once its init containers have installed the plugin."""
HOST_TOOLS_IMAGE = "ubuntu:24.04"
"""Runs nsenter into the host for the TCPXO installer's node preparation (upstream names bare `ubuntu`)."""
