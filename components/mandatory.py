"""What `check` blocks as mandatory, refused before render writes a file: the policy rules run over the objects the
stack makes (as `check --config` reviews them: default policy config, the stack's scheduler and cluster), and each
mandatory finding becomes a config issue at the key of the job or pool that made the object."""

from __future__ import annotations

from typing import Any

from components import repair
from components.errors import Issue
from components.render import Rendered, render
from components.rules import RULES, review
from components.rules.config import settings
from components.rules.rule import CLUSTER_OF_PROVIDER
from components.rules.subjects import from_objects, from_pools, object_key
from components.stack import Stack


def owners(rendered: Rendered) -> dict[str, str]:
    """The config key of each object's job or pool, by object key (`Kind/namespace/name`) and pool subject."""

    config = rendered.stack.config
    pools = {p.name: i for i, p in enumerate(config.node_pools)}
    jobs = {(j.namespace, j.name): i for i, j in enumerate(config.jobs)}
    found: dict[str, str] = {f"NodePool/{name}": f"nodePools[{i}]" for name, i in pools.items()}
    for index, volume in enumerate(config.storage.volumes):
        found[f"PersistentVolumeClaim/{volume.namespace}/{volume.name}"] = f"storage.volumes[{index}]"
    for workload in rendered.workloads:
        plan = workload.plan
        if workload.gate:
            key = f"nodePools[{pools[plan.pool.name]}].fabricCheck" if plan.pool.name in pools else ""
        else:
            index = jobs.get((plan.namespace, plan.name))
            key = f"jobs[{index}]" if index is not None else ""
        for obj in workload.objects:
            found.setdefault(object_key(obj), key)
    return found


def findings_of(rendered: Rendered) -> list[Any]:
    """The mandatory findings of every rule over the rendered objects and the stack's pools."""
    stack = rendered.stack
    subjects = from_objects(rendered.objects) + from_pools(
        stack.pools.values(), repair.by_pool(stack.config, stack.pools.values())
    )
    known = {"gang_scheduler": stack.scheduler, "cluster": CLUSTER_OF_PROVIDER[stack.config.cluster.provider]}
    chosen = settings(None, **known)
    unread: list[str] = []  # an object a rule cannot read is `check`'s to report, not a refusal
    # Only the mandatory rules run: the advisory ones (half of them) cannot refuse, and cost a render their time.
    rules = [r for r in RULES if chosen.enforcement.get(r.id, r.enforcement) == "mandatory"]
    with review.review():
        found = [f for rule in rules for f in rule.run(subjects, chosen, unread)]
    return [f for f in found if f.enforcement == "mandatory"]


def issues(stack: Stack) -> list[Issue]:
    """Each mandatory finding on what the stack renders to, at its job's or pool's key."""
    rendered = render(stack)
    keys = owners(rendered)
    found: list[Issue] = []
    seen: set[tuple[str, str, str]] = set()
    for f in findings_of(rendered):
        # One line per mistake: the same finding on each role of a job ("Master/pytorch: ...", "Worker/pytorch:
        # ...") differs in its first word only.
        once = (f.rule, f.subject, f.message.partition(" ")[2])
        if once in seen:
            continue
        seen.add(once)
        found.append(
            Issue(
                keys.get(f.subject, ""),
                f"{f.subject}: {f.message.rstrip('.')} (check's mandatory rule {f.rule}): {f.fix}",
            )
        )
    return found
