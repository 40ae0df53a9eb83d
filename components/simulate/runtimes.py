"""Stand-ins for the RuntimeClass the GPU Operator makes, which the node check's pods name.

The GPU Operator's toolkit creates the RuntimeClass `nvidia` (its chart's operator.runtimeClass) once it has set
up the node's container runtime; the API server refuses a pod that names a RuntimeClass that does not exist
(kubernetes plugin/pkg/admission/runtimeclass). The operator does not run here, so the simulation makes the
RuntimeClass it would, with its handler, for the stacks that run it.
"""

from __future__ import annotations

from typing import Any

from components.nodecheck import RUNTIME_CLASS
from components.render import Rendered

STAND_IN = "gpu-training/stand-in"
REASON = "the GPU Operator's toolkit makes this RuntimeClass on a cluster; the operator does not run in simulate"


def named(objects: list[dict[str, Any]]) -> set[str]:
    """The RuntimeClasses the pod templates of these objects name."""
    found = set()
    for obj in objects:
        spec = obj.get("spec", {}).get("template", {}).get("spec", {})
        if name := spec.get("runtimeClassName"):
            found.add(name)
    return found


def stand_ins(rendered: Rendered) -> list[dict[str, Any]]:
    """The GPU Operator's RuntimeClass, when the stack runs the operator and its objects name it."""
    if not rendered.stack.config.runs_gpu_operator or RUNTIME_CLASS not in named(list(rendered.objects)):
        return []
    return [
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": RUNTIME_CLASS, "annotations": {STAND_IN: REASON}},
            "handler": RUNTIME_CLASS,
        }
    ]
