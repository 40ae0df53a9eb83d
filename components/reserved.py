"""Namespaces the stack must not own: Kubernetes' own, `default`, and those its add-ons install into.

The stack makes a Namespace for every namespace it uses (components/manifests/platform.py), so a job, network,
volume or queue there makes the stack its owner: `pulumi up` fails on a namespace that exists already, and `pulumi
destroy` would delete it with everything in it (a Helm release's). Kubernetes reserves the `kube-` prefix for its
own namespaces (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces, "Avoid creating namespaces with
the prefix kube-"; kube-system, kube-public and kube-node-lease, k8s.io/api core/v1 types.go), and its API server
refuses to delete `default`, kube-system and kube-public (k8s.io/apiserver v0.35.4
pkg/admission/plugin/namespace/lifecycle/admission.go:57). `default` is refused too: every workload that names no
namespace lands there, and would come under the stack's GPU quota and LocalQueues, and a destroy would try to
delete it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from components.addons.plan import plan as addon_plan
from components.errors import Issue
from components.models import StackConfig

if TYPE_CHECKING:
    from components.addons.plan import AddonPlan
    from components.stack import Stack

KUBERNETES_PREFIX = "kube-"
DEFAULT = "default"


def stack_namespaces(config: StackConfig) -> list[tuple[str, str]]:
    """Every (config path, namespace) the stack uses, in the order stack.namespaces lists them."""
    found = [(f"namespaces[{i}].name", n.name) for i, n in enumerate(config.namespaces)]
    found += [(f"network.networks[{i}].namespace", n.namespace) for i, n in enumerate(config.network.networks)]
    found += [
        (f"nodePools[{i}].rails.namespace", p.rails.namespace)
        for i, p in enumerate(config.node_pools)
        if p.rails is not None and p.rail_networks()
    ]
    found += [(f"storage.volumes[{i}].namespace", v.namespace) for i, v in enumerate(config.storage.volumes)]
    found += [(f"jobs[{i}].namespace", j.namespace) for i, j in enumerate(config.jobs)]
    found += [
        (f"scheduler.queues[{i}].namespaces[{k}]", name)
        for i, q in enumerate(config.scheduler.queues)
        for k, name in enumerate(q.namespaces)
    ]
    return found


def addon_namespaces(addons: AddonPlan) -> dict[str, str]:
    """Each namespace an install of the plan puts its objects in, and that install."""
    owners = {r.namespace: r.name for r in addons.releases}
    owners.update({remote.namespace: r.name for r in addons.remotes for remote in r.remotes if remote.namespace})
    return owners


def namespace_issues(used: Iterable[tuple[str, str]], owners: dict[str, str]) -> list[Issue]:
    """A namespace the stack would own that Kubernetes or an add-on does."""
    issues: list[Issue] = []
    fix = "use a namespace of the stack's own, such as training (the default)"
    for path, name in used:
        if name.startswith(KUBERNETES_PREFIX):
            issues.append(Issue(path, f"'{name}' is Kubernetes' own (it reserves the kube- prefix): {fix}"))
        elif name == DEFAULT:
            issues.append(
                Issue(path, f"'default' is where every workload that names no namespace lands, not the stack's: {fix}")
            )
        elif name in owners:
            issues.append(Issue(path, f"'{name}' is where the add-on {owners[name]} installs, not the stack's: {fix}"))
    return issues


def issues(stack: Stack) -> list[Issue]:
    """The stack's namespaces that Kubernetes or one of the stack's add-ons owns."""
    return namespace_issues(stack_namespaces(stack.config), addon_namespaces(addon_plan(stack)))
