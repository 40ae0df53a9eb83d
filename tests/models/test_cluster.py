"""Cluster specs: each provider's mistakes give one clear error naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from components.config import parse_stack
from components.errors import ConfigError
from components.resolution import resolve

AWS: dict[str, Any] = {
    "provider": "aws",
    "name": "prod",
    "region": "us-east-1",
    "availabilityZones": ["us-east-1a", "us-east-1b"],
    "vpc": {"cidr": "10.0.0.0/16"},
}
P5 = {"name": "p5", "instanceType": "p5.48xlarge", "maxNodes": 2, "zone": "us-east-1a"}


def issues(cluster: dict[str, Any], pools: list[dict[str, Any]] | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        resolve(parse_stack({"cluster": cluster, "nodePools": pools or []}))
    return [(i.path, i.message) for i in caught.value.issues]


def test_a_zone_outside_the_region() -> None:
    assert issues({**AWS, "availabilityZones": ["us-east-1a", "us-west-2b"]}) == [
        ("cluster.availabilityZones", "zone 'us-west-2b' is not in the region 'us-east-1'")
    ]


def test_a_pool_zone_outside_the_region() -> None:
    found = issues(AWS, [{**P5, "zone": "eu-west-1a"}])
    assert ("nodePools[0].zone", "zone 'eu-west-1a' is not in the cluster's region 'us-east-1'") in found


def test_a_pool_zone_without_a_subnet() -> None:
    assert issues(AWS, [{**P5, "zone": "us-east-1c"}]) == [
        ("nodePools[0].zone", "the cluster has no subnet in us-east-1c (its zones: us-east-1a, us-east-1b)")
    ]


def test_a_new_vpc_needs_two_zones() -> None:
    assert issues({**AWS, "availabilityZones": ["us-east-1a"]})[0][0] == "cluster.availabilityZones"


def test_vpc_and_existing_subnets_are_exclusive() -> None:
    path, message = issues({**AWS, "vpcId": "vpc-1", "subnetIds": ["subnet-1"]})[0]
    assert path == "cluster.vpc" and "not both" in message


def test_with_no_network_named_the_cluster_gets_a_new_vpc_in_zones_chosen_at_deploy_time() -> None:
    minimal = {"provider": "aws", "name": "prod", "region": "us-east-1"}
    stack = resolve(parse_stack({"cluster": minimal, "nodePools": [P5]}))
    cluster = stack.config.cluster
    assert cluster.new_vpc is not None and cluster.new_vpc.cidr == "10.0.0.0/16"
    assert cluster.zones() is None, "the region's zones are looked up at deploy time"
    assert stack.pools["p5"].zone == "us-east-1a"


def test_an_existing_vpc_or_an_adopted_cluster_makes_no_vpc() -> None:
    existing = parse_stack({"cluster": {**AWS, "vpc": None, "vpcId": "vpc-1", "subnetIds": ["subnet-1"]}})
    adopted = parse_stack(
        {"cluster": {"provider": "aws", "name": "p", "region": "us-east-1", "adopt": True, "subnetIds": ["subnet-1"]}}
    )
    assert existing.cluster.new_vpc is None and adopted.cluster.new_vpc is None


@pytest.mark.parametrize(("given", "missing"), [({"vpcId": "vpc-1"}, "subnetIds"), ({"subnetIds": ["s-1"]}, "vpcId")])
def test_an_existing_vpc_needs_its_id_and_subnets(given: dict[str, Any], missing: str) -> None:
    path, message = issues({"provider": "aws", "name": "prod", "region": "us-east-1", **given})[0]
    assert path == f"cluster.{missing}" and "set both" in message


def test_adopting_needs_the_subnets_for_node_groups() -> None:
    found = issues({"provider": "aws", "name": "prod", "region": "us-east-1", "adopt": True})
    assert found[0][0] == "cluster.subnetIds"


def test_existing_subnets_by_zone_are_checked_offline() -> None:
    cluster = {
        "provider": "aws",
        "name": "prod",
        "region": "us-east-1",
        "vpcId": "vpc-1",
        "subnetIds": {"us-east-1a": "subnet-a"},
    }
    assert resolve(parse_stack({"cluster": cluster, "nodePools": [P5]})).pools["p5"].zone == "us-east-1a"
    assert issues(cluster, [{**P5, "zone": "us-east-1b"}])[0][0] == "nodePools[0].zone"


@pytest.mark.parametrize("capacity", ["reservation", "capacity-block"])
def test_a_reservation_or_capacity_block_needs_its_id(capacity: str) -> None:
    assert issues(AWS, [{**P5, "capacity": {"type": capacity}}]) == [
        (
            "nodePools[0].capacity.reservationId",
            f"capacity type '{capacity}' needs `reservationId` (the reservation to consume)",
        )
    ]


def test_an_end_time_belongs_to_a_capacity_block_and_names_its_time_zone() -> None:
    spot = {"type": "spot", "endTime": "2026-12-01T11:30:00Z"}
    assert issues(AWS, [{**P5, "capacity": spot}]) == [
        ("nodePools[0].capacity.endTime", "`endTime` is the end of a capacity-block, not of 'spot' capacity")
    ]
    naive = {"type": "capacity-block", "reservationId": "cr-0123456789abcdef0", "endTime": "2026-12-01T11:30:00"}
    ((path, message),) = issues(AWS, [{**P5, "capacity": naive}])
    assert path == "nodePools[0].capacity.endTime" and "timezone" in message


def test_a_capacity_block_is_aws_only_and_flex_start_gcp_only() -> None:
    gcp = {"provider": "gcp", "name": "g", "project": "my-project", "region": "us-central1"}
    a3 = {
        "name": "a3",
        "machineType": "a3-highgpu-8g",
        "maxNodes": 2,
        "zone": "us-central1-a",
        "capacity": {"type": "capacity-block", "reservationId": "r"},
    }
    assert issues(gcp, [a3])[0][0] == "nodePools[0].capacity.type"
    assert issues(AWS, [{**P5, "capacity": {"type": "flex-start"}}])[0][0] == "nodePools[0].capacity.type"


def test_gke_pools_name_a_machine_type_and_aws_pools_an_instance_type() -> None:
    gcp = {"provider": "gcp", "name": "g", "project": "my-project", "region": "us-central1"}
    assert (
        issues(gcp, [{"name": "x", "instanceType": "p5.48xlarge", "maxNodes": 1}])[0][0] == "nodePools[0].instanceType"
    )
    assert ("nodePools[0].instanceType", "is required on AWS, e.g. p5.48xlarge") in issues(
        AWS, [{"name": "x", "maxNodes": 1}]
    )


def test_efa_on_gke_is_refused() -> None:
    gcp = {"provider": "gcp", "name": "g", "project": "my-project", "region": "us-central1"}
    found = issues(gcp, [{"name": "a3", "machineType": "a3-highgpu-8g", "maxNodes": 1, "fabric": "efa"}])
    assert (
        "nodePools[0].fabric",
        "EFA is an AWS fabric; a3-highgpu-8g uses tcpx (GPUDirect, its default) or tcp",
    ) in found


@pytest.mark.parametrize("name", ["a" * 41, "1-train", "train-", "Train"])
def test_a_gke_cluster_name_follows_gkes_rule_not_only_dns(name: str) -> None:
    # A 41-63 character or digit-first name passed the DNS-1123 check and rendered; GKE refuses it at create.
    gcp = {"provider": "gcp", "name": name, "project": "my-project", "region": "us-central1"}
    ((path, message),) = issues(gcp)
    assert path == "cluster.name" and "not a GKE cluster name" in message, message


def test_a_forty_character_gke_cluster_name_is_taken() -> None:
    gcp = {"provider": "gcp", "name": "a" * 39 + "1", "project": "my-project", "region": "us-central1"}
    assert resolve(parse_stack({"cluster": gcp})).config.cluster.name == "a" * 39 + "1"


@pytest.mark.parametrize("provider", ["aws", "gcp", "existing"])
def test_an_unquoted_version_is_refused_with_the_quoting_fix(provider: str) -> None:
    cluster: dict[str, Any] = {"provider": provider, "name": "train", "kubernetesVersion": 1.30}
    cluster.update(
        {"aws": {"region": "us-east-1"}, "gcp": {"project": "ml-platform", "region": "us-central1"}}.get(provider, {})
    )
    with pytest.raises(ConfigError) as caught:
        parse_stack({"cluster": cluster})
    (issue,) = [i for i in caught.value.issues if i.path == "cluster.kubernetesVersion"]
    assert "1.3 is a number to YAML" in issue.message and "'1.35'" in issue.message
