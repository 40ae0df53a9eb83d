"""Run-time fault repair: per provider, what finds a faulty GPU node and what takes it out of service.

One place decides it (`agent`), and the cloud components, the add-on plan, `render` and the rules read it from
here. Sources, per mechanism:

- EKS node monitoring agent v1.7.0 (aws/eks-node-monitoring-agent README and charts/eks-node-monitoring-agent):
  NodeConditions AcceleratedHardwareReady (NVIDIA XIDs, DCGM diagnostics), KernelReady, NetworkingReady,
  StorageReady, ContainerRuntimeReady; it brings its own nv-hostengine (the chart's dcgm-server DaemonSet,
  localhost:5555), so it needs no DCGM of the GPU Operator.
- EKS node auto repair on managed node groups: pulumi-aws 7.51.1 `aws.eks.NodeGroup.node_repair_config`
  (enabled, max_parallel_nodes_repaired_count, ...); it acts on the agent's conditions.
- Karpenter 1.14.1: the NodeRepair feature gate is ALPHA and off by default (sigs.k8s.io/karpenter
  pkg/operator/options/options.go; chart value settings.featureGates.nodeRepair). The AWS provider's repair
  policies (karpenter-provider-aws pkg/cloudprovider/cloudprovider.go RepairPolicies) are the agent's
  conditions: AcceleratedHardwareReady=False after 10 minutes; StorageReady, NetworkingReady, KernelReady,
  ContainerRuntimeReady=False and Ready=False/Unknown after 30. Karpenter then deletes the NodeClaim with its
  termination grace period set to now, and repairs nothing while more than 20% of a NodePool is unhealthy
  (pkg/controllers/node/health/controller.go). Without the agent only Ready would trigger it.
- GKE node auto-repair (cloud.google.com/kubernetes-engine/docs/how-to/node-auto-repair): NotReady or silent for
  about 10 minutes, boot disk full for about 30; the node is drained (GKE waits an hour) and re-created.
- NVSentinel (docs.nvidia.com/nvsentinel configuration/node-drainer, values-full.yaml): its GPU health monitor
  reads the GPU Operator's standalone DCGM (service nvidia-dcgm.gpu-operator.svc:5555); fault-quarantine cordons;
  node-drainer evicts per namespace with Immediate (the Eviction API), AllowCompletion or DeleteAfterTimeout
  (force delete).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from components.errors import Issue
from components.models import StackConfig
from components.models.health import RepairAgent
from components.pool import Pool
from components.versions import EKS_NODE_MONITORING_AGENT, NVSENTINEL

EKS_AGENT_ADDON = "eks-node-monitoring-agent"
"""The EKS add-on's name."""
DEFAULT_PARALLEL_REPAIRS = 1
"""Nodes of one node group EKS repairs at once unless `maxParallelNodes` says otherwise."""
EKS_CONDITIONS = ("AcceleratedHardwareReady", "NetworkingReady", "KernelReady", "StorageReady")
"""The node monitoring agent's conditions a GPU node is repaired on."""
_DEFAULT_AGENT: dict[str, RepairAgent] = {
    "aws": "eks-node-monitoring-agent",
    "gcp": "gke",
    "existing": "nvsentinel",
}
_PROVIDER_OF: dict[RepairAgent, str] = {"eks-node-monitoring-agent": "aws", "gke": "gcp"}


def agent(config: StackConfig) -> RepairAgent | None:
    """The stack's repair agent: as `health.repair.agent` says, else the provider's; None when repair is off, or
    when an existing cluster runs no GPU Operator, whose DCGM NVSentinel reads (the rules then advise)."""
    repair = config.health.repair
    if not repair.enabled:
        return None
    if repair.agent is not None:
        return repair.agent
    chosen = _DEFAULT_AGENT[config.cluster.provider]
    return None if chosen == "nvsentinel" and not config.runs_gpu_operator else chosen


def issues(config: StackConfig) -> list[Issue]:
    """The repair settings the stack cannot honour, each at its config key with the fix."""
    repair = config.health.repair
    chosen = agent(config)
    provider = config.cluster.provider
    if chosen is None:
        stated = [k for k, v in (("agent", repair.agent), ("maxParallelNodes", repair.max_parallel_nodes)) if v]
        stated += ["reboot"] if repair.reboot else []
        return [
            Issue(f"health.repair.{key}", "has no effect: health.repair.enabled is false; drop it") for key in stated
        ]
    found: list[Issue] = []
    needed = _PROVIDER_OF.get(chosen)
    if needed is not None and needed != provider:
        found.append(
            Issue(
                "health.repair.agent",
                f"{chosen} runs only on {'EKS' if needed == 'aws' else 'GKE'} clusters, and this cluster's provider is "
                f"{provider}: set agent: {_DEFAULT_AGENT[provider]} (or leave it unset)",
            )
        )
    if chosen == "nvsentinel" and not config.runs_gpu_operator:
        found.append(
            Issue(
                "health.repair.agent",
                "nvsentinel reads GPU health from the GPU Operator's standalone DCGM, and the GPU Operator is not "
                "installed: set gpuOperator.enabled: true, or choose the provider's agent",
            )
        )
    if repair.max_parallel_nodes is not None and chosen != "eks-node-monitoring-agent":
        found.append(
            Issue("health.repair.maxParallelNodes", "is an EKS managed node group setting: drop it on this cluster")
        )
    if repair.reboot and chosen != "nvsentinel":
        found.append(Issue("health.repair.reboot", "is an NVSentinel setting: drop it, or set agent: nvsentinel"))
    return found


@dataclass(frozen=True, slots=True)
class EksRepair:
    """What the EKS cluster component makes for repair: the agent add-on, and each node group's repair config."""

    addon_version: str
    """The eks-node-monitoring-agent add-on version."""
    max_parallel_nodes: int
    """Nodes of a node group repaired at once."""

    def node_repair_config(self) -> dict[str, Any]:
        """A managed node group's `node_repair_config`: auto repair on, a bounded number at once."""
        return {"enabled": True, "max_parallel_nodes_repaired_count": self.max_parallel_nodes}


def eks(config: StackConfig) -> EksRepair | None:
    """The EKS repair of the stack, when its agent is the node monitoring agent."""
    if agent(config) != "eks-node-monitoring-agent":
        return None
    parallel = config.health.repair.max_parallel_nodes or DEFAULT_PARALLEL_REPAIRS
    return EksRepair(EKS_NODE_MONITORING_AGENT, parallel)


def karpenter_repairs(config: StackConfig) -> bool:
    """Whether Karpenter's NodeRepair gate goes on: with the EKS agent, whose conditions it acts on."""
    return agent(config) == "eks-node-monitoring-agent"


def nvsentinel(config: StackConfig) -> bool:
    """Whether the stack installs NVSentinel."""
    return agent(config) == "nvsentinel"


@dataclass(frozen=True, slots=True)
class PoolRepair:
    """How one pool's faults are found and acted on, in words for `render` and the rules."""

    detects: str
    acts: str

    def describe(self) -> str:
        """`<what detects>; <what acts>`."""
        return f"{self.detects}; {self.acts}"


def pool_repair(config: StackConfig, pool: Pool) -> PoolRepair | None:
    """What finds and repairs the pool's faults, or None when nothing does."""
    chosen = agent(config)
    if chosen is None:
        return None
    if chosen == "eks-node-monitoring-agent":
        detects = f"EKS node monitoring agent {EKS_NODE_MONITORING_AGENT} ({', '.join(EKS_CONDITIONS)} from XIDs, DCGM)"
        if pool.provisioner == "karpenter":
            acts = (
                "Karpenter node repair (alpha NodeRepair gate) replaces the node 10 min after "
                "AcceleratedHardwareReady=False, 30 min after the others; none while >20% of the pool is unhealthy"
            )
        else:
            parallel = config.health.repair.max_parallel_nodes or DEFAULT_PARALLEL_REPAIRS
            acts = f"EKS node auto repair replaces or reboots it, {parallel} node(s) of the group at once"
        return PoolRepair(detects, acts)
    if chosen == "gke":
        if pool.capacity == "flex-start":
            return None  # flex-start pools are made without auto-repair (components/gcp/nodepool.py)
        return PoolRepair(
            # XIDs reach GKE as the GPU device plugin's XidCriticalError node condition (container-engine-accelerators
            # PR #497), which is not among auto-repair's documented criteria: said, not claimed.
            "GKE node health checks (NotReady or silent ~10 min, boot disk full ~30 min; a GPU XID is the "
            "XidCriticalError condition, not a documented repair criterion)",
            "GKE node auto-repair drains (up to 1 h) and re-creates the node",
        )
    reboot = "then reboots it (repair.reboot)" if config.health.repair.reboot else "no reboot (repair.reboot: false)"
    return PoolRepair(
        f"NVSentinel {NVSENTINEL.version} (DCGM health of the GPU Operator's DCGM, XIDs from syslog)",
        f"NVSentinel cordons the node and evicts the training namespaces' pods (Immediate), {reboot}",
    )


def pool_line(config: StackConfig, pool: Pool) -> str:
    """`render`'s per-pool line: what detects and what acts, or why nothing does."""
    found = pool_repair(config, pool)
    if found is not None:
        return found.describe()
    if not config.health.repair.enabled:
        return "off (health.repair.enabled: false)"
    if agent(config) is None:
        return "off: NVSentinel reads the GPU Operator's DCGM, and gpuOperator.enabled is false"
    return "off: flex-start pools are made without GKE auto-repair (GKE's flex-start guide: --no-enable-autorepair)"


def by_pool(config: StackConfig, pools: Iterable[Pool]) -> dict[str, str | None]:
    """Per pool name, what finds and repairs its faults in words, or None when nothing does (for the rules)."""
    return {pool.name: (found.describe() if (found := pool_repair(config, pool)) else None) for pool in pools}
