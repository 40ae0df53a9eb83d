"""What a rule is, what it finds, and the settings it runs with."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

from components import wellknown
from components.manifests.plan import MIN_MULTI_NODE_SHM
from components.rules.pods import templates
from components.rules.review import once
from components.rules.subject import Subject
from components.rules.trainjobs import TRAINJOB, find_runtime

Enforcement = Literal["mandatory", "advisory", "disabled"]
DEFAULT_MIN_SHM = MIN_MULTI_NODE_SHM
Severity = Literal["low", "medium", "high", "critical"]
Cluster = Literal["eks", "gke", "existing"]
CLUSTERS: tuple[Cluster, ...] = ("eks", "gke", "existing")
CLUSTER_OF_PROVIDER: dict[str, Cluster] = {"aws": "eks", "gcp": "gke", "existing": "existing"}
"""The cluster a stack's provider makes."""
PRIVILEGED_NAMESPACES: tuple[str, ...] = tuple(
    dict.fromkeys(
        (
            wellknown.SYSTEM_NAMESPACE,
            wellknown.GPU_OPERATOR_NAMESPACE,
            wellknown.NETWORK_OPERATOR_NAMESPACE,
            wellknown.SRIOV_NAMESPACE,
            wellknown.NODE_CHECK_NAMESPACE,
        )
    )
)
"""Where node agents may run privileged containers, by default: Kubernetes' own namespace (where the Multus,
whereabouts and EFA device plugin installs and our GKE GPUDirect installers run too), and the GPU Operator's,
the Network Operator's and the SR-IOV Network Operator's, whose drivers and device plugins need the host, and the
node check's, whose DCGM diagnostics need the GPUs' admin interfaces."""


class Advice(str):
    """A check's message that is advice, not a defect: reported as advisory even by a mandatory rule."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Settings:
    """What the rules are told about the environment: policy config, the cluster's gang scheduler, prod."""

    allowed_registries: tuple[str, ...] = ()
    """Registries images may come from; empty means any."""
    require_pinned_images: bool = False
    """Whether an image without a version tag or digest is a defect (else advice)."""
    min_shm: str = DEFAULT_MIN_SHM
    """The smallest /dev/shm a multi-node job may have."""
    gang_scheduler: Literal["volcano", "kueue", "none"] = "none"
    """The gang scheduler installed on the cluster."""
    production: bool = False
    """Whether this is a production stack."""
    allow_host_network: bool = False
    """Whether pods may use the host network or IPC namespace."""
    privileged_namespaces: tuple[str, ...] = PRIVILEGED_NAMESPACES
    """Namespaces whose pods may run privileged containers (node agents); nowhere else."""
    enforcement: dict[str, Enforcement] = field(default_factory=dict)
    """Per rule id, an enforcement level overriding the rule's default."""
    cluster: Cluster | None = None
    """The cluster the objects run on (EKS and GKE add the GPU toleration to GPU pods themselves); None when
    unknown."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation: which rule, which subject, what is wrong, how to fix it, and whether it blocks."""

    rule: str
    subject: str
    message: str
    fix: str
    enforcement: Enforcement
    urn: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready data."""
        return {
            "rule": self.rule,
            "object": self.subject,
            "message": self.message,
            "fix": self.fix,
            "enforcement": self.enforcement,
        }


Check = Callable[[Subject, list[Subject], Settings], Iterable[str]]


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule: its id, severity, default enforcement, the reason it exists and the fix, and its check."""

    id: str
    severity: Severity
    enforcement: Enforcement
    reason: str
    fix: str
    kinds: tuple[str, ...]
    """The subject kinds it looks at (`*` for every Kubernetes object with pods)."""
    check: Check
    _: KW_ONLY
    gpu_only: bool
    """Whether it judges GPU workloads only: a workload whose pods request no GPU (a CPU-only Volcano Job, a web
    Deployment) is none of its business. Objects that run no pods (a PodGroup, a claim) are still looked at."""

    def applies_to(self, subject: Subject) -> bool:
        """Whether the rule looks at this subject."""
        return subject.kind in self.kinds or ("*" in self.kinds and subject.kind not in ("NodePool", "FileSystem"))

    def run(self, subjects: list[Subject], settings: Settings, errors: list[str] | None = None) -> list[Finding]:
        """Its findings over these subjects (all subjects are passed along for cross-object checks). With
        `errors`, a failure on one subject is noted there and the others are still checked."""
        level = settings.enforcement.get(self.id, self.enforcement)
        if level == "disabled":
            return []
        found: list[Finding] = []
        for s in subjects:
            if not self.applies_to(s):
                continue
            try:
                if self.gpu_only and _without_gpus(s, subjects):
                    continue
                messages = self.own_findings(s, subjects, settings)
            except Exception as exc:
                if errors is None:
                    raise
                where = f"{s.source}: " if s.source else ""
                errors.append(f"{where}{s.key}: rule {self.id} could not read it ({type(exc).__name__}: {exc})")
                continue
            found += [
                Finding(self.id, s.key, str(m), self.fix, "advisory" if isinstance(m, Advice) else level, s.urn)
                for m in messages
            ]
        return found

    def own_findings(self, subject: Subject, subjects: list[Subject], settings: Settings) -> list[str]:
        """The check's messages on a subject, less those a TrainJob inherits from its runtime."""
        messages = list(self.check(subject, subjects, settings))
        runtime = find_runtime(subject.data, subjects) if messages and subject.kind == TRAINJOB else None
        if runtime is None or not self.applies_to(runtime):
            return messages
        # A runtime's defect (placement, fabric, /dev/shm, its images) is in every TrainJob on it: it is
        # reported once, on the runtime that owns it, and a TrainJob only for what it brings (image, env,
        # resources, patches) that the runtime, run as it stands, does not already get wrong.
        inherited = set(self.check(runtime, subjects, settings))
        return [m for m in messages if m not in inherited]


@once
def _without_gpus(subject: Subject, subjects: Sequence[Subject]) -> bool:
    """Whether the subject is a workload whose pods, as far as they are known, request no GPU."""
    found = templates(subject.data, subjects)
    return bool(found) and not any(t.gpus or t.partial for t in found)
