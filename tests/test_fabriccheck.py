"""Which pools get a fabric check, on how many nodes, against which floor, with which image."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from components import catalog, fabriccheck
from components.errors import ConfigError
from components.fabriccheck import IMAGES, NETWORKS
from components.manifests import fabriccheck as fabriccheck_manifests
from components.models import NetworkConfig, NodePoolSpec
from components.models.nodepool import FabricCheckSpec
from components.pools import resolve_pools
from tests.addons.stacks import stack_file
from tests.support.factories import checked, gb200, pool
from tests.support.schemas import assert_valid

P5_POOL = {"name": "p5", "instanceType": "p5.48xlarge", "minNodes": 2, "maxNodes": 8, "zone": "us-east-1a"}


def resolve(fabric: str, spec: dict[str, Any] | None = None, **pool_fields: Any):
    return fabriccheck.resolve(
        FabricCheckSpec.model_validate(spec or {}), pool(fabric, **pool_fields), "none", None, path="nodePools[0]"
    )


@pytest.mark.parametrize("fabric", fabriccheck.FAST_FABRICS)
def test_a_fast_fabric_pool_that_keeps_two_nodes_is_checked_by_default(fabric: str) -> None:
    found, _, issues = resolve(fabric, minNodes=2)
    assert found is not None and not issues
    assert found.nodes == 2 and found.test == "all_reduce_perf"
    assert found.plan.world_size == 2 * found.pool.gpus_per_node, "every GPU of each node"
    assert found.networks == NETWORKS[fabric]
    # RoCE leaves NCCL_IB_GID_INDEX to NCCL, which only 2.21 and later choose right: the verdict holds the log to it.
    assert found.min_nccl == ("2.21" if fabric == "roce" else None)
    assert ("NCCL >= 2.21" in found.summary()) == (fabric == "roce")


def test_a_pool_that_scales_from_zero_is_checked_on_scale_up_with_the_same_test_and_floor() -> None:
    found, reason, issues = resolve("efa")
    assert found is not None and not issues and not reason
    assert found.when == "scale-up" and found.nodes == 2
    deploy, _, _ = resolve("efa", minNodes=2)
    assert deploy is not None and deploy.when == "deploy"
    assert (found.test, found.floor_gbs, found.plan.world_size) == (deploy.test, deploy.floor_gbs, 16)
    assert found.summary().startswith("on scale-up, once the pool first has 2 checked nodes")
    assert "ConfigMap training/fabric-check-p5-result" in found.summary()


def test_a_tcp_pool_is_checked_only_when_asked() -> None:
    found, reason, _ = resolve("tcp", minNodes=2)
    assert found is None and "tcp is not a fast fabric" in reason
    found, _, issues = resolve("tcp", {"enabled": True}, minNodes=2)
    assert found is not None and not issues
    assert found.networks == (), "sockets are a tcp pool's fabric"
    assert found.floor_gbs == 0, "no floor without a stated one"


def test_settings_on_a_gate_that_cannot_run_are_an_error_naming_the_fix() -> None:
    _, _, issues = resolve("tcp", {"minBusBandwidth": 123}, minNodes=2)
    assert [i.path for i in issues] == ["nodePools[0].fabricCheck"]
    assert "minBusBandwidth set, but the gate is off: tcp is not a fast fabric" in issues[0].message


def test_a_check_on_more_nodes_than_the_pool_can_have_is_an_error() -> None:
    _, _, issues = resolve("efa", {"enabled": True, "nodes": 5}, minNodes=2, maxNodes=4)
    assert [i.path for i in issues] == ["nodePools[0].fabricCheck.nodes"]
    assert "raise maxNodes, lower fabricCheck.nodes, or set fabricCheck.enabled: false" in issues[0].message
    found, _, issues = resolve("efa", {"enabled": True, "nodes": 3}, minNodes=2, maxNodes=4)
    assert found is not None and found.when == "scale-up" and not issues


def test_disabled_is_disabled() -> None:
    found, reason, issues = resolve("efa", {"enabled": False, "minBusBandwidth": 5}, minNodes=2)
    assert found is None and not issues and reason == "fabricCheck.enabled is false"


@pytest.mark.parametrize(
    ("fabric", "floor", "source"),
    [
        ("efa", 270, "NVIDIA AICR, H100 on EKS"),
        ("tcpxo", 225, "NVIDIA AICR, H100 Mega on GKE"),
        ("tcpx", 60, "Google cluster-health-scanner, A3 High"),
        ("rdma", 250, "Google cluster-health-scanner, A4"),
    ],
)
def test_the_floor_comes_from_the_catalog_with_its_source(fabric: str, floor: float, source: str) -> None:
    found = checked(fabric)
    assert found.floor_gbs == floor
    assert found.floor_source.startswith(source)


def test_without_a_published_figure_the_floor_is_half_the_nominal_bandwidth() -> None:
    found, _, _ = resolve("efa", instanceType="p4d.24xlarge", minNodes=2)
    assert found is not None
    assert found.floor_gbs == 25, "4 x 100 Gbps EFA = 50 GB/s, half of it"
    assert "half the fabric's nominal 400 Gbps" in found.floor_source
    rails = {"count": 8, "devices": "mlx5_{i}", "speedGbps": 400}
    found, _, _ = resolve("roce", rails=rails, minNodes=2)
    assert found is not None and found.floor_gbs == 200, "8 x 400 Gbps rails"


def test_a_stated_floor_wins_and_alltoall_does_not_borrow_all_reduce_figures() -> None:
    assert checked("efa", minBusBandwidth=123).floor_gbs == 123
    assert checked("efa", minBusBandwidth=123).floor_source == "fabricCheck.minBusBandwidth"
    alltoall = checked("efa", test="alltoall_perf")
    assert alltoall.floor_gbs == 200 and "half the fabric's nominal" in alltoall.floor_source


def test_the_largest_size_fits_the_gpu() -> None:
    assert checked("efa").sizes.max == "8G"
    found, _, _ = resolve("efa", {"enabled": True}, instanceType="g5.48xlarge", minNodes=2)
    assert found is not None and found.sizes.max == "1G", "A10G has 24 GiB: two 8G buffers do not fit"
    assert checked("efa", sizes={"min": "64M", "max": "16G"}).sizes.max == "16G"


def test_each_fabric_has_a_pinned_image_and_an_override_keeps_its_layout() -> None:
    for fabric, image in IMAGES.items():
        assert ":" in image.image.rsplit("/", 1)[-1] and not image.image.endswith(":latest"), fabric
        assert image.tests.startswith("/"), fabric
    own = checked("efa", image="registry.example.com/nccl-tests:2.17")
    assert own.plan.spec.image == "registry.example.com/nccl-tests:2.17"
    assert own.image.tests == IMAGES["efa"].tests


def test_an_arm64_rdma_pool_is_gated_with_the_arm64_image_of_the_same_layout() -> None:
    found, _, issues = resolve("rdma", {"enabled": True}, machineType="a4x-highgpu-4g", maxNodes=18, minNodes=2)
    assert not issues and found is not None
    assert found.image.image.endswith("nccl-plugin-gib-diagnostic-arm64:v1.1.2")
    assert (found.image.tests, found.image.setup) == (IMAGES["rdma"].tests, IMAGES["rdma"].setup)
    assert fabriccheck.nccl_tests_image(pool("rdma")) == IMAGES["rdma"]


def test_the_fingerprint_follows_the_pool_and_the_config_only() -> None:
    base = checked("efa")
    assert base.fingerprint() == checked("efa").fingerprint()
    assert base.fingerprint() != checked("efa", minBusBandwidth=100).fingerprint()
    bigger, _, _ = resolve("efa", minNodes=2, maxNodes=6)
    assert bigger is not None and bigger.fingerprint() != base.fingerprint()


def test_what_is_no_input_of_the_verdict_leaves_the_fingerprint_and_so_every_gate_as_it_was() -> None:
    """A new fingerprint runs every stack's gate again on its next `pulumi up`: where images come from and what a
    node advertises to the scheduler must not change it."""
    base = checked("efa")
    sources = {"registry_mirror": {"*": "mirror.example.com"}, "kubectl_image": "k:1", "allocatable_cpu": "100"}
    pool = base.pool.model_copy(update={**sources, "allocatable_memory": "1Ti"})
    moved = dataclasses.replace(base, plan=dataclasses.replace(base.plan, pool=pool))
    assert moved.fingerprint() == base.fingerprint()


def test_a_long_pool_name_would_make_pod_names_too_long() -> None:
    name = "p" * 50
    _, _, issues = resolve("efa", {"enabled": True}, minNodes=2, name=name)
    assert [i.path for i in issues] == ["nodePools[0].name"]


def test_a_stack_with_a_p5_pool_keeping_two_nodes_is_gated_at_its_floor() -> None:
    stack = stack_file("prod", nodePools=[{**P5_POOL, "fabricCheck": {"minBusBandwidth": 123}}])
    check = stack.checks["p5"]
    assert check.floor_gbs == 123
    assert check.plan.queue == "pretraining", "the stack's first queue"
    assert check.namespace in stack.namespaces


def test_a_kueue_queue_that_does_not_reach_the_gates_namespace_is_an_error() -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file(
            "prod",
            nodePools=[P5_POOL],
            scheduler={"type": "kueue", "queues": [{"name": "research", "gpus": 16, "namespaces": ["research"]}]},
            jobs=[],
        )
    assert any(i.path == "nodePools[0].fabricCheck" and "no LocalQueue" in i.message for i in caught.value.issues)


def test_every_catalog_floor_names_its_source_and_applies_to_a_machine_with_a_fabric() -> None:
    floors = [m for p in ("aws", "gcp") for n in catalog.names(p) if (m := catalog.lookup(p, n)) and m.busbw_floor_gbs]
    assert {m.name for m in floors} == {
        "p5.48xlarge",
        "a3-highgpu-8g",
        "a3-megagpu-8g",
        "a3-ultragpu-8g",
        "a4-highgpu-8g",
    }
    for machine in floors:
        assert machine.busbw_floor_source and machine.fabric != "tcp"
        assert machine.busbw_floor_gbs < machine.fabric_gbps / 8 * 2, "a floor no pair of nodes could fail to reach"


@given(nodes=st.integers(min_value=2, max_value=8), min_nodes=st.integers(min_value=0, max_value=8))
def test_a_gate_runs_at_deploy_only_on_nodes_the_pool_keeps(nodes: int, min_nodes: int) -> None:
    found, _, issues = resolve("efa", {"nodes": nodes}, minNodes=min_nodes, maxNodes=8)
    assert found is not None and found.nodes == nodes and not issues
    assert found.when == ("deploy" if min_nodes >= nodes else "scale-up")


def test_an_existing_clusters_pool_of_a_catalogued_machine_gets_its_floor() -> None:
    spec = {"name": "p5", "instanceType": "p5.48xlarge", "minNodes": 2, "maxNodes": 4, "nodeSelector": {"a": "b"}}
    pools, _ = resolve_pools([NodePoolSpec.model_validate(spec)], "existing", None, NetworkConfig())
    existing = pools["p5"]
    assert existing.fabric == "efa", "the machine's own fabric"
    found, _, _ = fabriccheck.resolve(FabricCheckSpec(), existing, "none", None, path="nodePools[0]")
    assert found is not None and found.pool.provider == "existing"
    assert found.floor_gbs == 270, "the same floor as an EKS pool of the machine"


@pytest.mark.parametrize(
    ("check", "path", "message"),
    [
        ({"sizes": {"max": "8GB"}}, "nodePools[0].fabricCheck.sizes.max", "'8GB' is not an nccl-tests size"),
        (
            {"sizes": {"min": "16G", "max": "1G"}},
            "nodePools[0].fabricCheck.sizes.min",
            "min (16G) is larger than max (1G)",
        ),
        ({"nodes": 1}, "nodePools[0].fabricCheck.nodes", "greater than or equal to 2"),
        ({"test": "broadcast_perf"}, "nodePools[0].fabricCheck.test", "all_reduce_perf"),
    ],
)
def test_a_bad_fabric_check_names_its_path_and_the_fix(check: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file("prod", nodePools=[{**P5_POOL, "fabricCheck": check}])
    found = {i.path: i.message for i in caught.value.issues}
    assert path in found, found
    assert message in found[path]


def _rack_check(**spec: Any) -> fabriccheck.FabricCheck:
    found, reason, issues = fabriccheck.resolve(
        FabricCheckSpec.model_validate(spec), gb200(minNodes=2), "none", None, path="nodePools[0]"
    )
    assert found is not None and not issues, (reason, issues)
    return found


def test_a_rack_scale_pool_proves_nvls_across_one_nvlink_domain_by_default() -> None:
    check = _rack_check()
    assert check.nvls and check.plan.compute_domain == check.name and check.plan.one_domain
    assert check.floor_gbs == 540, "60% of one direction of GB200's 1.8 TB/s NVLink"
    assert "across the NVLink domain" in check.floor_source
    assert "NVLS across one NVLink domain" in check.summary()
    objects = fabriccheck_manifests.run(check)
    assert [o["kind"] for o in objects] == ["ComputeDomain", "Job"]
    assert objects[0]["spec"]["channel"]["resourceClaimTemplate"]["name"] == f"{check.name}-channel"
    env = {e["name"]: e.get("value") for e in objects[-1]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["NVLS"] == "1" and env["NCCL_MNNVL_ENABLE"] == "1"
    assert_valid(*objects)


def test_a_stated_floor_still_wins_on_a_rack_scale_pool() -> None:
    assert _rack_check(minBusBandwidth=700).floor_gbs == 700


def test_the_scale_up_watcher_may_make_the_checks_compute_domain() -> None:
    found, _, issues = fabriccheck.resolve(
        FabricCheckSpec.model_validate({}), gb200(minNodes=0), "none", None, path="nodePools[0]"
    )
    assert found is not None and found.when == "scale-up" and not issues
    (role,) = [o for o in fabriccheck_manifests.watcher(found) if o["kind"] == "Role"]
    assert {"apiGroups": ["resource.nvidia.com"], "resources": ["computedomains"], "verbs": ["create", "delete"]} in (
        role["rules"]
    )
    template = yaml.safe_load_all(fabriccheck_manifests.template(found)["data"][fabriccheck_manifests.TEMPLATE_KEY])
    assert [d["kind"] for d in template] == ["ComputeDomain", "Job"]


def test_grace_efa_pools_load_the_tuner_of_their_own_architecture() -> None:
    found, _, issues = fabriccheck.resolve(
        FabricCheckSpec.model_validate({}),
        pool(
            "efa",
            name="gb200",
            instanceType="p6e-gb200.36xlarge",
            zone="us-east-1b",
            maxNodes=18,
            capacity={"type": "capacity-block", "reservationId": "cr-0123456789abcdef0"},
            provisioner="nodegroup",
        ),
        "none",
        None,
        path="nodePools[0]",
    )
    assert found is not None and not issues, issues
    assert found.image.image == IMAGES["efa"].image, "one image for both architectures"
    assert dict(found.image.env)["NCCL_TUNER_PLUGIN"].startswith("/opt/amazon/ofi-nccl/lib/aarch64-linux-gnu/")
