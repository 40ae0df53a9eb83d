"""Tests for the GPUDirect objects a GKE stack applies: its networks, the NCCL plugin installers, the device injector."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest

from components.addons.gpudirect import objects
from components.errors import ConfigError
from components.render import render
from components.stack import Stack
from components.wellknown import POOL_LABEL
from tests.addons.stacks import stack_file
from tests.support.schemas import assert_valid
from tests.support.workers import worker_pod


def gke(*machines: str, **pool: Any) -> Stack:
    pools = [
        {"name": f"pool{i}", "machineType": m, "maxNodes": 2, "zone": "us-central1-a", **pool}
        for i, m in enumerate(machines)
    ]
    return stack_file("gke", nodePools=pools, jobs=[])


def by_kind(found: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in found if o["kind"] == kind}


def test_tcpxo_gets_a_netdevice_network_per_gpu_nic_in_its_own_vpc() -> None:
    found = objects(gke("a3-megagpu-8g"))
    params = by_kind(found, "GKENetworkParamSet")
    assert list(params) == [f"vpc{i}" for i in range(1, 9)]
    assert params["vpc3"]["spec"] == {"vpc": "train-gke-vpc3", "vpcSubnet": "train-gke-vpc3", "deviceMode": "NetDevice"}
    networks = by_kind(found, "Network")
    assert networks["vpc3"]["spec"] == {
        "type": "Device",
        "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": "vpc3"},
    }


def test_rdma_gets_the_gvnic_and_eight_rdma_subnets_of_one_vpc() -> None:
    # The VPCs this stack makes when GKE's accelerator network profile does not (the default from 1.35).
    params = by_kind(objects(gke("a4-highgpu-8g", acceleratorNetworkProfile="none")), "GKENetworkParamSet")
    assert list(params) == ["gvnic-1", *(f"rdma-{i}" for i in range(8))]
    assert params["gvnic-1"]["spec"]["deviceMode"] == "NetDevice"
    assert params["rdma-5"]["spec"] == {"vpc": "train-gke-rdma", "vpcSubnet": "train-gke-rdma-5", "deviceMode": "RDMA"}


def test_pools_of_a3_high_and_mega_share_the_first_four_networks() -> None:
    found = objects(gke("a3-highgpu-8g", "a3-megagpu-8g"))
    assert len(by_kind(found, "Network")) == 8
    installers = by_kind(found, "DaemonSet")
    assert set(installers) == {"nccl-tcpx-installer", "nccl-tcpxo-installer", "device-injector"}
    terms = installers["device-injector"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    expression = terms["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert expression == [{"key": POOL_LABEL, "operator": "In", "values": ["pool0", "pool1"]}]


@pytest.mark.parametrize(
    ("machine", "installer", "image"),
    [
        ("a3-highgpu-8g", "nccl-tcpx-installer", "gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9"),
        ("a3-megagpu-8g", "nccl-tcpxo-installer", "gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"),
        ("a3-ultragpu-8g", "nccl-rdma-installer", "gpudirect-gib/nccl-plugin-gib:v1.1.1"),
    ],
)
def test_each_fabric_installs_its_pinned_nccl_plugin_on_its_pools(machine: str, installer: str, image: str) -> None:
    daemonset = by_kind(objects(gke(machine)), "DaemonSet")[installer]
    pod = daemonset["spec"]["template"]["spec"]
    (install,) = [c for c in pod["initContainers"] if c["name"] == installer]
    assert install["image"].endswith(image)
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert "hostNetwork" not in pod
    assert_valid(daemonset)


def test_tcpxo_prepares_the_aperture_devices_from_the_hosts_namespaces() -> None:
    pod = by_kind(objects(gke("a3-megagpu-8g")), "DaemonSet")["nccl-tcpxo-installer"]["spec"]["template"]["spec"]
    prepare = pod["initContainers"][0]
    assert prepare["command"][:4] == ["nsenter", "-at", "1", "--"]
    assert "/dev/aperture_devices" in prepare["command"][-1]
    assert pod["hostPID"] is True


def test_tcpxo_preparation_survives_a_node_without_aperture_devices(tmp_path: Any) -> None:
    script = by_kind(objects(gke("a3-megagpu-8g")), "DaemonSet")["nccl-tcpxo-installer"]["spec"]["template"]["spec"][
        "initContainers"
    ][0]["command"][-1]
    # The device-permission part alone, on an empty directory: an unguarded glob fails under set -e.
    tail = script[script.index("chmod -R a+r /dev/aperture_devices/") :]
    tail = re.sub("/dev/aperture_devices", str(tmp_path), tail)
    result = subprocess.run(["bash", "-ec", tail], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_rdma_needs_no_device_injector() -> None:
    assert "device-injector" not in by_kind(objects(gke("a4-highgpu-8g")), "DaemonSet")


def test_a_tcp_opt_out_makes_nothing() -> None:
    assert objects(gke("a3-megagpu-8g", fabric="tcp")) == []


def test_every_gpudirect_object_validates() -> None:
    assert_valid(*objects(gke("a3-highgpu-8g", "a3-megagpu-8g", "a4-highgpu-8g")))


def test_render_of_an_a3_mega_stack_shows_the_full_fabric() -> None:
    rendered = render(
        stack_file(
            "gke",
            nodePools=[{"name": "a3", "machineType": "a3-megagpu-8g", "maxNodes": 4, "zone": "us-central1-a"}],
        )
    )
    assert "pool a3 (a3-megagpu-8g, 8x NVIDIA H100 80GB Mega GPU, tcpxo, 8 GPU NICs, 1600 of 1600 Gbps" in (
        rendered.summary()
    )
    kinds = [o["kind"] for o in rendered.objects]
    assert kinds.count("Network") == kinds.count("GKENetworkParamSet") == 8
    worker = worker_pod(rendered.objects)
    assert [c["name"] for c in worker.spec["initContainers"]] == ["tcpxo-daemon"]
    assert "networking.gke.io/interfaces" in worker.metadata["annotations"]


def managed_rdma(version: str = "1.35", **pool: Any) -> Stack:
    cluster = {"provider": "gcp", "name": "train-gke", "project": "my-project", "region": "us-central1"}
    return stack_file(
        "gke",
        cluster={**cluster, "kubernetesVersion": version},
        nodePools=[{"name": "a4", "machineType": "a4-highgpu-8g", "maxNodes": 4, "zone": "us-central1-b", **pool}],
    )


def test_rdma_pools_use_gkes_accelerator_network_profile_where_every_version_has_it() -> None:
    rendered = render(managed_rdma())
    assert "8 GPU NICs (GKE-managed, DRA), 3200 of 3200 Gbps" in rendered.summary()
    kinds = [o["kind"] for o in rendered.objects]
    assert "Network" not in kinds and "GKENetworkParamSet" not in kinds
    (claim,) = [o for o in rendered.objects if o["kind"] == "ResourceClaimTemplate"]
    assert claim["metadata"] == {"name": "a4-rdma-nics", "namespace": "training"}
    (request,) = claim["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"] == {"deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 8}
    worker = worker_pod(rendered.objects)
    assert worker.spec["resourceClaims"] == [{"name": "rdma-nics", "resourceClaimTemplateName": "a4-rdma-nics"}]
    assert worker.spec["containers"][0]["resources"]["claims"] == [{"name": "rdma-nics"}]
    assert "networking.gke.io/interfaces" not in worker.metadata.get("annotations", {})
    # the gIB plugin is still installed on the nodes
    assert any(o["metadata"]["name"] == "nccl-rdma-installer" for o in rendered.objects)
    assert_valid(*rendered.objects)


def test_older_clusters_keep_the_rdma_vpc_this_stack_makes() -> None:
    kinds = [o["kind"] for o in render(managed_rdma("1.33")).objects]
    assert kinds.count("Network") == 9 and "ResourceClaimTemplate" not in kinds


def test_on_1_34_the_profile_is_a_choice() -> None:
    assert managed_rdma("1.34").pools["a4"].dranet is False
    assert managed_rdma("1.34", acceleratorNetworkProfile="auto").pools["a4"].dranet is True
    assert managed_rdma("1.35", acceleratorNetworkProfile="none").pools["a4"].dranet is False


@pytest.mark.parametrize(
    ("version", "pool", "path", "message"),
    [
        ("1.33", {"acceleratorNetworkProfile": "auto"}, "nodePools[0].acceleratorNetworkProfile", "1.34.1-gke.1829001"),
        (
            "1.35",
            {"machineType": "a3-megagpu-8g", "acceleratorNetworkProfile": "auto"},
            "nodePools[0].acceleratorNetworkProfile",
            "applies to GKE rdma pools",
        ),
        ("1.28", {"machineType": "a3-megagpu-8g"}, "cluster.kubernetesVersion", "native sidecar"),
    ],
)
def test_what_a_cluster_version_cannot_do_names_the_key(
    version: str, pool: dict[str, Any], path: str, message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        managed_rdma(version, **pool)
    assert any(i.path == path and message in i.message for i in error.value.issues), error.value.issues


def test_arm64_rdma_pools_get_the_arm64_gib_installer_and_x86_pools_keep_theirs() -> None:
    found = by_kind(objects(gke("a4-highgpu-8g", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal")), "DaemonSet")
    assert set(found) == {"nccl-rdma-installer", "nccl-rdma-installer-arm64"}
    arm = found["nccl-rdma-installer-arm64"]["spec"]["template"]["spec"]
    (install,) = arm["initContainers"]
    assert install["image"].endswith("gpudirect-gib/nccl-plugin-gib-arm64:v1.1.2")
    terms = arm["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["pool1", "pool2"], "the Grace pools only"
    x86 = found["nccl-rdma-installer"]["spec"]["template"]["spec"]
    assert x86["initContainers"][0]["image"].endswith("gpudirect-gib/nccl-plugin-gib:v1.1.1")
    assert_valid(*found.values())


def test_a4x_max_makes_no_network_objects_for_pods_to_attach() -> None:
    found = objects(gke("a4x-maxgpu-4g-metal"))
    assert not by_kind(found, "GKENetworkParamSet") and not by_kind(found, "Network"), "no multi-networking"
