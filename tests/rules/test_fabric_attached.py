"""fabric-attached: GPU pods of a multi-node job on a GPU-fabric pool attach it, or the rule says how they fall
back to TCP; nothing is said when the pool's fabric cannot be known."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import catalog, rules
from components.fabric import EFA_RESOURCE, GKE_INTERFACES_ANNOTATION, MULTUS_ANNOTATION
from components.manifests import trainingjob
from components.models import NetworkConfig, NodePoolSpec
from components.pool import Pool
from components.pools import resolve_pools
from components.rules.rule import Settings
from components.rules.subject import Subject
from components.rules.subjects import from_objects, from_pools, from_resources
from components.wellknown import POOL_LABEL
from tests.support.factories import planned, pool

RULE = "fabric-attached"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"

# GKE GPUDirect as GKE's guides and cluster-toolkit write it: (machine, accelerator, GPU NIC networks).
GKE = {
    "tcpx": ("a3-highgpu-8g", "nvidia-h100-80gb", [f"vpc{i}" for i in range(1, 5)]),
    "tcpxo": ("a3-megagpu-8g", "nvidia-h100-mega-80gb", [f"vpc{i}" for i in range(1, 9)]),
    "rdma": ("a3-ultragpu-8g", "nvidia-h200-141gb", [f"rdma-{i}" for i in range(8)]),
}


def findings(subjects: list[Subject], rule: str | None = RULE) -> list[str]:
    return [f.message for f in rules.run(subjects, Settings()) if rule is None or f.rule == rule]


def gke_pool(fabric: str, name: str = "gpu") -> Pool:
    machine = GKE[fabric][0]
    spec = {"name": name, "machineType": machine, "maxNodes": 4, "zone": "us-central1-a"}
    pools, issues = resolve_pools([NodePoolSpec.model_validate(spec)], "gcp", "us-central1", NetworkConfig())
    assert not issues, issues
    return pools[name]


def gke_job(
    fabric: str,
    nics: int | None = None,
    *,
    selector: dict[str, str] | None = None,
    nodes: int = 2,
    gpus: int = 8,
) -> dict[str, Any]:
    """A hand-written PyTorchJob on GKE GPUDirect attaching its first `nics` GPU NICs (all by default)."""
    machine, _, networks = GKE[fabric]
    attached = networks if nics is None else networks[:nics]
    interfaces = [{"interfaceName": "eth0", "network": "default"}]
    if fabric == "rdma":
        interfaces.append({"interfaceName": "eth1", "network": "gvnic-1"})  # the extra gVNIC, no GPU traffic
    first = len(interfaces)
    interfaces += [{"interfaceName": f"eth{first + i}", "network": n} for i, n in enumerate(attached)]
    gpu_nics = ",".join(i["interfaceName"] for i in interfaces[first:])
    env = {"NCCL_SOCKET_IFNAME": "eth0"}
    env |= {
        "tcpx": {"NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": gpu_nics, "NCCL_GPUDIRECTTCPX_CTRL_DEV": "eth0"},
        "tcpxo": {"NCCL_FASTRAK_IFNAME": gpu_nics, "NCCL_FASTRAK_CTRL_DEV": "eth0"},
        "rdma": {"NCCL_NET": "gIB"},
    }[fabric]
    annotations = {"networking.gke.io/default-interface": "eth0", GKE_INTERFACES_ANNOTATION: json.dumps(interfaces)}
    template = {
        "metadata": {"annotations": annotations},
        "spec": {
            "nodeSelector": selector or {INSTANCE_TYPE: machine},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {
                    "name": "pytorch",
                    "image": "us-docker.pkg.dev/project/training/train:v1",
                    "env": [{"name": k, "value": v} for k, v in env.items()],
                    "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}},
                    "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
                }
            ],
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}],
        },
    }
    replicas = {"Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": template}}
    if nodes > 1:
        replicas["Worker"] = {"replicas": nodes - 1, "restartPolicy": "OnFailure", "template": copy.deepcopy(template)}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": f"{fabric}-train", "namespace": "training"},
        "spec": {"runPolicy": {"backoffLimit": 3}, "pytorchReplicaSpecs": replicas},
    }


def no_interfaces(job: dict[str, Any]) -> dict[str, Any]:
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        del replica["template"]["metadata"]["annotations"][GKE_INTERFACES_ANNOTATION]
    return job


def efa_mpijob() -> list[dict[str, Any]]:
    return trainingjob.objects(planned("efa", launcher="mpi"))


def efa_worker(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return objects[-1]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]


def set_efa(objects: list[dict[str, Any]], count: int | None) -> None:
    for section in ("limits", "requests"):
        resources = efa_worker(objects)["spec"]["containers"][0]["resources"][section]
        if count is None:
            del resources[EFA_RESOURCE]
        else:
            resources[EFA_RESOURCE] = count


# EFA


def test_an_efa_mpijob_on_p5_without_the_efa_resource_is_caught() -> None:
    objects = efa_mpijob()
    set_efa(objects, None)
    (message,) = findings(from_objects(objects) + from_pools([pool("efa")]))
    assert message == (
        "Worker/worker: requests no vpc.amazonaws.com/efa, so it attaches none of the 32 EFA devices of "
        "pool p5 (p5.48xlarge) and NCCL falls back to TCP sockets"
    )
    assert rules.run(from_objects(objects) + from_pools([pool("efa")]), Settings())[0].enforcement == "mandatory"


def test_a_partial_efa_count_is_its_own_message() -> None:
    objects = efa_mpijob()
    set_efa(objects, 4)
    assert findings(from_objects(objects) + from_pools([pool("efa")])) == [
        "Worker/worker: attaches 4 of 32 EFA devices of pool p5 (p5.48xlarge); NCCL uses only those"
    ]


@pytest.mark.parametrize("fabric", ["efa", "roce", "infiniband", "tcp"])
@pytest.mark.parametrize("launcher", ["pytorch", "mpi", "tensorflow", "indexed"])
def test_our_builders_attach_the_fabric(fabric: str, launcher: str) -> None:
    objects = trainingjob.objects(planned(fabric, launcher=launcher))
    assert findings(from_objects(objects) + from_pools([pool(fabric)])) == []


def test_a_single_node_job_is_exempt() -> None:
    objects = trainingjob.objects(planned("efa", launcher="pytorch", nodes=1))
    for replica in objects[-1]["spec"]["pytorchReplicaSpecs"].values():
        for section in ("limits", "requests"):
            del replica["template"]["spec"]["containers"][0]["resources"][section][EFA_RESOURCE]
    assert findings(from_objects(objects) + from_pools([pool("efa")])) == []


def test_on_plain_yaml_the_instance_type_tells_the_fabric() -> None:
    objects = efa_mpijob()
    set_efa(objects, None)
    assert findings(from_objects(objects)) == [], "the pool label alone tells nothing without the pool"
    efa_worker(objects)["spec"]["nodeSelector"] = {INSTANCE_TYPE: "p5.48xlarge"}
    (message,) = findings(from_objects(objects))
    assert "none of the 32 EFA devices of p5.48xlarge" in message
    efa_worker(objects)["spec"]["nodeSelector"] = {}
    efa_worker(objects)["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": INSTANCE_TYPE, "operator": "In", "values": ["p5.48xlarge"]}]}
                ]
            }
        }
    }
    assert len(findings(from_objects(objects))) == 1


@pytest.mark.parametrize(
    "selector",
    [
        {INSTANCE_TYPE: "p9.96xlarge"},
        {"cloud.google.com/gke-nodepool": "a3mega"},
        {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        {INSTANCE_TYPE: "g6.2xlarge"},
    ],
)
def test_an_unknown_or_tcp_machine_says_nothing(selector: dict[str, str]) -> None:
    objects = efa_mpijob()
    set_efa(objects, None)
    efa_worker(objects)["spec"]["nodeSelector"] = selector
    assert findings(from_objects(objects)) == []


def test_the_pool_outranks_the_instance_type() -> None:
    """An existing cluster's p5 pool run on TCP on purpose: the pool's fabric is what the rule goes by."""
    tcp = pool("tcp", nodeSelector={INSTANCE_TYPE: "p5.48xlarge"})
    objects = trainingjob.objects(planned("tcp", launcher="mpi"))
    efa_worker(objects)["spec"]["nodeSelector"] = dict(tcp.node_selector)
    assert findings(from_objects(objects)) != [], "without the pool, p5.48xlarge means EFA"
    assert findings(from_objects(objects) + from_pools([tcp])) == []


def test_pools_of_different_fabrics_a_pod_may_land_on_say_nothing() -> None:
    objects = efa_mpijob()
    set_efa(objects, None)
    efa = from_pools([pool("efa")])
    tcp = Subject("NodePool/other", "NodePool", {**efa[0].data, "fabric": "tcp", "efa": False})
    assert findings(from_objects(objects) + efa + [tcp]) == []


def test_host_network_pods_are_exempt() -> None:
    objects = efa_mpijob()
    set_efa(objects, None)
    efa_worker(objects)["spec"]["hostNetwork"] = True
    assert findings(from_objects(objects) + from_pools([pool("efa")])) == []


def test_nccl_net_socket_forces_tcp() -> None:
    objects = efa_mpijob()
    efa_worker(objects)["spec"]["containers"][0]["env"].append({"name": "NCCL_NET", "value": "Socket"})
    assert findings(from_objects(objects) + from_pools([pool("efa")])) == [
        "Worker/worker: NCCL_NET=Socket makes NCCL use TCP sockets, not efa"
    ]


def test_karpenter_node_pools_in_rendered_yaml_tell_the_fabric() -> None:
    """Rendered YAML of an EKS stack holds the Karpenter NodePool and its EC2NodeClass with EFA interfaces."""
    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "p5"},
        "spec": {"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]},
    }
    node_class["spec"]["networkInterfaces"] += [
        {"networkCardIndex": card, "deviceIndex": 0 if card else 1, "interfaceType": "efa-only"} for card in range(32)
    ]
    node_pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "p5"},
        "spec": {
            "template": {
                "metadata": {"labels": {POOL_LABEL: "p5"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "p5"},
                    "requirements": [{"key": INSTANCE_TYPE, "operator": "In", "values": ["p5.48xlarge"]}],
                },
            }
        },
    }
    objects = efa_mpijob()
    assert findings(from_objects([node_class, node_pool, *objects])) == []
    set_efa(objects, 16)
    assert findings(from_objects([node_class, node_pool, *objects])) == [
        "Worker/worker: attaches 16 of 32 EFA devices of pool p5 (p5.48xlarge); NCCL uses only those"
    ]
    del node_class["spec"]["networkInterfaces"]
    assert findings(from_objects([node_class, node_pool, *objects])) == [], "no EFA on the nodes: nothing to attach"


# InfiniBand / RoCE


def roce_worker(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return objects[-1]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]


def test_a_roce_pod_without_its_network_is_caught() -> None:
    objects = trainingjob.objects(planned("roce"))
    del roce_worker(objects)["metadata"]["annotations"][MULTUS_ANNOTATION]
    (message,) = findings(from_objects(objects) + from_pools([pool("roce")]))
    assert message.startswith("Worker pods attach no roce network of pool h100")


def test_an_rdma_pod_without_a_device_is_caught_once() -> None:
    objects = trainingjob.objects(planned("infiniband"))
    container = roce_worker(objects)["spec"]["containers"][0]
    for section in ("limits", "requests"):
        del container["resources"][section]["rdma/rdma_shared_device_a"]
    subjects = from_objects(objects) + from_pools([pool("infiniband")])
    assert findings(subjects) == [], "NCCL_IB_DISABLE=0: rdma-devices reports it"
    assert findings(subjects, "rdma-devices")
    container["env"] = [e for e in container["env"] if e["name"] != "NCCL_IB_DISABLE"]
    assert findings(from_objects(objects) + from_pools([pool("infiniband")])) == [
        "Worker/pytorch: requests no RDMA device resource, so NCCL sees no HCA and falls back to TCP sockets"
    ]


def test_nccl_ib_disable_turns_the_fabric_off() -> None:
    objects = trainingjob.objects(planned("roce"))
    container = roce_worker(objects)["spec"]["containers"][0]
    for e in container["env"]:
        if e["name"] == "NCCL_IB_DISABLE":
            e["value"] = "1"
    assert findings(from_objects(objects) + from_pools([pool("roce")])) == [
        "Worker/pytorch: NCCL_IB_DISABLE=1 turns the roce fabric off; NCCL uses TCP sockets"
    ]


# GKE GPUDirect


@pytest.mark.parametrize("fabric", sorted(GKE))
def test_a_correct_gke_gpudirect_job_passes_every_rule(fabric: str) -> None:
    # The job is a PyTorchJob, on the legacy path: that advice is all that is said of it.
    legacy = [m for m in findings(from_objects([gke_job(fabric)]), rule="legacy-launcher")]
    assert len(legacy) == 1
    assert findings(from_objects([gke_job(fabric)]), rule=None) == legacy
    with_pool = gke_job(fabric, selector={POOL_LABEL: "gpu"})
    assert findings(from_objects([with_pool]) + from_pools([gke_pool(fabric)]), rule=None) == legacy


def test_a_tcpxo_job_without_the_interfaces_annotation_is_caught() -> None:
    job = no_interfaces(gke_job("tcpxo", selector={POOL_LABEL: "gpu"}))
    messages = findings(from_objects([job]) + from_pools([gke_pool("tcpxo")]))
    assert messages == [
        f"{role} pods attach none of the 8 GPU NICs (tcpxo) of pool gpu (a3-megagpu-8g): no "
        "networking.gke.io/interfaces annotation or DRA resource claim, so NCCL falls back to TCP over eth0"
        for role in ("Master", "Worker")
    ]


def test_a_tcpxo_job_attaching_4_of_8_nics_is_caught_as_advice_when_only_the_machine_type_tells() -> None:
    job = gke_job("tcpxo", 4, selector={GKE_ACCELERATOR: "nvidia-h100-mega-80gb"})
    found = [f for f in rules.run(from_objects([job]), Settings()) if f.rule == RULE]
    assert [f.message for f in found] == [
        f"{role} pods attach 4 of 8 GPU NICs (tcpxo) of a3-megagpu-8g; NCCL uses only those, if its nodes were "
        "built with it"
        for role in ("Master", "Worker")
    ]
    assert {f.enforcement for f in found} == {"advisory"}, "a node pool may lack the GPU NIC networks"
    on_the_pool = findings(
        from_objects([gke_job("tcpxo", 4, selector={POOL_LABEL: "gpu"})]) + from_pools([gke_pool("tcpxo")])
    )
    assert on_the_pool and all(m.endswith("NCCL uses only those") for m in on_the_pool)


def test_an_accelerator_on_machines_of_several_fabrics_says_nothing() -> None:
    """nvidia-h100-80gb comes in a3-highgpu-1g to 8g; a 4-GPU pod may land on a 4g, which has no GPU NICs."""
    job = no_interfaces(gke_job("tcpx", selector={GKE_ACCELERATOR: "nvidia-h100-80gb"}, gpus=4))
    assert findings(from_objects([job])) == []
    job = no_interfaces(gke_job("tcpx", selector={GKE_ACCELERATOR: "nvidia-h100-80gb"}))
    assert len(findings(from_objects([job]))) == 2


def test_a_dra_claim_attaches_the_nics() -> None:
    job = no_interfaces(gke_job("rdma"))
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        spec = replica["template"]["spec"]
        spec["resourceClaims"] = [{"name": "rdma-nics", "resourceClaimTemplateName": "gpu-rdma-nics"}]
        spec["containers"][0]["resources"]["claims"] = [{"name": "rdma-nics"}]
    assert findings(from_objects([job])) == []


def test_single_node_and_host_network_gke_jobs_are_exempt() -> None:
    assert findings(from_objects([no_interfaces(gke_job("tcpxo", nodes=1))])) == []
    job = no_interfaces(gke_job("tcpxo"))
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["spec"]["hostNetwork"] = True
    assert findings(from_objects([job])) == []


def test_nccl_interface_reads_the_gke_annotation() -> None:
    """eth0 is right for NCCL_SOCKET_IFNAME on GKE GPUDirect; the GPU NIC variables must name attached NICs."""
    job = gke_job("tcpxo", 6)
    assert findings(from_objects([job]), "nccl-socket-interface") == []
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        env = replica["template"]["spec"]["containers"][0]["env"]
        next(e for e in env if e["name"] == "NCCL_FASTRAK_IFNAME")["value"] = ",".join(f"eth{i}" for i in range(1, 9))
    assert findings(from_objects([job]), "nccl-socket-interface") == [
        f"{role}/pytorch: NCCL_FASTRAK_IFNAME names eth7, eth8, which the pod does not attach "
        "(eth0, eth1, eth2, eth3, eth4, eth5, eth6)"
        for role in ("Master", "Worker")
    ]


def preview(resource_type: str, props: dict[str, Any], name: str, *dependencies: Any) -> SimpleNamespace:
    """A preview's resource as the policy pack hands it to subjects.from_resources."""
    return SimpleNamespace(
        resource_type=resource_type,
        props=props,
        urn=f"urn:pulumi:dev::p::{resource_type}::{name}",
        name=name,
        opts=SimpleNamespace(protect=False),
        dependencies=list(dependencies),
    )


def kube(obj: dict[str, Any]) -> SimpleNamespace:
    return preview(f"kubernetes:{obj['apiVersion']}:{obj['kind']}", obj, obj["metadata"]["name"])


def gke_node_pool(machine: str, network_config: dict[str, Any] | None) -> SimpleNamespace:
    props: dict[str, Any] = {
        "name": "gpu",
        "nodeConfig": {
            "machineType": machine,
            "guestAccelerators": [{"type": "nvidia", "count": 8}],
            "labels": {POOL_LABEL: "gpu"},
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
        },
    }
    if network_config is not None:
        props["networkConfig"] = network_config
    return preview("gcp:container/nodePool:NodePool", props, "gpu")


def test_a_preview_gke_node_pool_is_gpudirect_when_its_nodes_have_the_gpu_networks() -> None:
    job = kube(no_interfaces(gke_job("tcpxo", selector={POOL_LABEL: "gpu"})))
    extra = {"additionalNodeNetworkConfigs": [{"network": f"vpc{i}", "subnetwork": f"vpc{i}"} for i in range(1, 9)]}
    assert len(findings(from_resources([gke_node_pool("a3-megagpu-8g", extra), job]))) == 2
    assert findings(from_resources([gke_node_pool("a3-megagpu-8g", None), job])) == [], "no GPU NICs: tcp"
    by_nodepool = kube(no_interfaces(gke_job("tcpxo", selector={"cloud.google.com/gke-nodepool": "gpu"})))
    assert len(findings(from_resources([gke_node_pool("a3-megagpu-8g", extra), by_nodepool]))) == 2


def test_a_preview_dranet_pool_takes_a_resource_claim() -> None:
    pool_ = gke_node_pool("a4-highgpu-8g", {"acceleratorNetworkProfile": "auto"})
    job = no_interfaces(gke_job("rdma", selector={POOL_LABEL: "gpu"}))
    (first, _) = findings(from_resources([pool_, kube(job)]))
    assert first.startswith("Master pods attach none of the 8 GPU NICs (rdma) of pool gpu (a4-highgpu-8g)")
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["spec"]["resourceClaims"] = [{"name": "nics", "resourceClaimTemplateName": "gpu-rdma-nics"}]
    assert findings(from_resources([pool_, kube(job)])) == []


def test_a_preview_eks_node_group_with_efa_interfaces_is_an_efa_pool() -> None:
    interfaces = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
    interfaces += [
        {"networkCardIndex": c, "deviceIndex": 0 if c else 1, "interfaceType": "efa-only"} for c in range(32)
    ]
    template = preview(
        "aws:ec2/launchTemplate:LaunchTemplate",
        {"instanceType": "p5.48xlarge", "networkInterfaces": interfaces},
        "p5",
    )
    group = preview(
        "aws:eks/nodeGroup:NodeGroup",
        {"amiType": "AL2023_x86_64_NVIDIA", "labels": {POOL_LABEL: "p5"}, "subnetIds": ["s-1"]},
        "p5",
        template,
    )
    objects = efa_mpijob()
    assert findings(from_resources([template, group, *map(kube, objects)])) == []
    set_efa(objects, None)
    (message,) = findings(from_resources([template, group, *map(kube, objects)]))
    assert "none of the 32 EFA devices of pool p5 (p5.48xlarge)" in message


# Properties over the catalog


MACHINES = [m for provider in ("aws", "gcp") for n in catalog.names(provider) if (m := catalog.lookup(provider, n))]


@settings(max_examples=150, deadline=None)
@given(machine=st.sampled_from(MACHINES), data=st.data())
def test_a_pod_selecting_a_machine_is_caught_iff_it_attaches_fewer_devices_than_the_machine_has(
    machine: catalog.MachineType, data: st.DataObject
) -> None:
    devices = machine.efa_interfaces if machine.fabric == "efa" else machine.gpu_nics
    have = data.draw(st.integers(0, max(devices, 1)))
    objects = efa_mpijob()
    worker = efa_worker(objects)
    worker["spec"]["nodeSelector"] = {INSTANCE_TYPE: machine.name}
    container = worker["spec"]["containers"][0]
    for section in ("limits", "requests"):
        container["resources"][section]["nvidia.com/gpu"] = machine.gpus
        container["resources"][section][EFA_RESOURCE] = have if machine.fabric == "efa" else 0
    if machine.fabric in GKE:
        networks = GKE[machine.fabric][2][:have]
        interfaces = [{"interfaceName": "eth0", "network": "default"}]
        interfaces += [{"interfaceName": f"eth{i + 1}", "network": n} for i, n in enumerate(networks)]
        worker.setdefault("metadata", {}).setdefault("annotations", {})[GKE_INTERFACES_ANNOTATION] = json.dumps(
            interfaces
        )
    messages = findings(from_objects(objects))
    if machine.fabric == "tcp" or have >= devices:
        assert messages == []
    else:
        (message,) = messages
        unit = "EFA devices" if machine.fabric == "efa" else f"GPU NICs ({machine.fabric})"
        assert (f"{have} of {devices} {unit}" if have else f"none of the {devices} {unit}") in message
