"""Names that many layers read: where each add-on runs and what it is installed as, and the node labels and taint
keys that pools, jobs, checks and rules share. Data only, imported by the
add-ons that install them, the rules that judge what runs there, and the launchers that decide which operators run."""

from __future__ import annotations

SYSTEM_NAMESPACE = "kube-system"
"""Kubernetes' own namespace, where Multus, whereabouts, the EFA device plugin, Karpenter, the Cluster Autoscaler and
GKE's GPUDirect installers run."""
GPU_OPERATOR_NAMESPACE = "gpu-operator"
NETWORK_OPERATOR_NAMESPACE = "nvidia-network-operator"
SRIOV_NAMESPACE = "sriov-network-operator"
DRA_DRIVER_NAMESPACE = "nvidia-dra-driver-gpu"
NVSENTINEL_NAMESPACE = "nvsentinel"
TRAINER_NAMESPACE = "kubeflow-system"
VOLCANO_NAMESPACE = "volcano-system"
KUEUE_NAMESPACE = "kueue-system"
NODE_CHECK_NAMESPACE = "gpu-node-check"
"""Where the node check runs: its own namespace, outside every GPU quota of the jobs' namespaces."""

TRAINER_INSTALL = "kubeflow-trainer"
TRAINING_OPERATOR_INSTALL = "training-operator"
MPI_OPERATOR_INSTALL = "mpi-operator"
"""The install names of the operators (a stack's `addons` output lists those it installed)."""
VOLCANO_INSTALL = "volcano"
KUEUE_INSTALL = "kueue"
MULTUS_INSTALL = "multus"
WHEREABOUTS_INSTALL = "whereabouts"
NETWORK_OPERATOR_INSTALL = "network-operator"
SRIOV_INSTALL = "sriov-network-operator"
EFA_INSTALL = "aws-efa-k8s-device-plugin"
EFA_DRA_INSTALL = "aws-dranet"

POOL_LABEL = "gpu-training/pool"
"""The node label that pools this stack creates carry, and that jobs select on."""
GPU_PRESENT_LABEL = {"nvidia.com/gpu.present": "true"}
"""The label GPU Feature Discovery (run by the GPU Operator) puts on every node with an NVIDIA GPU."""
GPU_TAINT_KEY = "nvidia.com/gpu"
"""The taint key of GPU nodes (EKS and GKE taint them with it), which every GPU pod tolerates."""
NODE_CHECK_KEY = "gpu-training/node-check"
"""The label a checked pool's nodes come up with (`required`): where the node check runs. In earlier releases it
was the startup taint's key too (`pending`, then `failed`)."""
STARTUP_TAINT_PREFIX = "startup-taint.cluster-autoscaler.kubernetes.io/"
"""A taint under this prefix is a startup taint to the Cluster Autoscaler with no flag (kubernetes/autoscaler
cluster-autoscaler/utils/taints/taints.go StartupTaintPrefix): it is left out of node-group templates, so a
pod that does not tolerate it still scales the group up, and a node carrying it counts as starting."""
