"""DaemonSet overhead: what is left of a new node of each pool once every DaemonSet that lands on it has taken its
requests, and whether each job's largest pod still fits in it.

Karpenter and the Cluster Autoscaler both add a node only if the pending pod fits a template of it, and both count
every DaemonSet that would run on that node as part of the template:

- Karpenter v1.14.1 (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go
  buildDaemonOverheadGroups, isDaemonPodCompatible): a DaemonSet's pod is overhead of a NodePool's template when it
  tolerates the template's taints (not its startupTaints) and its node selector is compatible with the template's
  labels; the overhead is resources.RequestsForPods (pkg/utils/resources/resources.go), each pod counted as the
  kube-scheduler does (k8s.io/component-helpers resource.PodRequests): the larger of its containers' (and native
  sidecars') sum and its largest init container, per resource.
- The Cluster Autoscaler (simulator/node_info_utils.go SanitizedTemplateNodeInfoFromNodeGroup, forceDaemonSets):
  every DaemonSet whose pod would run on the template node is added to it.

A job whose pod asks more than what is left is never given a node: it stays Pending for ever. Counted here is every
DaemonSet that lands on the node: those a template counts, and those that select a label the node gets once it joins
(the GPU Operator's operands), which a template does not count but which take their share before the job's pod does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from components import quantity
from components.addons.plan import plan as addon_plan
from components.allocatable import allocatable, pod_requests, written
from components.daemonsets import ADDON_DAEMONSETS, AddonDaemonSet
from components.errors import Issue
from components.manifests import fabriccheck as gate_objects
from components.manifests import platform
from components.manifests.pod import tolerates
from components.models.nodepool import Taint
from components.podfit import pool_pods
from components.pool import Pool

if TYPE_CHECKING:
    from components.stack import Stack

_BLOCKING = ("NoSchedule", "NoExecute")
_TUNABLE = ("cpu", "memory")
"""The resources a job states itself (resources.cpu, resources.memory); the rest come from its pool."""


@dataclass(frozen=True, slots=True)
class NodeAgent:
    """A DaemonSet whose pod lands on a pool's nodes, and what that pod requests."""

    name: str
    """How a reader finds it: `DaemonSet <namespace>/<name>` for ours, `<install>'s <name>` for an add-on's."""
    requests: Mapping[str, Decimal]
    """Its pod's requests, counted as the scheduler counts them."""
    ours: bool = False
    """Whether the stack renders it (and so can change it), rather than an add-on's chart."""


def lands_past(tolerations: Iterable[Mapping[str, Any]], taints: Iterable[Taint]) -> bool:
    """Whether the pod tolerates every taint that keeps pods off (NoSchedule, NoExecute) among `taints`."""
    tolerations = list(tolerations)
    return all(tolerates(tolerations, t.model_dump()) for t in taints if t.effect in _BLOCKING)


def node_labels(pool: Pool) -> dict[str, str]:
    """The labels a new node of the pool has as it joins, as far as the stack knows them."""
    labels = {"kubernetes.io/os": "linux", "kubernetes.io/arch": pool.kubernetes_arch}
    if pool.machine_type:
        labels["node.kubernetes.io/instance-type"] = pool.machine_type
    return {**labels, **pool.labels, **pool.node_selector}


def selects(spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a pod spec's nodeSelector and required node affinity admit a node with `labels`. A key the stack does
    not know the node to carry counts as matching, so that a DaemonSet is counted rather than missed."""
    known = set(labels)
    for key, value in (spec.get("nodeSelector") or {}).items():
        if key in known and labels[key] != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(_term(t, labels) for t in terms)


def _term(term: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a node selector term's expressions all admit `labels` (unknown keys admit)."""
    for expression in term.get("matchExpressions") or []:
        key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        present = key in labels
        if operator == "In" and present and labels[key] not in values:
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def rendered_agents(pool: Pool, objects: Iterable[Mapping[str, Any]]) -> list[NodeAgent]:
    """The DaemonSets among `objects` whose pods land on a new node of `pool`."""
    labels = node_labels(pool)
    found = []
    for obj in objects:
        if obj.get("kind") != "DaemonSet":
            continue
        spec = obj["spec"]["template"]["spec"]
        if lands_past(spec.get("tolerations") or [], pool.taints) and selects(spec, labels):
            meta = obj["metadata"]
            requests = {k: quantity.parse(v) for k, v in pod_requests(spec).items()}
            found.append(NodeAgent(f"DaemonSet {meta.get('namespace')}/{meta['name']}", requests, ours=True))
    return found


def addon_agents(
    pool: Pool, installs: Mapping[str, Mapping[str, Any]], table: Sequence[AddonDaemonSet] = ADDON_DAEMONSETS
) -> list[NodeAgent]:
    """The add-ons' DaemonSets that land on a new node of `pool`: `installs` maps each installed add-on to the values
    the stack gives it (the NicClusterPolicy's spec under "policy" for the Network Operator's operands)."""
    found = []
    for entry in table:
        values = installs.get(entry.install)
        if values is None or not _switched_on(entry, values) or not _lands_on(entry.lands, pool):
            continue
        stated = _value(values, entry.tolerations_value) if entry.tolerations_value else None
        tolerations = [*(stated if isinstance(stated, list) else entry.tolerations), *entry.added_tolerations]
        if lands_past(tolerations, pool.taints):
            requests = pod_requests({"containers": [_resources(c) for c in entry.containers]} | _init(entry))
            parsed = {k: quantity.parse(v) for k, v in requests.items()}
            found.append(NodeAgent(f"{entry.install}'s {entry.name} ({entry.version})", parsed))
    return found


def _resources(requests: Mapping[str, str]) -> dict[str, Any]:
    return {"resources": {"requests": dict(requests)}}


def _init(entry: AddonDaemonSet) -> dict[str, Any]:
    return {"initContainers": [_resources(c) for c in entry.init]} if entry.init else {}


def _value(values: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at `path` in nested values; None when absent."""
    found: Any = values
    for key in path:
        if not isinstance(found, Mapping) or key not in found:
            return None
        found = found[key]
    return found


def _switched_on(entry: AddonDaemonSet, values: Mapping[str, Any]) -> bool:
    """Whether the values turn the DaemonSet on: a boolean switch, or the presence of a key (a policy's operand)."""
    if entry.switch is None:
        return True
    found = _value(values, entry.switch)
    if found is None:
        return entry.default_on
    return bool(found) if isinstance(found, bool) else True


def _lands_on(lands: str, pool: Pool) -> bool:
    """Whether a DaemonSet selecting `lands` nodes selects the pool's (every pool of the stack has GPUs)."""
    if lands == "efa":
        return pool.machine_fabric == "efa" or pool.efa_interfaces > 0
    if lands == "rdma":
        return pool.fabric in ("infiniband", "roce")
    return True


def left_over(pool: Pool, agents: Iterable[NodeAgent]) -> dict[str, Decimal | None]:
    """Resource -> what a new node of `pool` has left for other pods once `agents` are placed (None: not fixed)."""
    taken: dict[str, Decimal] = {}
    for agent in agents:
        for name, amount in agent.requests.items():
            taken[name] = taken.get(name, Decimal(0)) + amount
    return {
        name: None if have is None else quantity.parse(have) - taken.get(name, Decimal(0))
        for name, have in allocatable(pool).items()
    }


def shortfalls(
    pool: Pool, agents: Sequence[NodeAgent], requests: Mapping[str, str], where: str, path: str
) -> list[Issue]:
    """Why a pod requesting `requests` never gets a new node of `pool` once `agents` take their share; empty when it
    fits. `where` names the pod (its workload and role), `path` the config key of its workload."""
    left = left_over(pool, agents)
    offered = allocatable(pool)
    issues = []
    for name, wanted_text in requests.items():
        have, remaining = offered.get(name), left.get(name)
        wanted = quantity.parse(wanted_text)
        if have is None or remaining is None or wanted <= remaining:
            continue  # not advertised (pods_fit says so), or not a fixed amount
        takers = [a for a in agents if a.requests.get(name)]
        listed = ", ".join(f"{a.name}: {written(a.requests[name])}" for a in takers)
        issues.append(
            Issue(
                f"{path}.resources.{name}" if name in _TUNABLE and path.startswith("jobs[") else path,
                f"{where} request {name}: {wanted_text}, and a new node of pool '{pool.name}' keeps only "
                f"{written(max(remaining, Decimal(0)))} of its {have} once the DaemonSets that land on it take "
                f"theirs ({listed}). Karpenter and the Cluster Autoscaler count those DaemonSets in every new node's "
                "template, so no node is ever added for these pods and the job stays Pending; "
                + _fix(name, takers, remaining),
            )
        )
    return issues


def _fix(name: str, takers: Sequence[NodeAgent], remaining: Decimal) -> str:
    """What to change: a DaemonSet of ours that takes a device, else the job's request."""
    ours = [a.name for a in takers if a.ours]
    if name not in _TUNABLE:
        if ours:
            return (
                f"no DaemonSet may request {name}, which every training pod takes whole: drop it from {', '.join(ours)}"
            )
        return f"no DaemonSet may request {name}: drop it from {', '.join(a.name for a in takers)}"
    if remaining <= 0:
        return f"lower the {name} those DaemonSets request"
    return f"ask at most {written(remaining)} of {name} per pod, or lower what those DaemonSets request"


def issues(stack: Stack) -> list[Issue]:
    """Every job and fabric check of the stack whose largest pod does not fit a new node of its pool once the
    DaemonSets the stack installs there (its own and its add-ons') have taken their requests."""
    addons = addon_plan(stack)
    rendered = [o for o in [*platform.objects(stack), *addons.objects] if o.get("kind") == "DaemonSet"]
    installs = _installs(addons)
    per_pool = {
        name: [*rendered_agents(pool, rendered), *addon_agents(pool, installs)] for name, pool in stack.pools.items()
    }
    found: list[Issue] = []
    workloads: list[tuple[Pool, Sequence[dict[str, Any]], str, Any]] = []
    index = {spec.name: i for i, spec in enumerate(stack.config.node_pools)}
    for name, check in stack.checks.items():
        workloads.append((check.pool, gate_objects.objects(check), f"nodePools[{index[name]}].fabricCheck", None))
    for i, job in enumerate(stack.jobs):
        workloads.append((job.pool, stack.objects_of(i), f"jobs[{i}]", job))
    for pool, objects, path, job in workloads:
        agents = per_pool.get(pool.name, [])
        for (kind, name), (roles, largest) in _largest(pool_pods(pool, list(objects), job)).items():
            where = f"{kind} {name}'s pods" + ("" if roles == ["pod"] else f" ({', '.join(roles)})")
            found += shortfalls(pool, agents, {k: written(v) for k, v in largest.items()}, where, path)
    return found


def _largest(
    pods: Iterable[tuple[Mapping[str, Any], Any]],
) -> dict[tuple[str, str], tuple[list[str], dict[str, Decimal]]]:
    """Per workload (kind, namespace/name): the roles of its pods on the pool, and the most any of them requests of
    each resource."""
    found: dict[tuple[str, str], tuple[list[str], dict[str, Decimal]]] = {}
    for obj, template in pods:
        meta = obj["metadata"]
        roles, largest = found.setdefault((obj["kind"], f"{meta.get('namespace')}/{meta['name']}"), ([], {}))
        if template.role not in roles:
            roles.append(template.role)
        for resource, amount in pod_requests(template.spec).items():
            largest[resource] = max(largest.get(resource, Decimal(0)), quantity.parse(amount))
    return found


def _installs(addons: Any) -> dict[str, dict[str, Any]]:
    """Each installed add-on's values by install name; the Network Operator's with its NicClusterPolicy's spec."""
    installs: dict[str, dict[str, Any]] = {r.name: dict(r.values) for r in addons.releases}
    installs.update({r.name: {} for r in addons.remotes})
    policy = next((o for o in addons.objects if o.get("kind") == "NicClusterPolicy"), None)
    if policy is not None and "network-operator" in installs:
        installs["network-operator"]["policy"] = policy.get("spec") or {}
    return installs
