"""Dependency lists that may include what a component creates later (kustomize objects, built at deploy time).

A component's children are not given its `depends_on` again: they wait for it through their parent. The SDK
registers a resource only once its parent is registered (`prepare_resource` awaits the parent's URN), and a
component is registered only once everything in its `depends_on` is (their URNs resolve when the engine has
created them). The engine counts a resource's parent among its dependencies when it orders deletes
(`DependencyGraph.DependenciesOf`, pulumi/pkg resource/graph/dependency_graph.go): a child goes before its parent,
the parent before what it depends on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import pulumi

Dependencies: TypeAlias = list[pulumi.Resource] | pulumi.Output[list[pulumi.Resource]]
"""What `ResourceOptions.depends_on` takes: resources, or an output resolving to them."""


def combine(*parts: Any) -> Dependencies:
    """One dependency list of resources, resource lists and outputs of resource lists."""
    flat: list[Any] = []
    for part in parts:
        if part is None:
            continue
        if isinstance(part, pulumi.Resource | pulumi.Output):
            flat.append(part)
        else:
            flat.extend(part)
    if not any(isinstance(p, pulumi.Output) for p in flat):
        return list(dict.fromkeys(flat))
    return pulumi.Output.all(
        *[p if isinstance(p, pulumi.Output) else pulumi.Output.from_input([p]) for p in flat]
    ).apply(_flatten)


def _flatten(groups: Sequence[Any]) -> list[pulumi.Resource]:
    out: list[pulumi.Resource] = []
    for group in groups:
        for resource in group if isinstance(group, list | tuple) else [group]:
            if resource not in out:
                out.append(resource)
    return out
