"""The training pods in PromQL: kube-state-metrics' label names, and the roles that hold GPUs in every job the stacks
render."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from components.allocatable import GPU_RESOURCE
from components.manifests.meta import ROLE_LABEL
from components.observability import pods
from components.render import render
from components.resolution import resolve_file
from tests.addons.stacks import stack_file
from tests.support.stacks import STACK_FILES


def test_kube_state_metrics_label_names() -> None:
    assert pods.ksm_label("app.kubernetes.io/instance") == "label_app_kubernetes_io_instance"
    assert pods.ROLE == "label_gpu_training_role" and pods.POOL == "label_gpu_training_pool"
    assert pods.ALLOWLIST == "pods=[app.kubernetes.io/instance,gpu-training/role,gpu-training/pool]"


def _templates(obj: Any) -> Iterator[dict[str, Any]]:
    """Every pod template inside an object (replica specs, job templates, runtimes)."""
    if isinstance(obj, dict):
        spec = obj.get("spec")
        if isinstance(spec, dict) and "containers" in spec and "metadata" in obj:
            yield obj
        for value in obj.values():
            yield from _templates(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _templates(item)


def _gpu_roles(objects) -> set[str]:
    roles = set()
    for obj in objects:
        for template in _templates(obj):
            limits = [c.get("resources", {}).get("limits", {}) for c in template["spec"]["containers"]]
            if any(GPU_RESOURCE in limit for limit in limits):
                roles.add(template["metadata"].get("labels", {}).get(ROLE_LABEL))
    return roles


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_training_pod_that_holds_gpus_has_a_role_the_alerts_watch(path) -> None:
    rendered = render(resolve_file(path))
    training = [o for w in rendered.workloads if not w.gate for o in w.objects]
    roles = _gpu_roles(training)
    assert roles <= set(pods.GPU_ROLES), roles


def test_the_roles_are_exactly_those_of_every_launcher_s_gpu_pods() -> None:
    launchers = ("pytorch", "mpi", "tensorflow", "indexed", "trainjob")
    jobs = [
        {"name": n, "launcher": n, "image": "r/x:1", "command": ["train.py"], "nodes": 2, "nodePool": "h100"}
        for n in launchers
    ]
    rendered = render(stack_file("dev", jobs=jobs))
    assert _gpu_roles(o for w in rendered.workloads if not w.gate for o in w.objects) == set(pods.GPU_ROLES)
    assert _gpu_roles(rendered.objects) == {*pods.GPU_ROLES, "fabric-check"}, "a fabric check is no training job"


def test_the_join_keeps_the_gpu_expression_whole() -> None:
    joined = pods.on_job_gpus("avg_over_time(X[5m]) < 1")
    assert joined.startswith("(avg_over_time(X[5m]) < 1) * on (exported_namespace, exported_pod) group_left")
    assert 'phase="Running"' in joined and 'label_gpu_training_role=~"master|worker|chief"' in joined
