"""The cloud's names in a stack: regions, zones, project ids and Kubernetes minors the cloud does not have are
refused with the file, line, key and fix; names newer than the release pass through cluster.allowUnknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components import identifiers
from components.aws import kubernetes_versions as eks
from components.aws import regions as aws_regions
from components.config import parse_stack
from components.errors import ConfigError
from components.gcp import kubernetes_versions as gke
from components.gcp import regions as gcp_regions
from components.resolution import resolve, resolve_file
from tests.support.stacks import EXAMPLE_STACKS

AWS: dict[str, Any] = {"provider": "aws", "name": "t", "region": "us-east-1"}
GCP: dict[str, Any] = {"provider": "gcp", "name": "t", "project": "ml-project", "region": "us-central1"}
REPO = Path(__file__).resolve().parents[1]


def stack(cluster: dict[str, Any], pools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"cluster": cluster, "nodePools": pools or []}


def refused(raw: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        resolve(parse_stack(raw))
    return [(i.path, i.message) for i in caught.value.issues]


def warned(raw: dict[str, Any]) -> list[tuple[str, str]]:
    return [(i.path, i.message) for i in identifiers.warnings(resolve(parse_stack(raw)).config)]


def write(tmp_path: Path, config: dict[str, Any]) -> Path:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": {f"gpu-training:{k}": v for k, v in config.items()}}, sort_keys=False))
    return path


# -- regions and zones ----------------------------------------------------------------------------


def test_a_mistyped_aws_region_is_refused_at_its_line_with_the_closest_names_and_the_escape_hatch(tmp_path) -> None:
    path = write(tmp_path, stack({**AWS, "region": "us-est-1"}))
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"{path}:5: cluster.region: 'us-est-1' is not an AWS region; did you mean 'us-west-1'")
    assert "'us-east-1'" in line and line.endswith("add it to cluster.allowUnknown: [us-est-1]")


def test_a_region_named_in_allow_unknown_renders_with_its_zones_and_a_warning() -> None:
    raw = stack({**AWS, "region": "us-east-7", "availabilityZones": ["us-east-7a", "us-east-7b"]})
    assert refused(raw)[0][0] == "cluster.region"
    raw["cluster"]["allowUnknown"] = ["us-east-7"]
    assert resolve(parse_stack(raw)).config.cluster.region == "us-east-7", "its zones are the new region's"
    assert warned(raw) == [
        (
            "cluster.allowUnknown[0]",
            "us-east-7 is not in this release's lists and is taken on the stack's word: AWS judges it at deploy time",
        )
    ]


@pytest.mark.parametrize(
    ("zones", "path", "words"),
    [
        (["us-east-1a", "us-east-1g"], "cluster.availabilityZones[1]", "whose zones are us-east-1a, us-east-1b"),
        (["us-east-1a", "us-east-1"], "cluster.availabilityZones[1]", "is not an AWS Availability Zone name"),
    ],
)
def test_an_aws_zone_the_region_lacks_is_refused(zones: list[str], path: str, words: str) -> None:
    ((where, message),) = refused(stack({**AWS, "availabilityZones": zones}))
    assert where == path and words in message
    assert f"cluster.allowUnknown: [{zones[1]}]" in message


def test_a_zone_letter_us_east_2_lacks_is_refused_in_subnet_ids_too() -> None:
    cluster = {**AWS, "region": "us-east-2", "vpcId": "vpc-1", "subnetIds": {"us-east-2a": "s-1", "us-east-2d": "s-2"}}
    ((where, message),) = refused(stack(cluster))
    assert where == "cluster.subnetIds.us-east-2d" and "whose zones are us-east-2a, us-east-2b, us-east-2c" in message


def test_a_pool_zone_the_region_lacks_is_one_error_not_also_a_missing_subnet() -> None:
    cluster = {**AWS, "availabilityZones": ["us-east-1a", "us-east-1b"]}
    pool = {"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1z", "maxNodes": 2}
    ((where, message),) = refused(stack(cluster, [pool]))
    assert where == "nodePools[0].zone" and "is not a zone of us-east-1" in message
    ((_, message),) = refused(stack({**cluster, "allowUnknown": ["us-east-1z"]}, [pool]))
    assert message == "the cluster has no subnet in us-east-1z (its zones: us-east-1a, us-east-1b)"


def test_a_pool_zone_the_region_lacks_is_refused_and_allow_unknown_lets_it_through() -> None:
    pool = {"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1x", "maxNodes": 2}
    found = refused(stack(AWS, [pool]))
    assert found[0][0] == "nodePools[0].zone" and "'us-east-1x' is not a zone of us-east-1" in found[0][1]
    assert resolve(parse_stack(stack({**AWS, "allowUnknown": ["us-east-1x"]}, [pool]))).pools["p5"].zone == "us-east-1x"


def test_every_region_and_zone_of_the_lists_is_accepted() -> None:
    for region in sorted(aws_regions.REGIONS):
        assert aws_regions.region_problem(region) is None
        assert all(aws_regions.zone_problem(zone, region) is None for zone in aws_regions.zones(region))
    for region in sorted(gcp_regions.REGIONS):
        assert len(gcp_regions.zones(region)) >= 3, region
        assert all(gcp_regions.zone_problem(zone) is None for zone in gcp_regions.zones(region))


@pytest.mark.parametrize(
    ("cluster", "path", "words"),
    [
        ({"region": "us-centrall1"}, "cluster.region", "did you mean 'us-central1'"),
        ({"zone": "us-central1-d"}, "cluster.zone", "whose zones are us-central1-a, us-central1-b, us-central1-c"),
        ({"region": "europe-west1", "zone": "europe-west1-a"}, "cluster.zone", "europe-west1-b, europe-west1-c"),
    ],
)
def test_a_gcp_region_or_zone_google_lacks_is_refused(cluster: dict[str, Any], path: str, words: str) -> None:
    ((where, message),) = refused(stack({**GCP, **cluster}))
    assert where == path and words in message and "cluster.allowUnknown" in message


def test_a_gke_pool_zone_google_lacks_is_refused() -> None:
    pool = {"name": "a3", "machineType": "a3-highgpu-8g", "zone": "us-central1-e", "maxNodes": 2}
    found = refused(stack(GCP, [pool]))
    assert found[0][0] == "nodePools[0].zone" and "us-central1-f" in found[0][1]


# -- project ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("project", "words"),
    [
        ("p", "has 1 character; a project id has 6 to 30"),
        ("a" * 31, "has 31 characters"),
        ("My-Project", "lowercase letters, digits and hyphens"),
        ("1project", "starting with a letter"),
        ("my-project-", "not ending with a hyphen"),
        ("my_project", "lowercase letters, digits and hyphens"),
        ("my-google-lab", "contains 'google'"),
    ],
)
def test_a_project_id_that_breaks_googles_rules_is_refused(project: str, words: str) -> None:
    ((where, message),) = refused(stack({**GCP, "project": project}))
    assert where == "cluster.project" and words in message


@pytest.mark.parametrize("project", ["ml-project", "abcdef", "a" * 30, "example.com:ml-project", "team-42-train"])
def test_a_project_id_google_allows_is_accepted(project: str) -> None:
    assert gcp_regions.project_problem(project) is None


# -- Kubernetes minors ------------------------------------------------------------------------------


def test_the_version_lists_run_oldest_first_and_standard_support_ends_before_extended() -> None:
    for minors in (eks.MINORS, gke.MINORS):
        numbers = [tuple(int(p) for p in m.version.split(".")) for m in minors]
        assert numbers == sorted(numbers)
        assert all(m.standard_ends < m.extended_ends for m in minors if m.standard_ends)
    assert [m.version for m in eks.MINORS if m.offered()] == ["1.32", "1.33", "1.34", "1.35", "1.36"]
    assert [m.version for m in eks.MINORS if m.extended()] == ["1.32", "1.33"]
    assert [m.version for m in gke.MINORS if m.standard()] == ["1.35"]
    assert [m.version for m in gke.MINORS if m.offered()] == ["1.32", "1.33", "1.34", "1.35"]


@pytest.mark.parametrize(
    ("cluster", "words"),
    [
        ({**AWS, "kubernetesVersion": "1.31"}, "EKS has not offered 1.31 since 2026-11-26"),
        ({**AWS, "kubernetesVersion": "1.24"}, "EKS has not offered 1.24 for years"),
        ({**GCP, "kubernetesVersion": "1.31"}, "GKE has not offered 1.31 since 2026-10-25"),
        ({**GCP, "kubernetesVersion": "1.27.16-gke.2874000"}, "GKE has not offered 1.27 for years"),
    ],
)
def test_a_minor_the_provider_no_longer_offers_is_refused_with_the_fix(cluster: dict[str, Any], words: str) -> None:
    found = refused(stack(cluster))
    assert found[0][0] == "cluster.kubernetesVersion"
    assert words in found[0][1] and found[0][1].endswith("use 1.35")


def test_allow_unknown_does_not_bring_back_a_minor_the_provider_dropped() -> None:
    assert refused(stack({**AWS, "kubernetesVersion": "1.29", "allowUnknown": ["1.29"]}))[0][0] == (
        "cluster.kubernetesVersion"
    )


@pytest.mark.parametrize(
    ("cluster", "words"),
    [
        ({**AWS, "kubernetesVersion": "1.33"}, "1.33 is in EKS extended support (charged per cluster hour)"),
        ({**GCP, "kubernetesVersion": "1.34"}, "only the Extended channel offers it"),
        ({**AWS, "kubernetesVersion": "1.38"}, "1.38 is newer than the minors this release knows EKS offers"),
        ({**GCP, "kubernetesVersion": "1.37"}, "1.37 is newer than the minors this release knows GKE offers"),
    ],
)
def test_a_paid_or_newer_than_known_minor_is_a_warning_not_an_error(cluster: dict[str, Any], words: str) -> None:
    ((where, message),) = warned(stack(cluster))
    assert where == "cluster.kubernetesVersion" and words in message


def test_a_newer_minor_listed_in_allow_unknown_warns_no_more() -> None:
    found = warned(stack({**AWS, "kubernetesVersion": "1.38", "allowUnknown": ["1.38"]}))
    assert [path for path, _ in found] == ["cluster.allowUnknown[0]"], "only the note that it is taken on trust"


def test_an_allow_unknown_entry_the_lists_know_is_a_warning_to_drop_it() -> None:
    assert warned(stack({**AWS, "allowUnknown": ["us-east-1"]})) == [
        ("cluster.allowUnknown[0]", "us-east-1 is known to this release: drop it")
    ]


# -- machine types ----------------------------------------------------------------------------------


def test_a_typo_in_an_instance_type_is_the_first_and_only_error_even_with_gpus_per_node(tmp_path) -> None:
    pool = {"name": "p5", "instanceType": "p5.96xlarge", "zone": "us-east-1a", "gpusPerNode": 8}
    path = write(tmp_path, stack(AWS, [pool]))
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"{path}:8: nodePools[0].instanceType: 'p5.96xlarge' is not a GPU instance type in the ")
    assert "did you mean 'p5.4xlarge' or 'p5.48xlarge'" in line and "cluster.allowUnknown: [p5.96xlarge]" in line


def test_a_typo_in_a_machine_type_comes_before_the_accelerator_type_it_would_need() -> None:
    found = refused(stack(GCP, [{"name": "a3", "machineType": "a3-highgpu-8", "zone": "us-central1-a"}]))
    assert found == [(found[0][0], found[0][1])] and found[0][0] == "nodePools[0].machineType"
    assert "did you mean 'a3-highgpu-8g'" in found[0][1]


def test_an_instance_type_the_stack_vouches_for_renders_a_tcp_pool_with_a_warning() -> None:
    pool = {"name": "p7", "instanceType": "p7.48xlarge", "zone": "us-east-1a", "gpusPerNode": 8}
    raw = stack({**AWS, "allowUnknown": ["p7.48xlarge"]}, [pool])
    resolved = resolve(parse_stack(raw))
    assert (resolved.pools["p7"].fabric, resolved.pools["p7"].vcpus) == ("tcp", None)
    ((where, message),) = warned(raw)
    assert where == "nodePools[0].instanceType" and "the pool runs tcp" in message


def test_every_shipped_stack_names_only_what_the_lists_know() -> None:
    for path in sorted([*REPO.glob("Pulumi.*.yaml"), *EXAMPLE_STACKS]):
        config = resolve_file(path).config
        assert identifiers.warnings(config) == [], path
        assert not getattr(config.cluster, "allow_unknown", []), path


def test_an_existing_clusters_type_one_letter_from_the_catalog_is_a_warning_not_an_error() -> None:
    pool = {"name": "h100", "instanceType": "p5.49xlarge", "gpusPerNode": 8, "nodeSelector": {"a": "b"}}
    raw = stack({"provider": "existing", "name": "t"}, [pool])
    assert resolve(parse_stack(raw)).pools["h100"].gpus_per_node == 8
    ((where, message),) = warned(raw)
    assert where == "nodePools[0].instanceType" and "'p5.48xlarge'" in message
    assert warned(stack({"provider": "existing", "name": "t"}, [{**pool, "instanceType": "dgx-h100"}])) == []
