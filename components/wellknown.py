"""Names that many layers read: where each add-on runs and what it is installed as. Data only, imported by the
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
