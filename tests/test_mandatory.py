"""What `check` blocks as mandatory, render refuses first: every mandatory rule is walked, and a stack that trips it
is refused at its file, line and key (by the rule itself, or by the render-time check that states its verdict at the
config key); a rule no stack can trip says why."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.errors import ConfigError
from components.resolution import resolve_file
from components.rules import RULES
from tests.support.refusals import refusal, write_stack
from tests.test_config import stack

AWS: dict[str, Any] = {
    "cluster": {"provider": "aws", "name": "train", "region": "us-east-1"},
    "nodePools": [{"name": "p5", "instanceType": "p5.48xlarge", "zone": "us-east-1a"}],
    "jobs": [
        {"name": "llama-finetune", "image": "registry.example.com/training:v2.0", "command": ["train.py"], "nodes": 2}
    ],
}
GB200: dict[str, Any] = {
    "cluster": {"provider": "existing", "name": "train"},
    "nodePools": [
        {
            "name": "gb200",
            "gpusPerNode": 4,
            "gpuModel": "NVIDIA GB200",
            "maxNodes": 36,
            "nvlinkDomainNodes": 18,
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"},
        }
    ],
    "jobs": [{"name": "big", "image": "registry.example.com/training:v2.0", "command": ["train.py"], "nodes": 20}],
}


def _aws(pool: dict[str, Any] | None = None, **job: Any) -> dict[str, Any]:
    raw = copy.deepcopy(AWS)
    raw["nodePools"][0].update(pool or {})
    raw["jobs"][0].update(job)
    return raw


def _rwo_checkpoint() -> dict[str, Any]:
    raw = stack(jobs__0__checkpoint={"claim": "training-checkpoints"})
    raw["storage"]["volumes"][0]["accessMode"] = "ReadWriteOnce"
    return raw


def _rdma_on_tcp() -> dict[str, Any]:
    raw = stack(jobs__0__env={"NCCL_IB_DISABLE": "0"})
    raw["nodePools"][0]["fabric"] = "tcp"
    del raw["nodePools"][0]["networks"]
    return raw


RULE = "check's mandatory rule"
TRIPS: dict[str, tuple[Callable[[], dict[str, Any]], str, str]] = {
    # rule: (a stack that trips it, the key refused, what the refusal says)
    "env-references": (lambda: stack(jobs__0__env={"DATA": "$HOME/data"}), "jobs[0]", f"{RULE} env-references"),
    "checkpoint-path": (
        lambda: stack(jobs__0__command=["train.py", "--save", "/ckpt"]),
        "jobs[0]",
        f"{RULE} checkpoint-path",
    ),
    "processes-per-node": (
        lambda: stack(jobs__0__env={"PET_NPROC_PER_NODE": "16"}),
        "jobs[0]",
        f"{RULE} processes-per-node",
    ),
    "node-count": (lambda: stack(jobs__0__env={"PET_NNODES": "5"}), "jobs[0]", f"{RULE} node-count"),
    "rdma-devices": (_rdma_on_tcp, "jobs[0]", f"{RULE} rdma-devices"),
    "fabric-attached": (lambda: _aws(env={"NCCL_NET": "Socket"}), "jobs[0]", f"{RULE} fabric-attached"),
    "gpu-pool-taints": (lambda: _aws({"taints": []}), "nodePools[0]", f"{RULE} gpu-pool-taints"),
    "unverified-nodes": (
        # Trainer off: its pool runtimes would be refused first, at the pool.
        lambda: stack(
            trainer={"enabled": False},
            nodePools__0__taints=[{"key": "gpu-training/node-check-failed", "value": "true"}],
        ),
        "jobs[0]",
        f"{RULE} unverified-nodes",
    ),
    # Refused before the objects are made, at the key the rule's verdict is about.
    "checkpoint-rwx": (_rwo_checkpoint, "jobs[0].checkpoint.claim", "is ReadWriteOnce"),
    "pinned-images": (
        lambda: stack(jobs__0__image="registry.example.com/training:${TAG}"),
        "jobs[0].image",
        "malformed tag '${TAG}'",
    ),
    "shared-memory": (lambda: stack(jobs__0__shmSize="64Mi"), "jobs[0].shmSize", "below the 1Gi a multi-node job"),
    "nccl-socket-interface": (
        lambda: stack(jobs__0__nccl={"socketIfname": "eth0"}),
        "jobs[0].nccl.socketIfname",
        "keeps NCCL's bootstrap on eth0",
    ),
    "nvlink-domain-size": (lambda: copy.deepcopy(GB200), "jobs[0].nodes", "one NVLink domain of pool 'gb200'"),
    "nvlink-karpenter": (
        lambda: _aws({"instanceType": "p6e-gb200.36xlarge", "provisioner": "karpenter"}),
        "nodePools[0].provisioner",
        "Karpenter (like EKS Auto Mode) does not support DRA",
    ),
}
UNREACHABLE = {
    "literal-credentials": "render refuses a plain credential before it builds an object (components/plaintext.py,"
    " tests/test_plaintext.py), and a Pulumi secret reaches the pods only by secretKeyRef",
    "gpu-placement": "every GPU pod render makes tolerates its pool's taints (manifests/pod.py tolerations)",
    "nvlink-compute-domain": "every job spanning machines of an NVLink pool claims its ComputeDomain's channel",
    "gpu-requests-equal-limits": "render sets a GPU pod's requests and limits from one figure",
    "gang-scheduling": "every multi-node job gets its stack's scheduler's gang (manifests/gang.py)",
    "privileged-containers": "render runs privileged containers only in the node agents' exempt namespaces",
    "duplicate-keys": "render writes objects from mappings, which cannot hold a key twice",
    "storage-retained": "its defect is an unprotected cloud FileSystem, which a preview shows and render does not make"
    " (on the volumes and classes render makes, it gives advice)",
}


def test_every_mandatory_rule_is_walked() -> None:
    mandatory = {r.id for r in RULES if r.enforcement == "mandatory"}
    assert set(TRIPS) | set(UNREACHABLE) == mandatory
    assert not set(TRIPS) & set(UNREACHABLE)


@pytest.mark.parametrize("rule", sorted(TRIPS))
def test_render_refuses_a_stack_that_trips_a_mandatory_rule(tmp_path: Path, rule: str) -> None:
    make, key, says = TRIPS[rule]
    issue, line = refusal(tmp_path, make())
    assert issue.path == key
    assert says in issue.message
    assert line.strip(), "the refusal names a line of the stack file"


def test_one_mistake_is_one_line_though_every_role_of_the_job_has_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_file(write_stack(tmp_path, stack(jobs__0__env={"DATA": "$HOME/data"})))
    assert len(caught.value.issues) == 1, str(caught.value)
