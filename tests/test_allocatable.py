"""components/allocatable.py: every pod we emit requests only what a node of its pool advertises."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components import catalog, quantity
from components.allocatable import GPU_RESOURCE, allocatable, pod_requests, unadvertised
from components.fabric import profile
from components.fabricfit import machine_fabrics
from components.manifests import trainingjob
from components.manifests.plan import plan
from components.manifests.trainingruntime import runtime_names
from components.models import NetworkConfig, NodePoolSpec
from components.podfit import pods_fit
from components.pool import Pool
from components.pools import resolve_pools
from components.render import render
from components.resolution import resolve_file
from components.rules.pods import templates
from components.wellknown import POOL_LABEL
from tests.support.factories import ROCE_NETWORK, job, pool
from tests.support.stacks import EXAMPLE_STACKS

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted([*REPO.glob("Pulumi.*.yaml"), *EXAMPLE_STACKS])


def _stack_variants(tmp: Path) -> list[Path]:
    """Every stack and example, and each AWS one once more with its pools on the other provisioner."""
    variants = list(STACKS)
    for path in STACKS:
        doc = yaml.safe_load(path.read_text())
        pools = doc["config"].get("gpu-training:nodePools", [])
        if doc["config"].get("gpu-training:cluster", {}).get("provider") != "aws" or not pools:
            continue
        for spec in pools:
            if spec.get("provisioner", "karpenter" if not spec.get("minNodes") else "nodegroup") == "karpenter":
                # A Capacity Block pool starts empty on either provisioner (and a rack-scale pool is a node group).
                block = spec.get("capacity", {}).get("type") == "capacity-block"
                spec["provisioner"], spec["minNodes"] = "nodegroup", 0 if block else max(spec.get("minNodes", 0), 1)
            else:
                spec["provisioner"], spec["minNodes"] = "karpenter", 0
        other = tmp / f"other-provisioner-{path.parent.name}-{path.name}"
        other.write_text(yaml.safe_dump(doc, sort_keys=False))
        variants.append(other)
    return variants


def _pool_of(template: Any, pools: dict[str, Pool]) -> Pool | None:
    named = (template.metadata.get("labels") or {}).get(POOL_LABEL)
    if named:
        return pools.get(named)
    selector = template.spec.get("nodeSelector") or {}
    found = [p for p in pools.values() if p.node_selector and p.node_selector.items() <= selector.items()]
    return found[0] if len(found) == 1 else None


def test_every_pod_of_every_stack_requests_only_what_its_pools_nodes_advertise(tmp_path: Path) -> None:
    checked = set()
    for path in _stack_variants(tmp_path):
        stack = resolve_file(path)
        objects = render(stack).objects
        runtimes = [o for o in objects if o["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime")]
        for obj in objects:
            subjects = [_subject(r) for r in runtimes]
            for template in templates(obj, subjects):
                target = _pool_of(template, stack.pools)
                name = f"{path.name}: {obj['kind']} {obj['metadata']['name']} ({template.role})"
                if target is None:
                    assert not template.gpus, f"{name}: a GPU pod no pool's nodes would take"
                    continue
                requests = pod_requests(template.spec)
                assert not unadvertised(requests, target), name
                assert not [r for r in requests if r.startswith("hugepages-")], name
                checked.add((target.provisioner, target.fabric, obj["kind"]))
    # The walk reached pods on every provisioner, every fabric the stacks use, and every kind of pod we emit.
    assert {p for p, _, _ in checked} == {"karpenter", "nodegroup", "gke", None}
    assert {f for _, f, _ in checked} >= {"efa", "roce", "tcpxo"}
    assert {k for _, _, k in checked} >= {
        "PyTorchJob",
        "MPIJob",
        "Job",
        "TrainJob",
        "ClusterTrainingRuntime",
    }


def _subject(obj: dict[str, Any]) -> Any:
    from components.rules.subject import Subject

    return Subject(key=f"{obj['kind']}/{obj['metadata']['name']}", kind=obj["kind"], data=obj)


def test_no_pool_advertises_huge_pages() -> None:
    for fabric in ("efa", "roce", "infiniband", "tcp", "tcpx", "tcpxo", "rdma"):
        assert not [r for r in allocatable(pool(fabric)) if r.startswith("hugepages-")]
    assert unadvertised({"hugepages-2Mi": "5120Mi"}, pool("efa")) == [
        "requests hugepages-2Mi: 5120Mi, which no node of pool 'p5' advertises"
    ]


def test_a_p5_node_advertises_its_gpus_every_efa_device_and_the_kubelets_cpu() -> None:
    offered = allocatable(pool("efa"))
    assert offered[GPU_RESOURCE] == "8"
    assert offered["vpc.amazonaws.com/efa"] == "32"
    # What an EKS p5.48xlarge node reports (awsome-distributed-training @7217859 3.test_cases/pytorch/
    # mosaicml-composer/stable-diffusion/README.md: cpu 191450m): 192 vCPUs less the kubelet's 550m.
    assert offered["cpu"] == "191450m"


def test_karpenter_counts_less_memory_than_a_node_group_and_both_less_than_the_machine() -> None:
    karpenter = quantity.parse(allocatable(pool("efa"))["memory"] or "")
    grouped = quantity.parse(allocatable(pool("efa", provisioner="nodegroup", minNodes=1))["memory"] or "")
    machine = Decimal(2048 * 2**30)
    # Karpenter's VM overhead (7.5%) and the kubelet's fixed reservation (255Mi + 100Mi eviction).
    assert karpenter == machine - Decimal(157287 * 2**20) - Decimal(355 * 2**20)
    assert grouped == machine - Decimal(355 * 2**20)


def test_an_existing_clusters_node_is_counted_at_the_machine_it_names() -> None:
    offered = allocatable(pool("tcp", instanceType="p5.48xlarge", gpusPerNode=None))
    assert offered["cpu"] == "192" and offered["memory"] == "2048Gi"
    assert allocatable(pool("tcp"))["cpu"] is None, "an uncatalogued machine's cpu is unknown"


def test_device_plugin_resources_are_advertised_in_an_amount_the_stack_does_not_fix() -> None:
    roce = pool("roce")
    assert roce.rdma_resource and allocatable(roce)[roce.rdma_resource] is None
    assert not unadvertised({roce.rdma_resource: "1"}, roce)


def test_pod_requests_count_sidecars_and_the_largest_init_container() -> None:
    def c(cpu: str, **extra: Any) -> dict[str, Any]:
        return {"name": "x", "resources": {"requests": {"cpu": cpu}}, **extra}

    spec = {"containers": [c("2"), c("1")], "initContainers": [c("5"), c("1", restartPolicy="Always")]}
    assert pod_requests(spec) == {"cpu": "5"}
    spec["initContainers"] = [c("3"), c("1", restartPolicy="Always")]
    assert pod_requests(spec) == {"cpu": "4"}
    assert pod_requests({"containers": [{"resources": {"limits": {"memory": "5120Mi", "cpu": "500m"}}}]}) == {
        "memory": "5Gi",
        "cpu": "500m",
    }


@given(gpus=st.integers(min_value=1, max_value=16), efa=st.integers(min_value=0, max_value=64))
def test_a_request_fits_exactly_when_it_is_at_most_what_the_node_has(gpus: int, efa: int) -> None:
    p5 = pool("efa")
    problems = unadvertised({GPU_RESOURCE: str(gpus), "vpc.amazonaws.com/efa": str(efa)}, p5)
    assert bool(problems) == (gpus > p5.gpus_per_node or efa > p5.efa_interfaces)


_NETWORK = NetworkConfig.model_validate({"networks": [ROCE_NETWORK]})


@st.composite
def pools(draw: st.DrawFn) -> Pool:
    """A pool of any catalogued machine on any provisioner, with any fabric the machine can run."""
    provider = draw(st.sampled_from(["aws", "gcp", "existing"]))
    maker = "aws" if provider == "existing" and draw(st.booleans()) else ("gcp" if provider == "existing" else provider)
    name = draw(st.sampled_from(catalog.names(maker)))  # type: ignore[arg-type]
    machine = catalog.lookup(maker, name)  # type: ignore[arg-type]
    assert machine is not None
    spec: dict[str, Any] = {"name": "gpus", "maxNodes": draw(st.integers(min_value=1, max_value=8))}
    if provider == "aws":
        spec |= {"instanceType": name, "zone": "us-east-1a"}
        if catalog.ultraservers(name):  # sold only through Capacity Blocks, whose pools start empty
            spec["capacity"] = {"type": "capacity-block", "reservationId": "cr-0123456789abcdef0"}
        elif draw(st.booleans()):
            spec |= {"provisioner": "nodegroup", "minNodes": 1}
        if machine.has_efa and draw(st.booleans()):
            spec["fabric"] = "tcp"  # opting out of EFA
    elif provider == "gcp":
        spec |= {"machineType": name, "zone": "us-central1-a"}
    else:
        key = "instanceType" if maker == "aws" else "machineType"
        spec |= {key: name, "nodeSelector": {"example.com/gpus": "yes"}}
        if "roce" in machine_fabrics(machine) and draw(st.booleans()):  # a machine with RoCE NICs
            spec |= {"fabric": "roce", "networks": ["roce-network"]}
    resolved, issues = resolve_pools([NodePoolSpec.model_validate(spec)], provider, _region(provider), _NETWORK)
    assert not issues, issues
    found = next(iter(resolved.values()))
    return found.model_copy(update={"runtimes": runtime_names(found)})


def _region(provider: str) -> str | None:
    return {"aws": "us-east-1", "gcp": "us-central1"}.get(provider)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=pools(),
    launcher=st.sampled_from(["pytorch", "mpi", "tensorflow", "indexed", "trainjob"]),
    whole=st.booleans(),
)
def test_every_pod_a_job_makes_on_any_pool_asks_only_what_its_nodes_advertise(
    target: Pool, launcher: str, whole: bool
) -> None:
    shared = not profile(target, "training").whole_node
    gpus = max(1, target.gpus_per_node // 2) if shared and not whole else target.gpus_per_node
    fields: dict[str, Any] = {"launcher": launcher, "nodes": min(2, target.max_nodes), "gpusPerNode": gpus}
    if target.fabric == "roce":
        fields["namespace"] = "training"
    planned = plan(job(**fields), target)
    objects = trainingjob.objects(planned)
    assert pods_fit(target, objects, "jobs[0].nodePool", planned) == []
    offered = allocatable(target)
    assert not [r for r in offered if r.startswith("hugepages-")]
    for name, amount in planned.requests.items():  # the default size leaves the node its DaemonSets' room
        assert offered[name] is not None and quantity.parse(amount) <= quantity.parse(offered[name] or "0")


def test_a_pool_states_what_its_unknown_machines_advertise_and_a_catalogued_one_may_not() -> None:
    assert (allocatable(pool("tcp"))["cpu"], allocatable(pool("tcp"))["memory"]) == (None, None)
    stated = pool("tcp", allocatable={"cpu": 190, "memory": "1900Gi"})
    assert (allocatable(stated)["cpu"], allocatable(stated)["memory"]) == ("190", "1900Gi")
    assert unadvertised({"memory": "2000Gi"}, stated), "render holds pods to the stated figure"
    spec = NodePoolSpec.model_validate(
        {"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a", "allocatable": {"memory": "1900Gi"}}
    )
    _, issues = resolve_pools([spec], "aws", "us-east-1", NetworkConfig())
    assert [i.path for i in issues] == ["nodePools[0].allocatable"], issues
    assert "drop allocatable.memory" in issues[0].message
