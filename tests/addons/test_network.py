"""Multus, whereabouts, the Network Operator's NicClusterPolicy, SR-IOV and the EFA device plugin."""

from __future__ import annotations

import json

import pytest

from components.addons import network
from components.errors import ConfigError
from components.versions import MULTUS_IMAGE, WHEREABOUTS_IMAGE
from tests.addons.stacks import efa_dra, everything_aws, everything_existing, stack_file
from tests.support.schemas import assert_valid


def test_multus_and_whereabouts_when_networks_use_them() -> None:
    dev = stack_file("dev")
    assert network.multus(dev).remotes[0].url.endswith("v4.3.0/deployments/multus-daemonset-thick.yml")
    whereabouts = network.whereabouts(dev)
    assert whereabouts.needs == ("multus",) and len(whereabouts.remotes) == 4
    prod = stack_file("prod")
    assert network.multus(prod) is None and network.whereabouts(prod) is None


def test_multus_and_whereabouts_images_are_pinned() -> None:
    daemonset = {
        "kind": "DaemonSet",
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [
                        {
                            "name": "install-multus-binary",
                            "image": "ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot-thick",
                        }
                    ],
                    "containers": [
                        {"name": "kube-multus", "image": "ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot-thick"},
                        {"name": "sidecar", "image": "busybox:1.36"},
                    ],
                }
            }
        },
    }
    patched = network.pin_multus_image(daemonset)["spec"]["template"]["spec"]
    assert [c["image"] for c in [*patched["initContainers"], *patched["containers"]]] == [
        MULTUS_IMAGE,
        MULTUS_IMAGE,
        "busybox:1.36",
    ]
    deployment = {
        "kind": "Deployment",
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "whereabouts", "image": "ghcr.io/k8snetworkplumbingwg/whereabouts:latest"}]
                }
            }
        },
    }
    assert (
        network.pin_whereabouts_image(deployment)["spec"]["template"]["spec"]["containers"][0]["image"]
        == WHEREABOUTS_IMAGE
    )
    crd = {"kind": "CustomResourceDefinition", "metadata": {"name": "ippools.whereabouts.cni.cncf.io"}}
    assert network.pin_whereabouts_image(crd) is crd


def test_nic_cluster_policy_exposes_the_rdma_resource_on_every_rail() -> None:
    policy = network.nic_cluster_policy(stack_file("dev"))
    assert_valid(policy)
    assert policy["metadata"]["name"] == "nic-cluster-policy"
    config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    rails = [f"ens{n}f0np0" for n in range(1, 9)]
    assert config == {
        "configList": [
            {
                "resourceName": "rdma_shared_device_a",
                "rdmaHcaMax": 63,
                "selectors": {"vendors": ["15b3"], "ifNames": rails},
            }
        ]
    }
    assert "ofedDriver" not in policy["spec"], "DMA-BUF works with the inbox drivers: no DOCA-OFED container"
    assert policy["spec"]["secondaryNetwork"] == {
        "cniPlugins": {
            "image": "plugins",
            "repository": "nvcr.io/nvidia/mellanox",
            "version": "network-operator-v26.4.1",
        }
    }


def test_nic_cluster_policy_runs_on_the_rdma_pools_nodes_only_and_tolerates_their_taints() -> None:
    pools = [
        {
            "name": "h100",
            "gpusPerNode": 8,
            "maxNodes": 4,
            "fabric": "roce",
            "rails": {"count": 8, "interfaces": "ens{n}f0np0", "range": "192.168.0.0/16"},
            "taints": [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}],
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "rack": "r1"},
        },
        {"name": "l4", "gpusPerNode": 4, "maxNodes": 2, "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"}},
    ]
    policy = network.nic_cluster_policy(stack_file("dev", nodePools=pools, jobs=[]))
    assert_valid(policy)
    assert policy["spec"]["nodeAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H100-80GB-HBM3"]},
                        {"key": "rack", "operator": "In", "values": ["r1"]},
                    ]
                }
            ]
        }
    }, "the tcp pool's nodes get none of it"
    assert policy["spec"]["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "training", "effect": "NoSchedule"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "operator": "Equal",
            "value": "pending",
            "effect": "NoSchedule",
        },
    ]


def test_peermem_without_host_mofed_brings_the_doca_driver_scoped_to_the_rdma_nodes() -> None:
    policy = network.nic_cluster_policy(stack_file("dev", gpuOperator={"rdma": "peermem"}))
    assert_valid(policy)
    assert policy["spec"]["ofedDriver"]["image"] == "doca-driver", "no host MOFED: the operator brings it"
    assert "nodeAffinity" in policy["spec"]
    hosts = stack_file("dev", gpuOperator={"rdma": "peermem", "useHostMofed": True})
    assert "ofedDriver" not in network.nic_cluster_policy(hosts)["spec"]


SRIOV_ONLY = {
    "networks": [
        {
            "name": "ib-net",
            "type": "ib-sriov",
            "resourceName": "openshift.io/ib_vf",
            "ipam": {"type": "whereabouts", "range": "192.168.20.0/24"},
        }
    ],
    "rdma": {"sharedDevicePlugin": False},
}
IB_POOL = {
    "name": "h100",
    "gpusPerNode": 8,
    "maxNodes": 4,
    "fabric": "infiniband",
    "networks": ["ib-net"],
    "nodeSelector": {"nvidia.com/gpu.present": "true"},
}


def test_an_sriov_only_stack_installs_no_network_operator_with_dma_buf() -> None:
    stack = stack_file("dev", network=SRIOV_ONLY, nodePools=[IB_POOL], jobs=[])
    assert network.network_operator(stack) is None and network.nic_cluster_policy(stack) is None


def test_an_sriov_only_stack_with_peermem_gets_mofed_from_the_network_operator() -> None:
    # Without it, the GPU driver's init container would wait for MOFED forever.
    stack = stack_file("dev", network=SRIOV_ONLY, nodePools=[IB_POOL], jobs=[], gpuOperator={"rdma": "peermem"})
    assert network.network_operator(stack) is not None
    policy = network.nic_cluster_policy(stack)
    assert_valid(policy)
    assert "ofedDriver" in policy["spec"] and "rdmaSharedDevicePlugin" not in policy["spec"]


def test_ipoib_networks_get_the_ipoib_cni_and_their_parents_in_the_shared_plugin() -> None:
    ipoib = {"name": "ib0", "type": "ipoib", "master": "ibs1", "ipam": {"range": "192.168.30.0/24"}}
    pool = {**IB_POOL, "networks": ["ib0"]}
    stack = stack_file("dev", network={"networks": [ipoib]}, nodePools=[pool], jobs=[])
    policy = network.nic_cluster_policy(stack)
    assert_valid(policy)
    assert policy["spec"]["secondaryNetwork"]["ipoib"]["image"] == "ipoib-cni"
    entry = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])["configList"][0]
    assert entry["selectors"]["ifNames"] == ["ibs1"]
    assert "ipoib" not in network.nic_cluster_policy(stack_file("dev"))["spec"]["secondaryNetwork"]


def test_ipoib_rails_get_the_ipoib_cni_and_the_shared_plugin_on_their_parents() -> None:
    pool = {**IB_POOL, "networks": [], "rails": {"count": 4, "interfaces": "ibp{i}s0", "range": "10.10.0.0/16"}}
    policy = network.nic_cluster_policy(stack_file("dev", network={}, nodePools=[pool], jobs=[]))
    assert_valid(policy)
    assert "ipoib" in policy["spec"]["secondaryNetwork"]
    entry = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])["configList"][0]
    assert entry["selectors"]["ifNames"] == ["ibp0s0", "ibp1s0", "ibp2s0", "ibp3s0"]


def test_host_device_rails_expose_their_interfaces() -> None:
    pool = {
        "name": "h100",
        "gpusPerNode": 8,
        "maxNodes": 4,
        "fabric": "roce",
        "rails": {"count": 2, "type": "host-device", "interfaces": ["ens1np0", "ens2np0"], "range": "10.0.0.0/16"},
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
    }
    policy = network.nic_cluster_policy(stack_file("dev", nodePools=[pool], jobs=[]))
    entry = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])["configList"][0]
    assert entry["selectors"]["ifNames"] == ["ens1np0", "ens2np0"]


def test_host_mofed_means_no_driver_container_and_a_custom_prefix_is_kept() -> None:
    policy = network.nic_cluster_policy(everything_existing())
    assert_valid(policy)
    assert "ofedDriver" not in policy["spec"]
    entry = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])["configList"][0]
    assert (entry["resourceName"], entry["selectors"]["ifNames"]) == ("hca", ["ibp12s0"])


def test_nfd_runs_from_the_gpu_operator_only() -> None:
    assert network.network_operator(stack_file("dev")).values["nfd"] == {"enabled": False}
    alone = stack_file("dev", gpuOperator={"enabled": False})
    assert network.network_operator(alone).values["nfd"] == {"enabled": True}


def test_sriov_operator_and_policies() -> None:
    stack = everything_existing()
    release = network.sriov_operator(stack)
    assert release.values == {"sriovOperatorConfig": {"deploy": True}, "operator": {"resourcePrefix": "openshift.io"}}
    (policy,) = network.sriov_policies(stack)
    assert_valid(policy)
    assert policy["spec"]["linkType"] == "ib" and policy["spec"]["nicSelector"] == {"pfNames": ["ibp12s0"]}
    assert network.sriov_operator(stack_file("dev")) is None


def test_efa_device_plugin_tolerates_the_gpu_taint() -> None:
    release = network.efa_device_plugin(stack_file("prod"))
    assert release.namespace == "kube-system" and release.chart.version == "v0.5.30"
    assert release.values["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
        {
            "key": "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check",
            "operator": "Equal",
            "value": "pending",
            "effect": "NoSchedule",
        },
    ]
    assert network.efa_device_plugin(stack_file("dev")) is None
    assert network.efa_device_plugin(everything_aws()) is not None


def efa_through_dra(**cluster: str) -> object:
    if not cluster:
        return efa_dra()
    p5 = {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1a", "provisioner": "nodegroup"}
    aws = {"provider": "aws", "name": "train-prod", "region": "us-east-1", **cluster}
    return stack_file("prod", nodePools=[p5], network={"efa": {"mode": "dra"}}, cluster=aws)


def test_efa_through_dra_installs_aws_dranet_instead_of_the_device_plugin_and_a_claim_template_per_namespace() -> None:
    stack = efa_through_dra()
    release = network.efa_dra_driver(stack)
    assert (release.name, release.chart.chart, release.chart.version, release.namespace) == (
        "aws-dranet",
        "aws-dranet",
        "1.0.0",
        "kube-system",
    )
    assert release.chart.repository == "https://aws.github.io/eks-charts"
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in release.values[
        "tolerations"
    ]
    assert network.efa_device_plugin(stack) is None
    (template,) = network.efa_claim_templates(stack)
    assert_valid(template)
    assert template["metadata"] == {"name": "p5-efa", "namespace": "training"}
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"] == {
        "deviceClassName": "efa.networking.k8s.aws",
        "allocationMode": "ExactCount",
        "count": 32,
    }
    assert network.efa_dra_driver(stack_file("prod")) is None, "the device plugin stays the default"


def test_efa_through_dra_needs_kubernetes_1_34_and_node_groups() -> None:
    with pytest.raises(ConfigError) as caught:
        efa_through_dra(kubernetesVersion="1.33")
    assert any(i.path == "network.efa.mode" and "1.34 or later" in i.message for i in caught.value.issues)
    with pytest.raises(ConfigError) as caught:
        stack_file(
            "prod",
            nodePools=[{"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 8, "zone": "us-east-1a"}],
            network={"efa": {"mode": "dra"}},
        )
    (issue,) = [i for i in caught.value.issues if i.path == "network.efa.mode"]
    assert "Karpenter" in issue.message and "provisioner: nodegroup" in issue.message
