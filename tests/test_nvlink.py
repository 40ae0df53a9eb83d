"""Rack-scale NVLink: a multi-node GB200 / GB300 job's ComputeDomain, channel claim, NVLS env and placement."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import nvlink
from components.errors import ConfigError
from components.manifests import trainingjob
from components.manifests.plan import plan
from components.models import NetworkConfig, NodePoolSpec
from components.pools import resolve_pools
from components.topology import KUEUE_REQUIRED, provider_topology
from tests.support.factories import gb200, job, pool, with_topology, with_trainer
from tests.support.schemas import assert_valid


def kinds(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for obj in objects}


def worker(obj: dict[str, Any]) -> dict[str, Any]:
    """The worker pod template of a PyTorchJob."""
    return obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]


def test_a_multi_node_gb200_job_shares_its_own_compute_domain() -> None:
    objects = trainingjob.objects(plan(job(name="mnnvl", namespace="training", nodes=4), gb200()))
    found = kinds(objects)
    domain = found["ComputeDomain"]
    assert objects[0] is domain, "the ComputeDomain comes before the pods that claim its channel"
    assert domain["apiVersion"] == "resource.nvidia.com/v1beta1"
    assert domain["metadata"] == {
        "name": "mnnvl",
        "namespace": "training",
        "labels": {"app.kubernetes.io/instance": "mnnvl"},
        "annotations": {"pulumi.com/waitFor": "jsonpath={.status.status}"},
    }, "pulumi up waits for the controller to make the channel's template before the job"
    template = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
    for role in ("Master", "Worker"):
        pod = found["PyTorchJob"]["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]
        assert pod["resourceClaims"] == [{"name": "compute-domain-channel", "resourceClaimTemplateName": template}]
        (container,) = pod["containers"]
        assert container["resources"]["claims"] == [{"name": "compute-domain-channel"}]
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env["NCCL_MNNVL_ENABLE"] == "1" and env["NCCL_CUMEM_ENABLE"] == "1" and env["NCCL_NVLS_ENABLE"] == "1"
    assert_valid(*objects)


def test_its_pods_land_in_one_nvlink_domain() -> None:
    pod = worker(kinds(trainingjob.objects(plan(job(name="mnnvl", nodes=2), gb200())))["PyTorchJob"])
    assert pod["metadata"]["labels"][nvlink.DOMAIN_LABEL] == "mnnvl"
    (term,) = pod["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {
        "labelSelector": {"matchLabels": {nvlink.DOMAIN_LABEL: "mnnvl"}},
        "topologyKey": "nvidia.com/gpu.clique",
    }


def test_a_single_node_job_needs_no_domain() -> None:
    objects = trainingjob.objects(plan(job(launcher="indexed", nodes=1), gb200()))
    assert "ComputeDomain" not in kinds(objects)
    pod = objects[-1]["spec"]["template"]["spec"]
    assert "resourceClaims" not in pod and "affinity" not in pod
    env = {e["name"] for e in pod["containers"][0]["env"]}
    assert not env & set(nvlink.ENV), "NCCL_MNNVL_ENABLE=1 would fail a job that has no IMEX channel"


def test_hgx_machines_get_none_of_it() -> None:
    objects = trainingjob.objects(plan(job(nodes=4), pool("roce")))
    assert "ComputeDomain" not in kinds(objects)
    assert "resourceClaims" not in worker(objects[-1])["spec"]


def test_an_elastic_job_that_may_grow_past_one_node_gets_a_domain() -> None:
    p = plan(job(nodes=1, elastic={"minNodes": 1, "maxNodes": 4}), gb200())
    assert p.compute_domain == "train" and p.one_domain


def test_a_job_larger_than_a_domain_is_an_error_naming_the_key() -> None:
    with pytest.raises(ConfigError) as raised:
        plan(job(nodes=10), gb200(nvlinkDomainNodes=9), path="jobs[0]")
    (issue,) = raised.value.issues
    assert issue.path == "jobs[0].nodes"
    assert "at most 9 (nodePools.nvlinkDomainNodes)" in issue.message
    assert "scheduler.topology" in issue.message


def test_it_spans_domains_only_where_the_user_says_so() -> None:
    levels = [{"name": "rack-row", "nodeLabel": "example.com/row"}]
    spanning = plan(job(nodes=20, topology={"level": "rack-row"}), with_topology(gb200(), levels), "kueue", "research")
    assert spanning.compute_domain == "train" and not spanning.one_domain
    objects = trainingjob.objects(spanning)
    pod = worker(kinds(objects)["PyTorchJob"])
    assert "affinity" not in pod["spec"], "a job across domains is not held to one"
    assert pod["metadata"]["annotations"][KUEUE_REQUIRED] == "example.com/row"
    assert_valid(*objects)


def test_kueue_places_a_domain_job_in_one_clique_required() -> None:
    levels = [{"name": "rack-row", "nodeLabel": "example.com/row"}]
    p = with_topology(gb200(), levels)
    assert p.topology is not None and p.topology.names == ["rack-row", "nvlink", "host"]
    planned = plan(job(nodes=4), p, "kueue", "research")
    assert planned.placement is not None and planned.placement.mode == "required"
    assert worker(trainingjob.objects(planned)[-1])["metadata"]["annotations"][KUEUE_REQUIRED] == nvlink.CLIQUE_LABEL


def test_on_gke_the_nvlink_level_sits_above_the_physical_host() -> None:
    topology = provider_topology("gcp", "a4x-highgpu-4g", [], nvlink=True)
    assert topology is not None and topology.names == ["block", "subblock", "nvlink", "gce-host", "host"]
    assert topology.finest_shared is not None and topology.finest_shared.name == "nvlink"


def test_a_trainjob_gets_its_own_runtime_carrying_the_claim() -> None:
    planned = plan(job(launcher="trainjob", nodes=2), with_trainer(gb200()), "none")
    objects = trainingjob.objects(planned)
    found = kinds(objects)
    assert found["TrainJob"]["spec"]["runtimeRef"]["kind"] == "TrainingRuntime"
    (replicated,) = found["TrainingRuntime"]["spec"]["template"]["spec"]["replicatedJobs"]
    pod = replicated["template"]["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [nvlink.channel_claim("train")]
    assert found["TrainJob"]["spec"]["trainer"]["resourcesPerNode"]["claims"] == [{"name": "compute-domain-channel"}]
    assert_valid(*objects)


def _issues(**spec: Any) -> list[tuple[str, str]]:
    base = {"name": "p", "gpusPerNode": 4, "maxNodes": 4, "nodeSelector": {"a": "b"}}
    _, issues = resolve_pools([NodePoolSpec.model_validate({**base, **spec})], "existing", None, NetworkConfig())
    return [(i.path, i.message) for i in issues]


def test_nvlink_domain_nodes_is_refused_where_it_cannot_apply() -> None:
    ((path, message),) = _issues(gpuModel="NVIDIA H100 80GB", nvlinkDomainNodes=4)
    assert path == "nodePools[0].nvlinkDomainNodes" and "NVLink stays inside the node" in message
    ((path, message),) = _issues(gpuModel="NVIDIA GB300", nvlinkDomainNodes=36)
    assert path == "nodePools[0].nvlinkDomainNodes" and "holds at most 18" in message
    assert _issues(gpuModel="NVIDIA GB300", nvlinkDomainNodes=9) == []


@settings(max_examples=40, deadline=None)
@given(domain=st.integers(2, 18), nodes=st.integers(1, 40))
def test_a_domain_job_fits_its_domain_or_is_refused(domain: int, nodes: int) -> None:
    p = gb200(nvlinkDomainNodes=domain)
    if nodes > domain:
        with pytest.raises(ConfigError):
            plan(job(nodes=nodes), p)
        return
    planned = plan(job(nodes=nodes), p)
    assert (planned.compute_domain is not None) == (nodes > 1)
    assert planned.one_domain == (nodes > 1)
