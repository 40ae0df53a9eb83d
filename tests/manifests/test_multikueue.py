"""MultiKueue's objects: on the manager the MultiKueueClusters, configs, checks and mirrored queues, and the jobs
marked for MultiKueue; on a worker the ServiceAccount, least role and token Secret. Each validates against the pinned
Kueue's CRDs, read from its Go module at test time."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components import quantity
from components.manifests import multikueue
from components.manifests.queues import DEFAULT_FLAVOR
from components.models import QueueSpec
from components.simulate import crds, engines
from components.wellknown import KUEUE_NAMESPACE
from tests.support.factories import pool
from tests.support.schemas import assert_valid, errors


def _kueue_crds() -> dict[str, dict[str, Any]]:
    """The pinned Kueue's CRDs by kind, from its Go module (skipped when the module cannot be had)."""
    try:
        return {c["spec"]["names"]["kind"]: c for c in crds.definitions("kueue.x-k8s.io")}
    except (engines.BuildError, OSError) as exc:
        pytest.skip(f"the Kueue module is out of reach: {exc}")


@pytest.mark.parametrize("kind", ["MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck"])
def test_the_api_version_is_the_one_kueue_serves_and_stores(kind: str) -> None:
    versions = _kueue_crds()[kind]["spec"]["versions"]
    stored = [v["name"] for v in versions if v["storage"] and v["served"]]
    assert stored == [multikueue.MULTIKUEUE_API.rpartition("/")[2]] == ["v1beta2"]


def test_the_manager_objects_validate_against_kueues_crds() -> None:
    objects = [
        multikueue.multikueue_cluster("p5-east"),
        multikueue.multikueue_config("h100", ["p5-east", "p5-west"]),
        multikueue.admission_check("h100"),
        multikueue.manager_flavor(pool(maxNodes=4)),
    ]
    assert_valid(*objects)


def test_a_multikueue_cluster_reads_its_kubeconfig_from_a_secret_of_kueues_namespace() -> None:
    cluster = multikueue.multikueue_cluster("p5-east")
    assert cluster["spec"]["clusterSource"]["kubeConfig"] == {
        "location": "multikueue-p5-east",
        "locationType": "Secret",
    }
    secret = multikueue.kubeconfig_secret("p5-east", "ZW5jb2RlZA==")
    assert secret["metadata"]["namespace"] == KUEUE_NAMESPACE == "kueue-system"
    assert secret["metadata"]["name"] == "multikueue-p5-east" and secret["data"] == {"kubeconfig": "ZW5jb2RlZA=="}
    assert_valid(secret)


def test_the_admission_check_is_multikueues_and_names_the_queues_config() -> None:
    check = multikueue.admission_check("h100")
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/multikueue"
    assert check["spec"]["parameters"] == {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "h100"}


def test_a_config_listing_a_worker_twice_is_refused_by_kueues_own_rule() -> None:
    found = errors(multikueue.multikueue_config("h100", ["a", "a"]))
    assert any("must be unique" in e for e in found), found


def test_the_worker_gets_an_account_a_least_role_and_a_token_secret_the_cluster_fills() -> None:
    account, role, binding, token = multikueue.worker_access()
    assert (account["kind"], account["metadata"]["namespace"]) == ("ServiceAccount", KUEUE_NAMESPACE)
    assert account["automountServiceAccountToken"] is False, "no pod runs as it"
    assert role["rules"] == list(multikueue.WORKER_RULES)
    grants = {
        (g, r): set(rule["verbs"]) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
    }
    assert grants == {
        ("kueue.x-k8s.io", "workloads"): {"create", "delete", "get", "list", "update", "watch"},
        ("kueue.x-k8s.io", "workloads/status"): {"get", "patch", "update"},
        ("trainer.kubeflow.org", "trainjobs"): {"create", "delete", "get", "list", "watch"},
    }
    assert not any("*" in v for verbs in grants.values() for v in verbs) and ("", "secrets") not in grants
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": KUEUE_NAMESPACE}
    ]
    assert token["type"] == "kubernetes.io/service-account-token" and "data" not in token
    assert token["metadata"]["annotations"] == {"kubernetes.io/service-account.name": account["metadata"]["name"]}
    assert_valid(account, role, binding, token)


def test_a_rotation_renames_the_token_secret_only() -> None:
    first, rotated = multikueue.worker_access(), multikueue.worker_access("2026-12-01")
    assert rotated[3]["metadata"]["name"] == "gpu-training-multikueue-token-2026-12-01"
    assert first[:3] == rotated[:3]


def test_a_dispatched_trainjob_is_managed_by_multikueue_and_the_original_is_untouched() -> None:
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "j"}, "spec": {}}
    original = copy.deepcopy(job)
    assert multikueue.dispatched(job)["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert job == original
    with pytest.raises(ValueError, match="dispatches TrainJobs"):
        multikueue.dispatched({**job, "kind": "PyTorchJob"})


def test_the_managers_queue_holds_the_workers_quotas_summed_per_pool() -> None:
    # A flavor per worker's pool let the manager charge a job to one worker's share while MultiKueue ran it on the
    # other, so a job only the first could hold waited on the manager with that worker idle (seen in simulate).
    h100, small = pool(maxNodes=4), pool(maxNodes=2)
    research = QueueSpec(name="research", gpus=24, borrowing_limit=8, lending_limit=4)
    queue = multikueue.manager_cluster_queue(
        "research",
        [("a", research, [h100]), ("b", QueueSpec(name="research", gpus=64, lending_limit=8), [small])],
    )
    spec = queue["spec"]
    assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "research"}]}
    assert "preemption" not in spec, "the workers preempt"
    (group,) = spec["resourceGroups"]
    assert [f["name"] for f in group["flavors"]] == ["h100", DEFAULT_FLAVOR]
    for flavor in group["flavors"]:
        assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]
    gpus = {f["name"]: next(r for r in f["resources"] if r["name"] == "nvidia.com/gpu") for f in group["flavors"]}
    # 24 on a, and on b at most what its pool has (2 nodes of 8); b sets no borrowing limit, so the sum has none.
    assert gpus["h100"] == {"name": "nvidia.com/gpu", "nominalQuota": "40", "lendingLimit": "12"}
    assert gpus[DEFAULT_FLAVOR]["nominalQuota"] == "0"
    assert_valid(queue)


def test_the_managers_summed_quotas_are_written_as_kueues_webhook_writes_them_back() -> None:
    # A node of unknown memory counts as 16384Gi: two workers' are 32Ti on the manager. Written in Gi, Kueue's webhook
    # wrote them back as Ti at create, and the next `pulumi up` updated the queue again (tests/engine/test_fleet.py).
    half = pool(maxNodes=1)
    research = QueueSpec(name="research", gpus=8)
    queue = multikueue.manager_cluster_queue("research", [("a", research, [half]), ("b", research, [half])])
    flavors = {f["name"]: {r["name"]: r for r in f["resources"]} for f in queue["spec"]["resourceGroups"][0]["flavors"]}
    assert flavors["h100"]["memory"]["nominalQuota"] == "32Ti"
    quotas = [v for f in flavors.values() for r in f.values() for k, v in r.items() if k != "name"]
    assert all(quantity.stored(q) == q for q in quotas), quotas
