"""Whether a job recovers from a node fault without being rebuilt: Kueue can swap a failed node of a
topology-aware job only when its Topology ends at the host.

Kueue's failed-node replacement (TASFailedNodeReplacement, on by default since v0.14)
"will only work for Topologies which specify `kubernetes.io/hostname` at the lowest level" (kubernetes-sigs/kueue
v0.19.2, keps/2724-topology-aware-scheduling, "Node failures"). Without that level a node fault evicts and
re-admits the whole job.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.rules.rule import Rule, Settings
from components.rules.subject import Subject
from components.topology import HOSTNAME_LABEL

KUEUE_GROUP = "kueue.x-k8s.io"


def _flavors(topology: str, subjects: list[Subject]) -> list[str]:
    """The Kueue ResourceFlavors among the subjects that place jobs by this Topology."""
    return [
        s.key.split("/")[-1]
        for s in subjects
        if s.kind == "ResourceFlavor"
        and str(s.data.get("apiVersion", "")).startswith(f"{KUEUE_GROUP}/")
        and (s.data.get("spec") or {}).get("topologyName") == topology
    ]


def tas_hostname_level(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """A Kueue Topology ends at kubernetes.io/hostname, so that a failed node of a job it places can be swapped."""
    if not str(subject.data.get("apiVersion", "")).startswith(f"{KUEUE_GROUP}/"):
        return
    levels = (subject.data.get("spec") or {}).get("levels") or []
    labels = [level.get("nodeLabel") for level in levels if isinstance(level, dict)]
    if HOSTNAME_LABEL in labels:
        return
    name = subject.key.split("/")[-1]
    flavors = _flavors(name, subjects)
    used = f" (ResourceFlavor {', '.join(flavors)})" if flavors else ""
    yield (
        f"Topology {name}{used} has no {HOSTNAME_LABEL} level: Kueue cannot swap a failed node of a job it places, "
        "and one node fault evicts and re-admits the whole job"
    )


RULES: tuple[Rule, ...] = (
    Rule(
        "tas-hostname-level",
        "medium",
        "advisory",
        (tas_hostname_level.__doc__ or "").strip(),
        f"add {{nodeLabel: {HOSTNAME_LABEL}}} as the Topology's last level (the platform's Topologies end with it)",
        ("Topology",),
        tas_hostname_level,
        gpu_only=True,
    ),
)
