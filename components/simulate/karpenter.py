"""Karpenter itself, deciding which nodes of the stack's Karpenter pools exist: its core at the release the stacks
pin, with the KWOK cloud provider that module ships, configured from the stack's Helm values over its chart's.

Each Karpenter pool starts with no node. Its NodePool is applied as the stack renders it (requirements, taints,
startup taints, limits, disruption, labels), only its nodeClassRef pointing at a KWOKNodeClass of the pool's name
instead of the EC2NodeClass: so Karpenter's own provisioner sees the pending pods, picks the instance type and the
offering, makes NodeClaims, and its KWOK provider makes the Node objects, which our kwok then runs (they carry the
`kwok.x-k8s.io/node: fake` annotation kwok is told to manage). Consolidation, registration and termination are
Karpenter's own as well.

The instance types it may launch are ours, written from the catalog (`instance_types`). What the AWS provider does
and this does not: the EC2NodeClass (AMIs, subnets, security groups, EFA interfaces, placement groups), real
prices, ENI-limited pod counts, capacity reservations' IDs, interruptions, and the instance's start-up time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from components import quantity, versions
from components.addons import karpenter as karpenter_addon
from components.models import AwsClusterSpec
from components.nodecheck import RESULT_LABEL
from components.pool import Pool
from components.render import Rendered
from components.simulate import engines, kustomize, modfiles, nodes
from components.simulate.client import Client, one_round
from components.simulate.controlplane import ControlPlane, free_port, wait_probe
from components.wellknown import NODE_CHECK_KEY

MODULE = "sigs.k8s.io/karpenter"
ENGINE = engines.Engine("karpenter", {"karpenter": f"{MODULE}/kwok"})
"""Karpenter's core with its KWOK cloud provider: the module's `kwok/` main package, unchanged."""
VERSION_NOTE: str | None = None
CHART_MODULE = "github.com/aws/karpenter-provider-aws"
"""Where the chart the stack installs lives (components/versions.py KARPENTER), at the same tag as the core."""
CHART_PATH = "charts/karpenter"
NODE_CLASS_CRD = "kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml"
NODE_CLASS_API, NODE_CLASS_KIND = "karpenter.kwok.sh/v1alpha1", "KWOKNodeClass"
NODEPOOL_API = "karpenter.sh/v1"
UNREGISTERED_TAINT = "karpenter.sh/unregistered"
"""The taint a node Karpenter made carries until Karpenter has given it its NodeClaim's labels and taints."""
KWOK_RESERVED = {"cpu": Decimal("0.1"), "memory": Decimal(10 * 2**20)}
"""What the KWOK provider keeps of every instance type's resources as the kubelet's (100m and 10Mi, fixed: kwok/
cloudprovider/helpers.go newInstanceType). Our instance types state that much more than a node of the pool
advertises, so that what Karpenter counts as allocatable, and the node it makes advertises, is exactly
`nodes.advertised` (components/allocatable.py: what the AWS provider reserves, as far as we know it)."""
PRICE_PER_GPU = 1.0
"""The catalog has no prices, and each NodePool allows one instance type and capacity type: the price orders
nothing here but zones, which all cost the same."""
FEATURE_GATES = ("ReservedCapacity", "SpotToSpotConsolidation", "NodeRepair", "NodeOverlay", "StaticCapacity",
                 "CapacityBuffer")  # fmt: skip
"""The gates the chart's Deployment sets in FEATURE_GATES, from settings.featureGates (camelCase there)."""
SETTINGS_ENV = {
    "batchMaxDuration": "BATCH_MAX_DURATION",
    "batchIdleDuration": "BATCH_IDLE_DURATION",
    "preferencePolicy": "PREFERENCE_POLICY",
    "minValuesPolicy": "MIN_VALUES_POLICY",
    "ignoreDRARequests": "IGNORE_DRA_REQUESTS",
    "disableClusterStateObservability": "DISABLE_CLUSTER_STATE_OBSERVABILITY",
}
"""The chart's settings that the core reads, and the variable its Deployment passes each in."""
INTERVAL = 0.2


def version() -> str:
    """The core's version this engine builds (its go.mod's pin)."""
    return engines.pinned(ENGINE, MODULE)


def made_by() -> str:
    """How the report names what made a Karpenter pool's nodes."""
    return f"Karpenter {version()} (real, KWOK provider)"


def node_pools(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The karpenter.sh NodePools among `objects`."""
    return [o for o in objects if o["apiVersion"] == NODEPOOL_API and o["kind"] == "NodePool"]


def pools(rendered: Rendered) -> list[Pool]:
    """The stack's pools whose nodes Karpenter makes: those it renders a NodePool for (named after the pool)."""
    names = {o["metadata"]["name"] for o in node_pools(rendered.objects)}
    return [pool for name, pool in rendered.stack.pools.items() if name in names]


def installed(rendered: Rendered) -> bool:
    """Whether the stack runs Karpenter: it renders a NodePool."""
    return bool(pools(rendered))


def crds() -> list[dict[str, Any]]:
    """The KWOKNodeClass CRD, from the core's module: what the NodePools' repointed nodeClassRef names."""
    root = engines.download(MODULE, version())
    return [doc for doc in modfiles.documents(root / NODE_CLASS_CRD) if doc.get("kind") == "CustomResourceDefinition"]


def repointed(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`objects` with each NodePool's nodeClassRef on a KWOKNodeClass of the same name (added after the NodePools,
    with no registration delay); everything else as given."""
    out: list[dict[str, Any]] = []
    classes: list[dict[str, Any]] = []
    group = NODE_CLASS_API.partition("/")[0]
    for obj in objects:
        if not node_pools([obj]):
            out.append(obj)
            continue
        node_pool = json.loads(json.dumps(obj))
        spec = node_pool["spec"]["template"]["spec"]
        name = spec["nodeClassRef"]["name"]
        spec["nodeClassRef"] = {"group": group, "kind": NODE_CLASS_KIND, "name": name}
        out.append(node_pool)
        classes.append({"apiVersion": NODE_CLASS_API, "kind": NODE_CLASS_KIND, "metadata": {"name": name}})
    return out + classes


def _allowed(node_pool: dict[str, Any], key: str) -> list[str]:
    """The values a NodePool's requirement `In` allows for `key`; empty when it states none."""
    for requirement in node_pool["spec"]["template"]["spec"].get("requirements", []):
        if requirement["key"] == key and requirement["operator"] == "In":
            return list(requirement["values"])
    return []


def _zones(rendered: Rendered, node_pool: dict[str, Any]) -> list[str]:
    """The zones a pool's instances may launch in: its NodePool's, else the cluster's (a stack that names none gets
    every zone of the region at deploy time; here, the region's first)."""
    if stated := _allowed(node_pool, "topology.kubernetes.io/zone"):
        return stated
    cluster = rendered.stack.config.cluster
    if not isinstance(cluster, AwsClusterSpec):  # Karpenter's NodePools are rendered for EKS only
        return []
    return list(cluster.availability_zones) or [f"{cluster.region}a"]


def _plus(amount: str, extra: Decimal, unit: str) -> str:
    total = quantity.parse(amount) + extra
    return f"{int(total * 1000)}m" if unit == "m" else f"{int(total // 2**20)}Mi"


def instance_types(rendered: Rendered) -> list[dict[str, Any]]:
    """The instance types Karpenter's KWOK provider may launch, as its InstanceTypeOptions (kwok/cloudprovider/
    helpers.go): one per machine type of the stack's Karpenter pools, shaped by `nodes.advertised` (GPUs, EFA
    devices, cpu and memory as components/allocatable.py has them, pods) and never anything the AWS provider would
    not advertise (no huge pages), offered in the zones and capacity types the pools' NodePools allow."""
    by_pool = {pool.name: pool for pool in pools(rendered)}
    types: dict[str, dict[str, Any]] = {}
    for node_pool in node_pools(rendered.objects):
        pool = by_pool[node_pool["metadata"]["name"]]
        name = pool.machine_type or pool.name
        resources = nodes.advertised(pool)
        resources["cpu"] = _plus(resources["cpu"], KWOK_RESERVED["cpu"], "m")
        resources["memory"] = _plus(resources["memory"], KWOK_RESERVED["memory"], "Mi")
        arch = _allowed(node_pool, "kubernetes.io/arch") or [pool.kubernetes_arch]
        entry = types.setdefault(
            name,
            {"name": name, "offerings": [], "architecture": arch[0], "operatingSystems": ["linux"], "resources": {}},
        )
        # Two pools of one machine type are one instance type; a device plugin resource only one pool's networks
        # configure is counted on both, as the nodes of either would advertise it once the plugin ran there.
        entry["resources"] = {**resources, **entry["resources"]}
        capacity_types = _allowed(node_pool, "karpenter.sh/capacity-type") or ["on-demand"]
        for zone in _zones(rendered, node_pool):
            for capacity_type in capacity_types:
                offering = _offering(pool, zone, capacity_type)
                if offering not in entry["offerings"]:
                    entry["offerings"].append(offering)
    return list(types.values())


def _offering(pool: Pool, zone: str, capacity_type: str) -> dict[str, Any]:
    offering: dict[str, Any] = {
        "Price": PRICE_PER_GPU * pool.gpus_per_node,
        "Available": True,
        "Requirements": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity_type]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]},
        ],
    }
    if capacity_type == "reserved":
        # A reservation or Capacity Block holds as many instances as the pool may have (the stack knows no more).
        offering["ReservationCapacity"] = pool.max_nodes
    return offering


def chart_values(rendered: Rendered) -> dict[str, Any]:
    """The values the stack's Karpenter release is installed with: the chart's defaults, the stack's over them."""
    root = engines.download(CHART_MODULE, f"v{versions.KARPENTER.version}")
    defaults = modfiles.load(root / CHART_PATH / "values.yaml")
    found = next((r for r in rendered.addons.releases if r.name == karpenter_addon.NAME), None)
    return kustomize.merged(defaults, found.values if found else {})


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def environment(values: dict[str, Any]) -> dict[str, str]:
    """The core's settings as the chart's Deployment passes them (environment variables), from its values."""
    settings = values.get("settings", {})
    gates = settings.get("featureGates", {})
    env = {"LOG_LEVEL": _text(values.get("logLevel", "info"))}
    env["FEATURE_GATES"] = ",".join(
        f"{gate}={_text(gates[gate[0].lower() + gate[1:]])}"
        for gate in FEATURE_GATES
        if gate[0].lower() + gate[1:] in gates
    )
    for key, variable in SETTINGS_ENV.items():
        if settings.get(key) not in (None, ""):
            env[variable] = _text(settings[key])
    return env


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Build (cached) and start Karpenter against `plane` with the stack's settings and our instance types; return
    once it is ready (its caches synced, the NodePool and NodeClaim kinds served)."""
    binary = engines.build(ENGINE, progress)["karpenter"]
    types = instance_types_file(plane)
    types.write_text(json.dumps(instance_types(rendered), indent=1))
    health = free_port()
    env = {
        **environment(chart_values(rendered)),
        "KUBECONFIG": str(plane.kubeconfig),
        "INSTANCE_TYPES_FILE_PATH": str(types),
        "DISABLE_LEADER_ELECTION": "true",
        # The core binds both on every interface (no flag names a host): free ports of the run, like every other's.
        "METRICS_PORT": str(free_port()),
        "HEALTH_PROBE_PORT": str(health),
    }
    progress(f"starting {made_by()}")
    plane.start("karpenter", [str(binary)], env=env)
    wait_probe(plane, "karpenter", health)


class Joiner:
    """What the cloud and the platform do to each node Karpenter makes once it runs, as simulate's own nodes have
    it from the start: the labels `nodes.discovered_labels` derives (GPU product, NVLink clique, network
    topology), and, unless nodes join under their check (`checked=False`), the node check's passing verdict (its
    startup taint off, its result label on). A node is touched only once Karpenter has registered it."""

    def __init__(self, client: Callable[[], Client], karpenter_pools: Iterable[Pool], *, checked: bool) -> None:
        self._client = client
        self._pools = {pool.name: pool for pool in karpenter_pools}
        self._checked = checked
        self._index: dict[str, dict[str, int]] = {name: {} for name in self._pools}
        """Per pool, each live node's index among the pool's nodes (what the topology labels count by)."""
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="karpenter-joiner", daemon=True)
        self.errors: list[str] = []

    def start(self) -> None:
        """Watch for Karpenter's nodes from now on, in the background."""
        self._thread.start()

    def stop(self) -> None:
        """End the loop."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stopped.is_set():
            one_round(self.sync, self.errors)
            self._stopped.wait(INTERVAL)

    def sync(self) -> None:
        """Label, and pass the check of, every registered node of a Karpenter pool that still needs it."""
        client = self._client()
        mine = [n for n in client.list("v1", "Node") if n["metadata"].get("labels", {}).get(nodes.NODEPOOL_LABEL)]
        for name, index in self._index.items():
            live = {n["metadata"]["name"] for n in mine if nodes.pool_of(n) == name}
            self._index[name] = {node: i for node, i in index.items() if node in live}
        for node in mine:
            pool = self._pools.get(nodes.pool_of(node) or "")
            if pool is None or node["metadata"].get("deletionTimestamp"):
                continue
            taints = node["spec"].get("taints") or []
            if any(t["key"] == UNREGISTERED_TAINT for t in taints):
                continue
            self._join(client, pool, node, taints)

    def _join(self, client: Client, pool: Pool, node: dict[str, Any], taints: list[dict[str, Any]]) -> None:
        meta = node["metadata"]
        name, labels = meta["name"], meta.get("labels", {})
        indexes = self._index[pool.name]
        if name not in indexes:
            indexes[name] = min(set(range(len(indexes) + 1)) - set(indexes.values()))
        wanted = nodes.discovered_labels(pool, name, indexes[name], labels)
        kept = taints
        if self._checked and labels.get(NODE_CHECK_KEY) == "required":
            startup = {(t.key, t.effect) for t in pool.startup_taints}
            kept = [t for t in taints if (t["key"], t["effect"]) not in startup]
            if RESULT_LABEL not in labels:
                wanted[RESULT_LABEL] = "passed"
        if not wanted and kept == taints:
            return
        # The resourceVersion makes a change that raced Karpenter's a conflict, tried again next round.
        patch = {"metadata": {"labels": wanted, "resourceVersion": meta["resourceVersion"]}, "spec": {"taints": kept}}
        path = client.path_of({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        client.request("PATCH", path, json.dumps(patch).encode(), "application/merge-patch+json")


def why_not_launched(client: Client, pods: list[dict[str, Any]]) -> str:
    """Karpenter's latest word on why it launches nothing for any of `pods` (its FailedScheduling event), or ""."""
    if not pods:
        return ""
    names = {p["metadata"]["name"] for p in pods}
    said = [
        e
        for e in client.list("v1", "Event", pods[0]["metadata"]["namespace"])
        if e.get("reason") == "FailedScheduling"
        and e.get("source", {}).get("component", e.get("reportingComponent")) == "karpenter"
        and e.get("involvedObject", {}).get("name") in names
    ]
    latest = max(said, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "", default=None)
    return str(latest.get("message", "")) if latest else ""


def instance_types_file(plane: ControlPlane) -> Path:
    """Where a run's Karpenter reads its instance types."""
    return plane.folder / "karpenter-instance-types.json"
