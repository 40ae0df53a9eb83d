"""The NVIDIA DRA driver: installed for rack-scale NVLink pools only, ComputeDomains on, GPUs left to the plugin."""

from __future__ import annotations

from components.addons import dra_driver
from components.addons.plan import plan
from components.versions import DRA_DRIVER
from tests.addons.stacks import STACKS, rack_scale_existing, stack_file


def test_only_stacks_with_a_rack_scale_pool_install_it() -> None:
    for name, build in STACKS.items():
        stack = build()
        installed = dra_driver.NAME in {r.name for r in plan(stack, efs_role_arn="arn:aws:iam::1:role/efs").releases}
        assert installed == (name == "rack-scale-existing"), name


def test_compute_domains_on_and_gpu_allocation_left_to_the_device_plugin() -> None:
    release = dra_driver.release(rack_scale_existing())
    assert release is not None and release.chart is DRA_DRIVER and release.namespace == dra_driver.NAMESPACE
    assert release.values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}
    # dev runs the GPU Operator's containerized driver.
    assert release.values["nvidiaDriverRoot"] == "/run/nvidia/driver"


def test_its_kubelet_plugin_runs_on_the_rack_scale_pools_nodes() -> None:
    plugin = dra_driver.release(rack_scale_existing()).values["kubeletPlugin"]  # type: ignore[union-attr]
    terms = plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-GB200"]}]}
    ], "only the GB200 pool, not the H100 one"
    keys = {t["key"] for t in plugin["tolerations"]}
    assert {"nvidia.com/gpu", "startup-taint.cluster-autoscaler.kubernetes.io/gpu-training-node-check"} <= keys


def test_compute_domains_wait_for_the_driver() -> None:
    stack = rack_scale_existing()
    addons = plan(stack)
    assert addons.owner({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain"}) == dra_driver.NAME


def test_it_labels_cliques_only_where_gpu_feature_discovery_does_not() -> None:
    # Two owners of nvidia.com/gpu.clique fight, and the plugin removes the label when it stops.
    with_gfd = dra_driver.release(rack_scale_existing())
    assert with_gfd is not None
    assert with_gfd.values["kubeletPlugin"]["containers"]["computeDomains"]["gpuCliqueLabelEnabled"] is False
    a4x = stack_file(
        "gke",
        nodePools=[{"name": "a4x", "machineType": "a4x-highgpu-4g", "zone": "us-central1-a", "maxNodes": 2}],
        jobs=[],
    )
    assert not a4x.config.runs_gpu_operator
    without = dra_driver.release(a4x)
    assert without is not None
    assert without.values["kubeletPlugin"]["containers"]["computeDomains"]["gpuCliqueLabelEnabled"] is True
