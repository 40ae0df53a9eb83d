"""Each pool's node check: the NVLink floor from the catalog, the fabric NICs from the pool, and when it is off."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import nodecheck
from components.errors import ConfigError
from components.fabriccheck import IMAGES
from components.models.nodepool import NodeCheckSpec
from components.wellknown import NODE_CHECK_KEY
from tests.addons.stacks import raw_config, stack_file
from tests.support.factories import pool


def resolved(p, **spec):
    check, issues = nodecheck.resolve(NodeCheckSpec.model_validate(spec), p, path="nodePools[0]")
    assert not issues, issues
    assert check is not None
    return check


def test_an_h100_node_must_all_reduce_at_60_percent_of_one_way_nvlink() -> None:
    check = resolved(pool("efa"))
    assert check.floor_gbs == 270
    assert check.floor_source == "60% of NVIDIA H100 80GB's 450 GB/s NVLink"
    assert check.dcgm_level == 2 and check.dcgm_image == nodecheck.DCGM_IMAGE
    assert check.image == IMAGES["efa"].image and check.tests == IMAGES["efa"].tests


def test_a_stated_floor_and_level_win() -> None:
    check = resolved(pool("efa"), minBusBandwidth=400, dcgmLevel=3)
    assert (check.floor_gbs, check.floor_source, check.dcgm_level) == (400, "nodeCheck.minBusBandwidth", 3)


def test_gpus_without_nvlink_are_measured_not_judged() -> None:
    check = resolved(pool("efa", name="g5", instanceType="g5.48xlarge"))
    assert check.floor_gbs == 0 and "no NVLink" in check.floor_source
    assert "measured, not judged" in check.summary()


def test_an_efa_node_must_show_every_efa_device() -> None:
    nics = resolved(pool("efa")).nics
    assert (nics.rdma_count, nics.rdma_names, nics.netdevs) == (32, (), ())
    assert nics.describe() == "32 EFA devices ACTIVE"


def test_a_roce_pool_with_named_rails_checks_each_rail_at_its_speed() -> None:
    rails = {
        "count": 8,
        "interfaces": "ens{n}f0np0",
        "devices": "mlx5_{i}",
        "range": "192.168.0.0/16",
        "speedGbps": 400,
    }
    check = resolved(pool("roce", networks=[], rails=rails))
    assert check.nics.rdma_names == tuple(f"mlx5_{i}" for i in range(8))
    assert check.nics.min_gbps == 400
    assert check.nics.describe() == "mlx5_0..mlx5_7 ACTIVE at >= 400 Gbps"


def test_gke_tcpx_checks_its_gpu_nics_up_and_rdma_counts_its_devices() -> None:
    tcpx = resolved(pool("tcpx")).nics
    assert tcpx.netdevs == ("eth1", "eth2", "eth3", "eth4") and tcpx.min_gbps == 200
    rdma = resolved(pool("rdma")).nics
    assert rdma.rdma_count == 8 and rdma.min_gbps == 400


def test_a_tcp_pool_checks_no_fabric_nic() -> None:
    assert resolved(pool("tcp")).nics.describe() == "none (tcp)"


def test_off_means_no_check_and_no_startup_taint() -> None:
    p = pool("efa", nodeCheck={"enabled": False})
    check, issues = nodecheck.resolve(NodeCheckSpec(enabled=False), p, path="nodePools[0]")
    assert check is None and not issues
    assert p.startup_taints == [] and NODE_CHECK_KEY not in p.labels


def test_a_checked_pool_comes_up_tainted_and_labelled_and_its_jobs_do_not_tolerate_it() -> None:
    p = pool("efa")
    assert p.startup_taints == [nodecheck.STARTUP_TAINT]
    assert p.labels[NODE_CHECK_KEY] == "required"
    assert nodecheck.STARTUP_TAINT not in p.taints, "jobs tolerate pool.taints, never the startup taint"


def test_existing_clusters_register_the_label_themselves() -> None:
    p = pool("roce")
    assert p.startup_taints and NODE_CHECK_KEY not in p.labels


def test_a_floor_on_one_gpu_nodes_is_refused_naming_the_key() -> None:
    p = pool("efa", name="p5s", instanceType="p5.4xlarge")
    check, issues = nodecheck.resolve(NodeCheckSpec(min_bus_bandwidth=100), p, path="nodePools[2]")
    assert check is None
    assert [i.path for i in issues] == ["nodePools[2].nodeCheck.minBusBandwidth"]
    assert not resolved(p).nvlink_test and "no all_reduce (one GPU)" in resolved(p).summary()


@given(level=st.sampled_from([1, 2, 3, 4]), floor=st.floats(1, 5000))
def test_the_fingerprint_follows_what_the_verdict_depends_on(level: int, floor: float) -> None:
    base = resolved(pool("efa"))
    other = resolved(pool("efa"), dcgmLevel=level, minBusBandwidth=floor)
    assert (other.fingerprint() == base.fingerprint()) == (level == 2 and floor == 270)


def test_an_arm64_rdma_node_is_checked_with_the_arm64_nccl_tests_image() -> None:
    # An x86-only image on a Grace node never starts, and the node would keep its startup taint for good.
    check = resolved(pool("rdma", machineType="a4x-highgpu-4g", maxNodes=18))
    assert check.image.endswith("gpudirect-gib/nccl-plugin-gib-diagnostic-arm64:v1.1.2")
    assert check.tests == IMAGES["rdma"].tests
    assert resolved(pool("rdma")).image == IMAGES["rdma"].image, "x86 machines keep theirs"


def test_gkes_autoscaler_cannot_be_told_so_a_long_dcgm_level_on_its_pools_is_refused() -> None:
    """GKE's autoscaler counts a node under the startup taint as starting for 15 minutes, and has no setting."""
    (a3,) = raw_config("gke")["nodePools"]
    with pytest.raises(ConfigError) as refused:
        stack_file("gke", nodePools=[{**a3, "nodeCheck": {"dcgmLevel": 3}}])
    (issue,) = [i for i in refused.value.issues if i.path.endswith("dcgmLevel")]
    assert issue.path == "nodePools[0].nodeCheck.dcgmLevel" and "GKE's autoscaler" in issue.message
    fixed = {**a3, "minNodes": a3["maxNodes"], "nodeCheck": {"dcgmLevel": 4}}
    assert stack_file("gke", nodePools=[fixed]) is not None, "a pool no autoscaler grows may check for long"


@pytest.mark.parametrize(
    ("stack", "changes", "engine"),
    [
        ("prod", {}, "gpu-operator"),
        ("dev", {}, "gpu-operator"),
        ("gke", {}, "gke"),
        ("gke", {"monitoring": {"managedDcgm": False}}, "private"),
        ("prod", {"gpuOperator": {"enabled": False}}, "private"),
    ],
)
def test_the_check_uses_the_dcgm_engine_the_node_runs_and_starts_one_only_where_none_does(
    stack: str, changes: dict, engine: str
) -> None:
    built = stack_file(stack, **changes)
    assert {c.dcgm_engine for c in built.node_checks.values()} == {engine}


# The Cluster Autoscaler strips a taint under these from its templates and its view of a node
# (kubernetes/autoscaler cluster-autoscaler/utils/taints/taints.go: ignore-, startup- and status-taint prefixes).
AUTOSCALER_PREFIXES = (
    "ignore-taint.cluster-autoscaler.kubernetes.io/",
    "startup-taint.cluster-autoscaler.kubernetes.io/",
    "status-taint.cluster-autoscaler.kubernetes.io/",
)


def test_the_startup_taint_is_one_every_autoscaler_knows_and_the_failed_taint_one_none_ignores() -> None:
    """A startup taint an autoscaler does not know keeps it from scaling the pool up (it stays in the template, and
    no training pod tolerates it); a failed taint one that an autoscaler ignores, or that shares the startup taint's
    key, leaves the failed node looking like room for the pending pods, and nothing replaces it."""
    assert nodecheck.STARTUP_TAINT.key.startswith("startup-taint.cluster-autoscaler.kubernetes.io/")
    failed = nodecheck.FAILED_TAINT
    assert not failed.key.startswith(AUTOSCALER_PREFIXES)
    assert failed.key != nodecheck.STARTUP_TAINT.key and failed.effect == "NoSchedule"
    for provider in ("efa", "tcpx", "roce"):
        p = pool(provider)
        assert failed not in p.startup_taints and [t.key for t in p.startup_taints] == [nodecheck.STARTUP_TAINT.key]
