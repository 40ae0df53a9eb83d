"""Valid variants of a shipped stack: its pools, jobs, launchers, names, counts and volumes varied within what the
stack offers, as a user would edit it. Most render; the test drops those render refuses."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.mutations import stack_keys

NAMES = st.from_regex(r"[a-z][a-z0-9]{0,14}(-[a-z0-9]{1,10}){0,2}", fullmatch=True)
"""Job names: DNS-1035 labels of up to 37 characters."""
POOL_NAMES = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?", fullmatch=True)
"""Pool names: DNS-1123 labels of up to 20 characters (a digit first too)."""
NAMESPACES = st.sampled_from(["research", "team-a", "1st-team"])
"""Namespaces a job may move to, which the stack then creates."""
LAUNCHERS = ("pytorch", "mpi", "tensorflow", "indexed")
LAUNCHER_ONLY = ("runtime", "deepspeed", "elastic", "maxRestarts", "restartPolicy")
"""Job keys that belong to one launcher, dropped when a variant changes it."""


@st.composite
def variants(draw: st.DrawFn, stack_file: Path) -> dict[str, Any]:
    """The stack's `gpu-training:` keys, edited: pools renamed and resized, jobs moved to other namespaces, jobs renamed, relaunched, resized, given volumes,
    shared memory and env, some copied."""
    raw = copy.deepcopy(stack_keys(stack_file))
    _rename_pools(draw, raw)
    pools = {p["name"]: p for p in raw.get("nodePools", [])}
    for pool in pools.values():
        if "maxNodes" in pool and draw(st.booleans()):
            pool["maxNodes"] = draw(st.integers(pool["maxNodes"], pool["maxNodes"] + 4))
    claims = [
        (v.get("namespace", "training"), v["name"], v.get("accessMode") == "ReadOnlyMany")
        for v in raw.get("storage", {}).get("volumes", [])
    ]
    launchers = LAUNCHERS + (("trainjob",) if raw.get("trainer", {}).get("enabled") else ())
    jobs = [j for j in raw.get("jobs", []) if isinstance(j, dict)]
    if jobs:
        jobs += [copy.deepcopy(j) for j in draw(st.lists(st.sampled_from(jobs), max_size=2))]
    names = draw(st.lists(NAMES, min_size=len(jobs), max_size=len(jobs), unique=True))
    for job, name in zip(jobs, names, strict=True):
        job["name"] = name
        pool = pools.get(job.get("nodePool", "")) or next(iter(pools.values()), {})
        launcher = draw(st.sampled_from(launchers))
        if launcher != job.get("launcher", "pytorch"):
            job["launcher"] = launcher
            for key in LAUNCHER_ONLY:
                job.pop(key, None)
        if draw(st.booleans()):
            job["nodes"] = draw(st.integers(1, pool.get("maxNodes") or 4))
            job.pop("elastic", None)
        if not job.get("volumes") and "checkpoint" not in job and draw(st.integers(0, 3)) == 0:
            job["namespace"] = draw(NAMESPACES)
        if draw(st.booleans()):
            job["shmSize"] = draw(st.sampled_from(["1Gi", "16Gi", "64Gi"]))
        if draw(st.booleans()):
            job["env"] = {**job.get("env", {}), "RUN_NAME": name, "WORLD_HINT": draw(st.integers(1, 64))}
        if draw(st.booleans()):
            job["backoffLimit"] = draw(st.integers(0, 10))
        if draw(st.booleans()):
            job["ttlSecondsAfterFinished"] = draw(st.integers(0, 86_400))
        mine = [(c, read_only) for ns, c, read_only in claims if ns == job.get("namespace", "training")]
        if mine and draw(st.booleans()):
            chosen = draw(st.lists(st.sampled_from(mine), unique=True, min_size=1))
            job["volumes"] = [{"claim": c, "mountPath": f"/mnt/{c}", "readOnly": read_only} for c, read_only in chosen]
    if jobs:
        raw["jobs"] = jobs
    for queue in raw.get("scheduler", {}).get("queues", []):
        if draw(st.booleans()):
            queue["gpus"] = draw(st.integers(queue.get("gpus", 0), queue.get("gpus", 0) * 4 + 8))
    return raw


def _rename_pools(draw: st.DrawFn, raw: dict[str, Any]) -> dict[str, str]:
    """Rename the stack's pools, and every job and queue naming them; old name -> new."""
    pools = raw.get("nodePools", [])
    if not pools or not draw(st.booleans()):
        return {}
    names = draw(st.lists(POOL_NAMES, min_size=len(pools), max_size=len(pools), unique=True))
    renamed = {pool["name"]: name for pool, name in zip(pools, names, strict=True)}
    for pool in pools:
        pool["name"] = renamed[pool["name"]]
        selector = pool.get("nodeSelector") or {}
        if "gpu-training/pool" in selector:
            selector["gpu-training/pool"] = pool["name"]
    for job in raw.get("jobs", []):
        if isinstance(job, dict) and job.get("nodePool") in renamed:
            job["nodePool"] = renamed[job["nodePool"]]
    for queue in raw.get("scheduler", {}).get("queues", []):
        if "pools" in queue:
            queue["pools"] = [renamed.get(p, p) for p in queue["pools"]]
    return renamed
