"""Each GPU node's check when it joins its pool: what is checked, against what, and how a node is held back.

A pool's nodes come up with the startup taint
`startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check=pending:NoSchedule` and the label
`gpu-training/node-check=required`, which nothing but the check tolerates. The check (a DaemonSet on the
nodes that have the label and no result yet) runs the DCGM diagnostics, reads every GPU's ECC and row-remap
state and the kernel's XIDs, finds every fabric NIC the pool should have up at its speed, and runs a
single-node all_reduce across the node's GPUs against a floor derived from NVLink. It requests no GPU: an
autoscaler counts a DaemonSet's requests as overhead of every new node, and a check holding the GPUs would leave
no room for any job, so no node would ever be made. It sees the GPUs as the node's runtime gives them to a
privileged container (`gpu_access`), and the startup taint keeps every other GPU pod off the node meanwhile.
Then it labels the node `gpu-training/node-check-result=passed` and removes the taint, or labels it `failed`,
replaces the startup taint with `gpu-training/node-check-failed=true:NoSchedule`, says why in a node condition
and an event, and on Karpenter pools deletes the node's NodeClaim, so that a replacement comes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

from components import nvlink
from components.errors import Issue
from components.fabriccheck import nccl_tests_image
from components.kubeversion import version_numbers
from components.models import StackConfig
from components.models.nodepool import (
    LEGACY_NODE_CHECK_TAINT_KEY,
    NODE_CHECK_FAILED_TAINT,
    NODE_CHECK_TAINT,
    NodeCheckSpec,
    Taint,
)
from components.observability import pack as observability
from components.pool import Pool
from components.wellknown import NODE_CHECK_KEY

STARTUP_TAINT = NODE_CHECK_TAINT
"""The taint a checked pool's nodes come up with; the verdict removes it."""
FAILED_TAINT = NODE_CHECK_FAILED_TAINT
"""What a node that fails carries instead, so that `kubectl describe node` says why nothing lands there."""
LEGACY_TAINT = Taint(key=LEGACY_NODE_CHECK_TAINT_KEY, value="pending", effect="NoSchedule")
"""The startup taint of nodes that joined under an earlier release: checked, and removed, like the new one."""
GpuAccess = Literal["runtime-class", "default-runtime", "gke-host"]
"""How the check's privileged containers see every GPU without requesting one:
- runtime-class: the GPU Operator's toolkit made the `nvidia` RuntimeClass, whose runtime injects the GPUs
  that NVIDIA_VISIBLE_DEVICES names;
- default-runtime: the node's default runtime is NVIDIA's (the EKS accelerated AMI, which ships the toolkit);
- gke-host: GKE's driver stays on the host (/home/kubernetes/bin/nvidia), mounted as its device plugin mounts it
  for GPU containers, and a privileged container sees every /dev/nvidia* device."""
DcgmEngine = Literal["gpu-operator", "gke", "private"]
"""Whose DCGM host engine the check's dcgmi talks to: one node, one engine (DCGM's profiling module cannot be
shared between engines: NVIDIA/dcgm-exporter issue #7).
- gpu-operator: the operator's standalone DCGM on the host's network (addons/gpu_operator.DCGM), localhost:5555;
  the check waits for it and never starts another;
- gke: GKE's managed DCGM runs an engine and exporter on the node: the check waits for an engine on
  localhost:5555 and never starts another (Google does not document where that engine listens);
- private: nothing else runs one while the check does, so the check starts its own and stops it. The EKS node
  monitoring agent's dcgm-server tolerates no taint (eks-node-monitoring-agent v1.7.0 chart,
  dcgmAgent.tolerations []), so it is never on a node under the startup taint."""
DCGM_WAIT_SECONDS = 600
"""How long the check waits for the node's own DCGM engine to answer (within the check's budget): the GPU Operator's
starts after the toolkit is validated, and is ready 15 s after it starts (its DaemonSet's readiness probe)."""
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"
"""Where GKE keeps the NVIDIA driver's libraries and tools on the host (its device plugin mounts it into GPU
containers at /usr/local/nvidia)."""
AUTOSCALER_STARTUP_MINUTES = 15
"""How long a Cluster Autoscaler counts a registered node under a startup taint as starting, after which it is
unready and may be scaled down (--scale-down-unready-time): the default of --max-node-startup-time, a flag since
cluster-autoscaler 1.35.0 and a fixed value before it (kubernetes/autoscaler cluster-autoscaler/config/flags).
GKE's managed autoscaler has no such setting."""
SETTABLE_STARTUP_FROM = (1, 35)
"""The first Kubernetes minor whose Cluster Autoscaler release takes --max-node-startup-time."""
NODE_START_MINUTES = 10
"""What comes before the check's first step on a registered node (the driver, the device plugins, the images
pulled), in minutes: our allowance, not a measured figure."""
LONG_DCGM_LEVEL = 3
"""The first DCGM level that normally runs 15 minutes or more ("approximately 15 minutes"; level 4 longer:
NVIDIA's dcgmi diag reference)."""
RUNTIME_CLASS = "nvidia"
"""The RuntimeClass the GPU Operator's toolkit creates (its chart's operator.runtimeClass default)."""
REQUIRED_LABEL = (NODE_CHECK_KEY, "required")
"""The label a checked pool's nodes come up with: where the check runs."""
RESULT_LABEL = "gpu-training/node-check-result"
"""passed | failed, set by the check; removing it (and tainting the node again) runs the check again."""
CONDITION = "GPUNodeCheckFailed"
"""The node condition a failed check sets, with what failed as its message."""
DCGM_IMAGE = "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"
"""DCGM with dcgmi and nv-hostengine: the one the pinned GPU Operator runs as the node's engine (NVIDIA/gpu-operator
v26.7.0 deployments/gpu-operator/values.yaml `dcgm.repository`, `image`, `version`), so that dcgmi and the engine
it talks to are one release. Its diagnostic plugins must match the driver's CUDA generation: older DCGM images
refuse R580 drivers."""
KUBECTL_IMAGE = "docker.io/alpine/k8s:1.34.1"
"""kubectl with a POSIX shell, for the verdict's node updates (registry.k8s.io/kubectl has no shell)."""
NVLINK_SHARE = nvlink.SHARE
"""The derived floor: this share of one direction of the GPU's NVLink bandwidth (components/nvlink.py)."""
NVLINK_SIZES = ("512M", "8G")
"""The single-node test's smallest and largest message (the floor applies at the largest)."""


@dataclass(frozen=True, slots=True)
class Nics:
    """The fabric NICs a healthy node of the pool has: RDMA devices (by name, or a count) and GPU netdevs."""

    rdma_names: tuple[str, ...] = ()
    """RDMA devices that must be present and ACTIVE, by name (rails with named devices)."""
    rdma_count: int = 0
    """ACTIVE RDMA devices there must be at least, when their names are not known (EFA, GKE RDMA)."""
    netdevs: tuple[str, ...] = ()
    """Network interfaces that must be up (GKE GPUDirect TCPX / TCPXO GPU NICs)."""
    min_gbps: float = 0
    """The least line rate of each, in Gbps; 0 when unknown (not judged)."""
    kind: str = "RDMA"
    """What the RDMA devices are, for people: RDMA, or EFA."""

    def describe(self) -> str:
        """E.g. "32 EFA devices ACTIVE" or "mlx5_0..mlx5_7 ACTIVE at >= 400 Gbps"."""
        parts = []
        if self.rdma_names:
            parts.append(f"{_span(self.rdma_names)} ACTIVE")
        elif self.rdma_count:
            parts.append(f"{self.rdma_count} {self.kind} devices ACTIVE")
        if self.netdevs:
            parts.append(f"{_span(self.netdevs)} up")
        speed = f" at >= {self.min_gbps:g} Gbps" if self.min_gbps and parts else ""
        return (", ".join(parts) + speed) if parts else "none (tcp)"


def _span(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"


@dataclass(frozen=True, slots=True)
class NodeCheck:
    """One pool's node check, resolved: its levels, floors and images."""

    pool: Pool
    dcgm_level: int
    """The DCGM diagnostic level (1-4)."""
    floor_gbs: float
    """The single-node all_reduce floor in GB/s of bus bandwidth; 0: measured, not judged."""
    floor_source: str
    """Where the floor comes from, in words."""
    nics: Nics
    """The fabric NICs checked."""
    image: str
    """The NCCL-tests image of the NVLink test."""
    tests: str
    """The nccl-tests binaries' folder in that image."""
    dcgm_image: str
    """The DCGM image."""
    timeout_minutes: int
    """How long one node's check may take."""
    gpu_access: GpuAccess = "default-runtime"
    """How its containers see the GPUs (GpuAccess)."""
    dcgm_engine: DcgmEngine = "private"
    """Whose DCGM engine its diagnostics run on (DcgmEngine)."""

    @property
    def replaces_failed(self) -> bool:
        """Whether the verdict deletes a failed node's NodeClaim: Karpenter pools, where nothing else would (it
        never disrupts a node it has not seen initialized, nor one that a pod could still use)."""
        return self.pool.provisioner == "karpenter"

    @property
    def name(self) -> str:
        """The DaemonSet's name."""
        return f"node-check-{self.pool.name}"

    @property
    def nvlink_test(self) -> bool:
        """Whether the node has GPUs to all_reduce across (one GPU has nothing to test)."""
        return self.pool.gpus_per_node > 1

    def summary(self) -> str:
        """What a node proves before it takes work, e.g. "DCGM diag r2, ECC, row remaps, XIDs; NICs: ...; ..."."""
        if not self.nvlink_test:
            nccl = "no all_reduce (one GPU)"
        elif self.floor_gbs:
            nccl = f"all_reduce {'-'.join(NVLINK_SIZES)} >= {self.floor_gbs:g} GB/s ({self.floor_source})"
        else:
            nccl = f"all_reduce {'-'.join(NVLINK_SIZES)} measured, not judged ({self.floor_source})"
        return (
            f"DCGM diag r{self.dcgm_level}, ECC, row remaps, XIDs; NICs: {self.nics.describe()}; {nccl}; "
            f"startup taint {STARTUP_TAINT.key}={STARTUP_TAINT.value}:{STARTUP_TAINT.effect}"
        )

    def fingerprint(self) -> str:
        """A digest of what the verdict depends on; a change restarts the check's pods (on unchecked nodes)."""
        inputs = {"level": self.dcgm_level, "floor": self.floor_gbs, "nics": repr(self.nics), "image": self.image}
        return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


def gpu_access(config: StackConfig, pool: Pool) -> GpuAccess:
    """How the pool's node check sees the GPUs, from who brings the driver and container toolkit."""
    if config.runs_gpu_operator and pool.provider != "aws":  # EKS: the AMI's toolkit, the operator's is off
        return "runtime-class"
    return "gke-host" if pool.provider == "gcp" else "default-runtime"


def dcgm_engine(config: StackConfig, pool: Pool) -> DcgmEngine:
    """Who runs the DCGM host engine on the pool's nodes while the check runs (DcgmEngine)."""
    if config.runs_gpu_operator:
        return "gpu-operator"
    if pool.provider == "gcp" and observability.resolve(config).managed_dcgm:
        return "gke"
    return "private"


def startup_allowance(config: StackConfig, pool: Pool) -> Literal["settable", "fixed"] | None:
    """Whether a Cluster Autoscaler makes the pool's nodes, and whether ours can be told how long one may start:
    settable from SETTABLE_STARTUP_FROM on EKS, fixed before and on GKE; None where no autoscaler does."""
    if pool.provisioner == "gke":
        return "fixed" if pool.min_nodes < pool.max_nodes or pool.provisioning_class else None
    if pool.cluster_autoscaler_makes_nodes:
        minor = version_numbers(str(config.cluster.kubernetes_version))[:2]
        return "settable" if minor >= SETTABLE_STARTUP_FROM else "fixed"
    return None


def startup_minutes(check: NodeCheck) -> int:
    """How long a node of the pool may stay under the startup taint: its start, then the check's whole budget."""
    return NODE_START_MINUTES + check.timeout_minutes


def startup_issues(config: StackConfig, spec: NodeCheckSpec, pool: Pool, *, path: str) -> list[Issue]:
    """A DCGM level longer than an autoscaler that cannot be told lets a node start."""
    allowance = startup_allowance(config, pool)
    if not spec.enabled or allowance != "fixed" or spec.dcgm_level < LONG_DCGM_LEVEL:
        return []
    who = "GKE's autoscaler" if pool.provider == "gcp" else "the Cluster Autoscaler before Kubernetes 1.35"
    fix = "" if pool.provider == "gcp" else ", or Kubernetes 1.35, whose autoscaler is told the check's budget"
    return [
        Issue(
            f"{path}.nodeCheck.dcgmLevel",
            f"DCGM level {spec.dcgm_level} normally runs 15 minutes or more, and {who} counts a node under the "
            f"startup taint as starting for only {AUTOSCALER_STARTUP_MINUTES}: the node then counts as unready and "
            f"can be scaled down mid-check. Use dcgmLevel 2 on this autoscaled pool{fix}",
        )
    ]


def resolve(
    spec: NodeCheckSpec,
    pool: Pool,
    *,
    path: str,
    access: GpuAccess = "default-runtime",
    engine: DcgmEngine = "private",
) -> tuple[NodeCheck | None, list[Issue]]:
    """The pool's node check, or None when it is off; and what stops it."""
    if not spec.enabled:
        return None, []
    floor, source = _floor(spec, pool)
    image = nccl_tests_image(pool)
    issues: list[Issue] = []
    if spec.min_bus_bandwidth is not None and pool.gpus_per_node < 2:
        issues.append(
            Issue(f"{path}.nodeCheck.minBusBandwidth", "the pool's nodes have one GPU: there is no all_reduce to judge")
        )
    check = NodeCheck(
        pool=pool,
        dcgm_level=spec.dcgm_level,
        floor_gbs=floor,
        floor_source=source,
        nics=expected_nics(pool),
        image=spec.image or image.image,
        tests=image.tests,
        dcgm_image=spec.dcgm_image or DCGM_IMAGE,
        timeout_minutes=spec.timeout_minutes,
        gpu_access=access,
        dcgm_engine=engine,
    )
    return (None, issues) if issues else (check, [])


def _floor(spec: NodeCheckSpec, pool: Pool) -> tuple[float, str]:
    if spec.min_bus_bandwidth is not None:
        return spec.min_bus_bandwidth, "nodeCheck.minBusBandwidth"
    found, source = nvlink.floor(pool)
    if not found:
        return 0, "no NVLink known for this GPU: set nodeCheck.minBusBandwidth to judge it"
    return found, source


def expected_nics(pool: Pool) -> Nics:
    """The fabric NICs a node of `pool` must show: derived from the pool's fabric, as its jobs use them."""
    machine = pool.machine()
    if pool.fabric == "efa":
        return Nics(rdma_count=pool.efa_interfaces, kind="EFA")
    if pool.fabric in ("roce", "infiniband"):
        names = tuple(pool.ib_hca.removeprefix("=").split(",")) if pool.ib_hca.startswith("=") else ()
        return Nics(rdma_names=names, rdma_count=0 if names else pool.rails, min_gbps=pool.rail_gbps or 0)
    if pool.fabric == "rdma":
        return Nics(rdma_count=pool.gpu_nics, min_gbps=machine.gpu_nic_gbps if machine else 0)
    if pool.fabric in ("tcpx", "tcpxo"):
        # GKE names the GPU NICs eth1.. after eth0 (and after the extra gVNIC where there is one).
        first = 1 + pool.extra_gvnics
        netdevs = tuple(f"eth{first + i}" for i in range(pool.gpu_nics))
        return Nics(netdevs=netdevs, min_gbps=machine.gpu_nic_gbps if machine else 0)
    return Nics()
