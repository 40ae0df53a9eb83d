"""Keeping GPU nodes healthy: what finds faults while they run, and what repairs them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from components.models.base import Count, Spec, at

RepairAgent = Literal["eks-node-monitoring-agent", "gke", "nvsentinel"]
"""eks-node-monitoring-agent (EKS: node conditions, with EKS node auto repair and Karpenter's node repair) |
gke (GKE node auto-repair) | nvsentinel (NVIDIA NVSentinel: quarantine and drain; needs the GPU Operator)."""


class RepairSpec(Spec):
    """Finding GPU, NIC and node faults at run time, and taking the faulty node out of service."""

    enabled: bool = True
    """Install and configure the provider's fault detection and repair. Default: true."""
    agent: RepairAgent | None = None
    """What detects faults and acts on them. Default: eks-node-monitoring-agent on AWS, gke on GCP, nvsentinel on
    existing clusters."""
    max_parallel_nodes: Count | None = Field(default=None, ge=1)
    """EKS managed node groups: nodes auto repair replaces or reboots at once, per node group
    (maxParallelNodesRepairedCount). Default: 1, so a burst of faults never takes a pool down at once."""
    reboot: bool = False
    """NVSentinel: let its fault remediation reboot a faulty node (through its janitor, a privileged Job on the
    node) once the node is drained. Default: false, the node stays cordoned for a person to look at."""

    @model_validator(mode="after")
    def _reboot_is_nvsentinel(self) -> RepairSpec:
        if self.reboot and self.agent not in (None, "nvsentinel"):
            raise at(
                "reboot",
                f"is an NVSentinel setting, and agent is {self.agent}, which decides by itself whether to reboot or "
                "replace a node: drop reboot, or set agent: nvsentinel",
            )
        if self.max_parallel_nodes is not None and self.agent not in (None, "eks-node-monitoring-agent"):
            raise at(
                "maxParallelNodes",
                f"is an EKS managed node group setting, and agent is {self.agent}: drop it, or set agent: "
                "eks-node-monitoring-agent",
            )
        return self


class HealthSpec(Spec):
    """Healthy GPU nodes only."""

    repair: RepairSpec = Field(default_factory=RepairSpec)
    """Run-time fault detection and repair. Default: on, with the provider's agent."""
