"""Rack-scale NVLink rules: a multi-node GB200 / GB300 job claims its ComputeDomain's channel, fits one NVLink
domain when held to one, and its pool is not Karpenter's."""

from __future__ import annotations

import copy
from typing import Any

from components import rules
from components.manifests import trainingjob
from components.manifests.plan import plan
from components.rules.rule import Settings
from components.rules.subjects import from_objects, from_pools
from tests.support.factories import gb200, job, pool

SETTINGS = Settings(cluster="existing")


def found(subjects: list[Any], rule: str) -> list[str]:
    return [f.message for f in rules.run(subjects, SETTINGS) if f.rule == rule and f.enforcement == "mandatory"]


def domain_job(nodes: int = 4, **pool_fields: Any) -> tuple[list[dict[str, Any]], list[Any]]:
    p = gb200(**pool_fields)
    return trainingjob.objects(plan(job(name="mnnvl", nodes=nodes), p)), from_pools([p])


def worker(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return objects[-1]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]


def test_a_training_job_on_a_rack_scale_pool_passes_every_nvlink_rule() -> None:
    objects, pools = domain_job()
    subjects = from_objects(objects) + pools
    for rule in ("nvlink-compute-domain", "nvlink-domain-size", "nvlink-karpenter"):
        assert found(subjects, rule) == [], rule


def test_pods_without_the_channel_claim_are_a_defect() -> None:
    objects, pools = domain_job()
    del worker(objects)["resourceClaims"]
    (message,) = found(from_objects(objects) + pools, "nvlink-compute-domain")
    assert message.startswith("Worker pods on rack-scale NVLink pool 'gb200' claim no ComputeDomain's channel")


def test_a_claim_of_a_template_no_compute_domain_makes_is_a_defect() -> None:
    objects, pools = domain_job()
    without = [o for o in objects if o["kind"] != "ComputeDomain"]
    assert len(found(from_objects(without) + pools, "nvlink-compute-domain")) == 2, "Master and Worker"


def test_single_node_jobs_and_hgx_pools_need_no_domain() -> None:
    p = gb200()
    single = trainingjob.objects(plan(job(launcher="indexed", nodes=1), p))
    assert found(from_objects(single) + from_pools([p]), "nvlink-compute-domain") == []
    h100 = pool("tcp")
    hgx = trainingjob.objects(plan(job(nodes=4), h100))
    assert found(from_objects(hgx) + from_pools([h100]), "nvlink-compute-domain") == []


def test_more_pods_held_to_one_domain_than_it_has_nodes_is_a_defect() -> None:
    objects, _ = domain_job(nodes=9, nvlinkDomainNodes=9)
    smaller = from_pools([gb200(nvlinkDomainNodes=4)])
    (message,) = found(from_objects(objects) + smaller, "nvlink-domain-size")
    assert (
        message == "9 GPU pods are held to one NVLink domain of pool 'gb200', which joins 4 nodes: they never all start"
    )


def test_karpenter_for_rack_scale_machines_is_a_defect() -> None:
    nodepool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gb200"},
        "spec": {
            "template": {
                "spec": {
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p6e-gb200"]}
                    ]
                }
            }
        },
    }
    (message,) = found(from_objects([nodepool]), "nvlink-karpenter")
    assert "p6e-gb200" in message
    p5 = copy.deepcopy(nodepool)
    p5["spec"]["template"]["spec"]["requirements"][0]["values"] = ["p5"]
    assert found(from_objects([p5]), "nvlink-karpenter") == []
