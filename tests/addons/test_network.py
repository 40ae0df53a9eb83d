"""Multus, whereabouts, the Network Operator's NicClusterPolicy, SR-IOV and the EFA device plugin."""

from __future__ import annotations

import json

from components.addons import network
from components.versions import MULTUS_IMAGE, WHEREABOUTS_IMAGE
from tests.addons.stacks import everything_aws, everything_existing, stack_file
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


def test_nic_cluster_policy_exposes_the_configured_rdma_resource() -> None:
    policy = network.nic_cluster_policy(stack_file("dev"))
    assert_valid(policy)
    assert policy["metadata"]["name"] == "nic-cluster-policy"
    config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert config == {
        "configList": [
            {
                "resourceName": "rdma_shared_device_a",
                "rdmaHcaMax": 63,
                "selectors": {"vendors": ["15b3"], "ifNames": ["enp94s0f0"]},
            }
        ]
    }
    assert policy["spec"]["ofedDriver"]["image"] == "doca-driver", "no host MOFED: the operator brings it"
    assert policy["spec"]["secondaryNetwork"]["cniPlugins"]["version"] == "network-operator-v26.4.1"


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
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    assert network.efa_device_plugin(stack_file("dev")) is None
    assert network.efa_device_plugin(everything_aws()) is not None
