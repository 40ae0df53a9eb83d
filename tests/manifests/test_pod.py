"""Tests for the worker and launcher pod templates every launcher shares."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import quantity
from components.manifests.plan import JobPlan, plan
from components.manifests.pod import launcher_template, tolerations, worker_template
from components.models import Taint, VolumeSpec
from tests.support.factories import job, planned, pool
from tests.support.schemas import assert_valid


def worker(p: JobPlan, **kwargs: Any) -> dict[str, Any]:
    return worker_template(p, role="worker", container="trainer", command=["python", "train.py"], **kwargs)


def body(template: dict[str, Any]) -> dict[str, Any]:
    return template["spec"]["containers"][0]


def as_pod(template: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "worker-0", "namespace": "training", **template["metadata"]},
        "spec": template["spec"],
    }


def shm_volume(template: dict[str, Any]) -> dict[str, Any]:
    mount = next(m for m in body(template)["volumeMounts"] if m["mountPath"] == "/dev/shm")
    return next(v for v in template["spec"]["volumes"] if v["name"] == mount["name"])


def test_gpu_requests_equal_limits() -> None:
    resources = body(worker(planned(resources={"cpu": "32", "memory": "512Gi"})))["resources"]
    assert resources["limits"] == resources["requests"]
    assert resources["limits"]["nvidia.com/gpu"] == "8"
    assert (resources["limits"]["cpu"], resources["limits"]["memory"]) == ("32", "512Gi")


@pytest.mark.parametrize("fabric", ["tcp", "roce", "infiniband", "efa"])
def test_every_fabric_resource_is_requested_as_much_as_limited(fabric: str) -> None:
    resources = body(worker(planned(fabric, resources={"memory": "512Gi"})))["resources"]
    assert resources["limits"] == resources["requests"]


def test_gpus_per_node_of_the_job_not_the_pool() -> None:
    assert body(worker(planned(gpusPerNode=2)))["resources"]["limits"]["nvidia.com/gpu"] == "2"


def test_no_cpu_or_memory_on_an_unknown_machine_unless_asked() -> None:
    limits = body(worker(planned()))["resources"]["limits"]
    assert "cpu" not in limits
    assert "memory" not in limits


def test_an_efa_worker_requests_its_devices_and_no_huge_pages() -> None:
    resources = body(worker(planned("efa")))["resources"]
    assert resources["requests"]["vpc.amazonaws.com/efa"] == "32"
    assert not [r for r in resources["requests"] if r.startswith("hugepages-")]


def test_tolerations_match_the_pool_taints() -> None:
    taints = [
        Taint(key="nvidia.com/gpu", value="true", effect="NoSchedule"),
        Taint(key="dedicated", effect="NoExecute"),
    ]
    assert tolerations(taints) == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"},
    ]


def test_worker_tolerates_its_pool() -> None:
    p = plan(job(), pool("tcp", taints=[{"key": "gpu", "value": "h100", "effect": "NoSchedule"}, {"key": "spot"}]))
    assert worker(p)["spec"]["tolerations"] == [
        {"key": "gpu", "operator": "Equal", "value": "h100", "effect": "NoSchedule"},
        {"key": "spot", "operator": "Exists", "effect": "NoSchedule"},
    ]


def test_default_taint_is_tolerated() -> None:
    assert worker(planned())["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]


def test_a_pool_without_taints_gives_no_tolerations() -> None:
    assert worker(plan(job(), pool("tcp", taints=[])))["spec"]["tolerations"] == []


def test_node_selector_is_the_pools() -> None:
    assert worker(planned())["spec"]["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert worker(planned("efa"))["spec"]["nodeSelector"] == {"gpu-training/pool": "p5"}


def test_pod_labels_name_the_job_role_and_pool() -> None:
    labels = worker(planned(name="llama"))["metadata"]["labels"]
    assert labels["app.kubernetes.io/instance"] == "llama"
    assert labels["gpu-training/role"] == "worker"
    assert labels["gpu-training/pool"] == "h100"


def test_dev_shm_is_a_memory_backed_empty_dir() -> None:
    template = worker(planned())
    volume = shm_volume(template)
    assert volume["emptyDir"]["medium"] == "Memory"


def test_shm_defaults_to_8gi_per_gpu() -> None:
    assert shm_volume(worker(planned()))["emptyDir"]["sizeLimit"] == "64Gi"
    assert shm_volume(worker(planned(gpusPerNode=2)))["emptyDir"]["sizeLimit"] == "16Gi"


def test_shm_default_is_capped_at_half_the_memory() -> None:
    template = worker(planned(resources={"memory": "40Gi"}))
    assert shm_volume(template)["emptyDir"]["sizeLimit"] == "20Gi"


def test_explicit_shm_size_is_kept() -> None:
    template = worker(planned(shmSize="100Gi", resources={"memory": "512Gi"}))
    assert shm_volume(template)["emptyDir"]["sizeLimit"] == "100Gi"
    assert shm_volume(worker(planned(shmSize="1Gi")))["emptyDir"]["sizeLimit"] == "1Gi"


@settings(max_examples=50, deadline=None)
@given(gpus=st.integers(1, 8), memory_mi=st.integers(256, 2 * 1024 * 1024))
def test_shm_default_never_exceeds_half_the_memory(gpus: int, memory_mi: int) -> None:
    # One node: a multi-node job with so little memory is refused (it could not have 1Gi of /dev/shm).
    template = worker(planned(gpusPerNode=gpus, nodes=1, resources={"memory": f"{memory_mi}Mi"}))
    size = quantity.parse(shm_volume(template)["emptyDir"]["sizeLimit"])
    assert 0 < size <= quantity.parse(f"{memory_mi}Mi") / 2
    assert size <= gpus * 8 * 2**30


def test_claims_are_mounted_with_read_only_and_sub_path() -> None:
    p = planned(
        volumes=[
            {"claim": "training-checkpoints", "mountPath": "/checkpoints", "subPath": "run-001"},
            {"claim": "training-dataset", "mountPath": "/data", "readOnly": True},
        ]
    )
    template = worker(p)
    mounts = {m["mountPath"]: m for m in body(template)["volumeMounts"]}
    assert mounts["/checkpoints"].get("subPath") == "run-001"
    assert "readOnly" not in mounts["/checkpoints"]
    assert mounts["/data"]["readOnly"] is True
    assert "subPath" not in mounts["/data"]
    volumes = {v["name"]: v for v in template["spec"]["volumes"]}
    assert volumes[mounts["/checkpoints"]["name"]]["persistentVolumeClaim"] == {"claimName": "training-checkpoints"}
    assert volumes[mounts["/data"]["name"]]["persistentVolumeClaim"] == {"claimName": "training-dataset"}


def test_one_claim_mounted_twice_is_one_volume() -> None:
    p = planned(
        volumes=[
            {"claim": "shared", "mountPath": "/checkpoints", "subPath": "ckpt"},
            {"claim": "shared", "mountPath": "/logs", "subPath": "logs"},
        ]
    )
    template = worker(p)
    claims = [v for v in template["spec"]["volumes"] if "persistentVolumeClaim" in v]
    assert len(claims) == 1
    assert_valid(as_pod(template))


@pytest.mark.parametrize(
    "claims",
    [("data.v1", "data-v1"), ("dshm", "checkpoints"), ("deepspeed-config", "checkpoints")],
)
def test_every_mount_reaches_its_own_claim(claims: tuple[str, str]) -> None:
    p = planned(
        volumes=[{"claim": c, "mountPath": f"/mnt/{i}"} for i, c in enumerate(claims)],
        deepspeed={"config": {"train_batch_size": 8}},
    )
    template = worker(p)
    volumes = {v["name"]: v for v in template["spec"]["volumes"]}
    assert len(volumes) == len(template["spec"]["volumes"])
    mounts = {m["mountPath"]: m["name"] for m in body(template)["volumeMounts"]}
    for i, claim in enumerate(claims):
        assert volumes[mounts[f"/mnt/{i}"]].get("persistentVolumeClaim") == {"claimName": claim}


@pytest.mark.parametrize(("fabric", "locked"), [("tcp", False), ("roce", True), ("infiniband", True), ("efa", True)])
def test_ipc_lock_only_on_rdma_and_efa(fabric: str, locked: bool) -> None:
    added = body(worker(planned(fabric))).get("securityContext", {}).get("capabilities", {}).get("add", [])
    assert ("IPC_LOCK" in added) == locked


def test_roce_pods_attach_their_network_through_multus() -> None:
    annotations = worker(planned("roce"))["metadata"]["annotations"]
    assert annotations["k8s.v1.cni.cncf.io/networks"] == "roce-network@net1"


def test_tcp_pods_have_no_annotations() -> None:
    assert "annotations" not in worker(planned("tcp"))["metadata"]


def test_env_is_the_plans_in_order_after_the_extra_env() -> None:
    p = planned(env={"HF_HOME": "/data/hf"})
    extra = [{"name": "MASTER_PORT", "value": "29400"}]
    env = body(worker(p, extra_env=extra))["env"]
    assert env[0] == extra[0]
    assert env[1:] == [{"name": k, "value": v} for k, v in p.env.items()]


def test_scheduler_and_priority_land_on_the_pod() -> None:
    p = plan(job(scheduler={"priorityClass": "high"}), pool("tcp"), "volcano", "research")
    spec = worker(p)["spec"]
    assert spec["schedulerName"] == "volcano"
    assert spec["priorityClassName"] == "high"


def test_launcher_is_a_small_cpu_pod_with_the_job_env() -> None:
    p = planned("efa", env={"HF_HOME": "/data"})
    template = launcher_template(p, container="launcher", command=["mpirun"], args=["-np", "16"])
    launcher = body(template)
    assert set(launcher["resources"]["requests"]) == {"cpu", "memory"}
    assert {e["name"]: e["value"] for e in launcher["env"]} == p.env
    assert "tolerations" not in template["spec"]
    assert_valid(as_pod(template))


@pytest.mark.parametrize("fabric", ["tcp", "roce", "infiniband", "efa"])
def test_worker_pod_validates(fabric: str) -> None:
    p = plan(
        job(
            resources={"cpu": "32", "memory": "512Gi"},
            scheduler={"priorityClass": "high"},
            volumes=[
                {"claim": "training-checkpoints", "mountPath": "/checkpoints", "subPath": "run-1"},
                {"claim": "training-dataset", "mountPath": "/data", "readOnly": True},
            ],
            deepspeed={"config": {"train_batch_size": 8}},
        ),
        pool(fabric),
        "volcano",
        "research",
    )
    assert_valid(as_pod(worker(p, restart_policy="Never", podgroup="train")))


def test_scratch_is_an_empty_dir_on_the_node_requested_as_ephemeral_storage() -> None:
    template = worker(planned(scratch={"size": "500Gi"}))
    mount = next(m for m in body(template)["volumeMounts"] if m["mountPath"] == "/scratch")
    volume = next(v for v in template["spec"]["volumes"] if v["name"] == mount["name"])
    assert volume == {"name": "scratch", "emptyDir": {"sizeLimit": "500Gi"}}, "on the node's disks, not in memory"
    resources = body(template)["resources"]
    assert resources["requests"]["ephemeral-storage"] == resources["limits"]["ephemeral-storage"] == "500Gi"
    assert_valid(as_pod(template))


def test_scratch_may_not_share_a_mount_path() -> None:
    with pytest.raises(ValueError, match="two volumes are mounted at /data"):
        job(scratch={"size": "1Ti", "mountPath": "/data"}, volumes=[{"claim": "c", "mountPath": "/data"}])


GCS_DATA = VolumeSpec.model_validate({"name": "dataset", "backend": "gcs", "accessMode": "ReadOnlyMany"})
GCS_CHECKPOINTS = VolumeSpec.model_validate({"name": "ckpt", "backend": "gcs"})


def test_a_checkpoint_claim_is_mounted_and_named_to_the_training_script() -> None:
    p = plan(job(checkpoint={"claim": "ckpt", "size": "1T"}, env={"OTHER": "1"}), pool())
    template = worker(p)
    assert {"name": "claim-ckpt", "mountPath": "/checkpoints"} in body(template)["volumeMounts"]
    assert {"name": "claim-ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}} in template["spec"]["volumes"]
    env = {e["name"]: e["value"] for e in body(template)["env"]}
    assert env["CHECKPOINT_DIR"] == "/checkpoints/train"
    overridden = plan(job(checkpoint={"claim": "ckpt"}, env={"CHECKPOINT_DIR": "/checkpoints/mine"}), pool())
    assert overridden.env["CHECKPOINT_DIR"] == "/checkpoints/mine", "the job's env has the last word"
    assert_valid(as_pod(template))


def test_a_pod_mounting_a_gcs_claim_gets_gkes_gcsfuse_sidecar() -> None:
    spec = job(volumes=[{"claim": "dataset", "mountPath": "/data", "readOnly": True}], checkpoint={"claim": "ckpt"})
    p = plan(spec, pool("tcpxo"), volumes=[GCS_DATA, GCS_CHECKPOINTS])
    assert [v.name for v in p.volumes] == ["dataset", "ckpt"]
    annotations = worker(p)["metadata"]["annotations"]
    assert annotations["gke-gcsfuse/volumes"] == "true"
    assert annotations["gke-gcsfuse/memory-limit"] == "0"
    assert annotations["gke-gcsfuse/ephemeral-storage-request"] == "102400Mi", "the data volume's read cache"
    assert_valid(as_pod(worker(p)))


def test_only_the_jobs_own_claims_in_its_namespace_count() -> None:
    elsewhere = VolumeSpec.model_validate({"name": "dataset", "namespace": "research", "backend": "gcs"})
    p = plan(job(volumes=[{"claim": "dataset", "mountPath": "/data"}]), pool("tcpxo"), volumes=[elsewhere])
    assert p.volumes == ()
    assert "gke-gcsfuse/volumes" not in worker(p)["metadata"].get("annotations", {})
    unmounted = plan(job(), pool("tcpxo"), volumes=[GCS_DATA])
    assert "gke-gcsfuse/volumes" not in worker(unmounted)["metadata"].get("annotations", {})
