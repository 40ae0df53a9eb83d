"""Stacks the add-on tests plan: the repository's stack files, and variations that reach every add-on."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from components.config import parse_stack
from components.resolution import resolve
from components.stack import Stack

REPO = Path(__file__).resolve().parents[2]


def raw_config(name: str) -> dict[str, Any]:
    """The gpu-training keys of Pulumi.<name>.yaml, as written."""
    config = yaml.safe_load((REPO / f"Pulumi.{name}.yaml").read_text())["config"]
    return {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpu-training:")}


def stack_file(name: str, **changes: Any) -> Stack:
    """The stack of Pulumi.<name>.yaml, with top-level keys replaced by `changes`."""
    raw = raw_config(name)
    raw.update(copy.deepcopy(changes))
    return resolve(parse_stack(raw))


def everything_aws() -> Stack:
    """prod with EFS too, Kueue, Prometheus, priority classes, and a second pool on a node group the
    Cluster Autoscaler scales (beside the Karpenter one)."""
    return stack_file(
        "prod",
        nodePools=[
            {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1a"},
            {"name": "g6e", "instanceType": "g6e.48xlarge", "minNodes": 1, "maxNodes": 4, "zone": "us-east-1b"},
        ],
        scheduler={
            "type": "kueue",
            "queues": [{"name": "research", "gpus": 16}],
            "priorityClasses": [{"name": "training-high", "value": 1000}],
        },
        storage={
            "volumes": [
                {"name": "home", "backend": "efs", "size": "1Ti"},
                {"name": "checkpoints", "backend": "fsx-lustre", "size": "24Ti"},
            ]
        },
        monitoring={"prometheus": True},
        jobs=[],
    )


def everything_existing() -> Stack:
    """dev with an ib-sriov network, the SR-IOV operator and its policy, and nvidia-peermem built against the
    hosts' MOFED."""
    network = {
        "networks": [
            {
                "name": "ib-net",
                "type": "ib-sriov",
                "resourceName": "openshift.io/ib_vf",
                "pkey": "0x00FF",
                "ipam": {"type": "whereabouts", "range": "192.168.20.0/24"},
            }
        ],
        "rdma": {"sharedDevicePlugin": True, "resourceName": "rdma/hca", "interfaces": ["ibp12s0"]},
        "sriov": {
            "operator": True,
            "policies": [
                {"name": "ib", "resourceName": "ib_vf", "pfNames": ["ibp12s0"], "numVfs": 8, "linkType": "ib"}
            ],
        },
    }
    pools = [
        {
            "name": "h100",
            "gpusPerNode": 8,
            "maxNodes": 4,
            "fabric": "infiniband",
            "networks": ["ib-net"],
            "nodeSelector": {"nvidia.com/gpu.present": "true"},
        }
    ]
    return stack_file(
        "dev",
        network=network,
        nodePools=pools,
        jobs=[],
        gpuOperator={"rdma": "peermem", "useHostMofed": True},
        storage={"volumes": []},
    )


def trainer_topology() -> Stack:
    """dev with Kubeflow Trainer and Volcano placing jobs by a two-level topology the cluster declares."""
    levels = [{"name": "spine", "nodeLabel": "example.com/spine"}, {"name": "leaf", "nodeLabel": "example.com/leaf"}]
    scheduler = {**raw_config("dev")["scheduler"], "topology": {"enabled": True, "levels": levels}}
    return stack_file("dev", trainer={"enabled": True}, scheduler=scheduler)


def rack_scale_existing() -> Stack:
    """dev with a GB200 NVL72 pool beside its H100 one, and a 2-node job on it: the DRA driver's ComputeDomains."""
    pools = [
        *raw_config("dev")["nodePools"],
        {
            "name": "gb200",
            "gpusPerNode": 4,
            "gpuModel": "NVIDIA GB200",
            "maxNodes": 18,
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"},
        },
    ]
    jobs = [
        {
            "name": "mnnvl",
            "launcher": "pytorch",
            "image": "registry.example.com/training:v2.0",
            "command": ["train.py"],
            "nodes": 2,
            "nodePool": "gb200",
        }
    ]
    return stack_file("dev", nodePools=pools, jobs=jobs)


def efa_dra() -> Stack:
    """prod with its p5 pool in a node group whose EFA devices come through the AWS EFA DRA driver."""
    p5 = {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1a", "provisioner": "nodegroup"}
    return stack_file("prod", nodePools=[p5], network={"efa": {"mode": "dra"}})


def queued_aws() -> Stack:
    """prod with Kueue and its p5 pool provisioned through the Cluster Autoscaler's ProvisioningRequests."""
    p5 = {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1a", "queuedProvisioning": True}
    queues = [{"name": "pretraining", "gpus": 64, "weight": 2}, {"name": "research", "gpus": 16}]
    return stack_file("prod", nodePools=[p5], scheduler={"type": "kueue", "queues": queues})


STACKS = {
    "dev": lambda: stack_file("dev"),
    "prod": lambda: stack_file("prod"),
    "gke": lambda: stack_file("gke"),
    "everything-aws": everything_aws,
    "everything-existing": everything_existing,
    "trainer-topology": trainer_topology,
    "rack-scale-existing": rack_scale_existing,
    "efa-dra": efa_dra,
    "queued-aws": queued_aws,
}
