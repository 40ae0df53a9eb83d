"""torchrun flags, derived from the job's nodes, GPUs and rendezvous."""

from __future__ import annotations

from components.manifests.plan import JobPlan


def args(plan: JobPlan, *, rdzv_endpoint: str, node_rank: str | None = None) -> list[str]:
    """torchrun's flags followed by the training program."""
    elastic = plan.spec.elastic
    nnodes = f"{elastic.min_nodes}:{elastic.max_nodes}" if elastic else str(plan.nodes)
    flags = [f"--nnodes={nnodes}", f"--nproc_per_node={plan.gpus_per_node}"]
    if node_rank is not None:
        flags.append(f"--node_rank={node_rank}")
    # Restarts in place: a transient fault (an NCCL timeout, a lost link) reruns every rank on the same
    # pods, from the last checkpoint, without rescheduling; the pods fail only when they run out.
    flags += [
        "--rdzv_backend=c10d",
        f"--rdzv_endpoint={rdzv_endpoint}",
        f"--max_restarts={plan.spec.in_place_restarts}",
    ]
    return [*flags, *plan.program]
