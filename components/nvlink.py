"""Rack-scale NVLink (GB200 / GB300 NVL72): the NVLink domain a multi-node job shares, and what its pods need.

Pods on different machines of one NVLink domain reach each other's GPU memory only through an IMEX channel, which
the NVIDIA DRA driver hands out per ComputeDomain: each job gets its own ComputeDomain, and each of its pods claims
the domain's channel. Without it NCCL's NVLS setup fails ("Cuda failure 801", nebius/k8s-training PR #1137), and
pods in different NVLink domains can only talk over the network. Sources: kubernetes-sigs/dra-driver-nvidia-gpu
v0.5.0 (api/nvidia.com/resource/v1beta1/computedomain.go, templates/compute-domain-workload-claim-template.tmpl.yaml,
the chart's deviceclass-compute-domain-default-channel.yaml); GoogleCloudPlatform/cluster-toolkit v1.95
examples/gke-a4x/nccl-jobset-example.yaml (the pod's `resourceClaims` and container `resources.claims`).
"""

from __future__ import annotations

from typing import Any

from components import catalog
from components.pool import Pool
from components.topology import CLIQUE_LABEL, NVLINK_LEVEL

__all__ = ["CLIQUE_LABEL", "NVLINK_LEVEL"]

API_VERSION = "resource.nvidia.com/v1beta1"
KIND = "ComputeDomain"
DOMAIN_LABEL = "gpu-training/compute-domain"
"""The label of a job's GPU pods naming its ComputeDomain: what keeps them together in one NVLink domain."""
CHANNEL_CLAIM = "compute-domain-channel"
"""The name under which a pod claims its ComputeDomain's IMEX channel."""
CHANNEL_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
"""The DeviceClass of a workload's IMEX channel (the driver's `compute-domain.nvidia.com` devices of type channel,
id 0); the ComputeDomain's claim template requests it."""
DRIVER = "compute-domain.nvidia.com"
"""The DRA driver name that publishes the channel devices."""
# NCCL on multi-node NVLink (GB200 MNNVL from NCCL 2.25.2: NVIDIA, "Multi-Node Tuning Guide: NCCL"). NVIDIA/nccl
# src/init.cc: NCCL_MNNVL_ENABLE defaults to 2 (on when the ranks share a clique); at 1, a communicator across nodes
# whose GPUs cannot do MNNVL fails with "MNNVL is not supported on this system" instead of quietly running over the
# network. checkMNNVL there needs cuMem allocations, which some framework images turn off (NCCL_CUMEM_ENABLE=0), so
# that is set back on.
ENV = {"NCCL_MNNVL_ENABLE": "1", "NCCL_CUMEM_ENABLE": "1", "NCCL_NVLS_ENABLE": "1"}
SHARE = 0.6
"""A derived NVLink floor: this share of one direction of the GPU's NVLink bandwidth. A healthy 8-GPU NVSwitch node
reaches about 0.8 of it at 8G messages (H100: 360-480 GB/s of 450), as 2 GB300 nodes over multi-node NVLink do
(841 GB/s of 900 with NVLS, NVIDIA/aicr#1256); one link down, or a fallback to the network, falls far below."""
NVLS_LINE = "NVLS comm"
"""What NCCL logs (NCCL_DEBUG=INFO, subsystem INIT) once a communicator has set NVLink SHARP up: the proof that
it runs over NVLink across the nodes (NVIDIA AICR's NVLS validator reads the same line)."""
MIN_NCCL = "2.25.2"
"""The first NCCL release with GB200 multi-node NVLink (the same tuning guide)."""


READY = {"pulumi.com/waitFor": "jsonpath={.status.status}"}
"""What `pulumi up` waits for on a ComputeDomain: a status, which the controller writes once the channel's claim
template exists (cmd/compute-domain-controller computedomain.go)."""


def channel_template(job: str) -> str:
    """The ResourceClaimTemplate the job's ComputeDomain makes for its channel."""
    return f"{job}-channel"


def needs_domain(pool: Pool, most_nodes: int) -> bool:
    """Whether a job of up to `most_nodes` nodes on the pool shares a ComputeDomain: several nodes of a
    rack-scale NVLink pool."""
    return pool.nvlink_domain_nodes > 0 and most_nodes > 1


def compute_domain(name: str, namespace: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """The job's ComputeDomain: the IMEX domain its pods join, and the template of their channel claims.

    `numNodes` stays unset (0): with the driver's default IMEXDaemonsWithDNSNames the field is deprecated, and a
    pod starts as soon as its node's IMEX daemon does.
    """
    # The controller makes the channel's claim template, then writes the domain's status: `pulumi up` waits for
    # that before it creates the job, since Kueue v0.19 holds for good a workload whose claim template it cannot
    # read yet (its DRA reconcile marks it inadmissible, not requeued; found in simulate).
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "annotations": dict(READY)}
    if labels:
        meta["labels"] = dict(labels)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": meta,
        "spec": {"channel": {"resourceClaimTemplate": {"name": channel_template(name)}}},
    }


def channel_claim(job: str) -> dict[str, str]:
    """The pod's claim of its job's IMEX channel."""
    return {"name": CHANNEL_CLAIM, "resourceClaimTemplateName": channel_template(job)}


def same_domain_affinity(selector: dict[str, str]) -> dict[str, Any]:
    """A pod affinity that keeps every pod matching `selector` in one NVLink domain (the DRA driver's own
    multi-node examples place pods this way); the first pod goes where it fits, the rest follow."""
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": dict(selector)}, "topologyKey": CLIQUE_LABEL}
            ]
        }
    }


def pool_line(pool: Pool) -> str:
    """What render says of a rack-scale pool's NVLink: the domain's size, and how jobs share it."""
    gpus = pool.nvlink_domain_nodes * pool.gpus_per_node
    env = ", ".join(f"{name}={value}" for name, value in ENV.items())
    return (
        f"domains of {pool.nvlink_domain_nodes} nodes ({gpus} GPUs) by {CLIQUE_LABEL}; a multi-node job gets its "
        f"own ComputeDomain (IMEX channel through the NVIDIA DRA driver) and {env}; needs NCCL >= {MIN_NCCL}"
    )


def floor(pool: Pool) -> tuple[float, str]:
    """The bus bandwidth NVLink alone should give across the pool's GPUs, in GB/s, and how it is derived; 0 when the
    GPU's NVLink is unknown."""
    both = catalog.nvlink_gbs(pool.gpu_model)
    if not both:
        return 0, "no NVLink known for this GPU"
    one_way = both / 2
    return float(round(one_way * SHARE)), f"{SHARE:.0%} of {pool.gpu_model}'s {one_way:g} GB/s NVLink"
