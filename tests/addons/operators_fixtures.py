"""What the Training Operator's overlay builds to, in the shape the kustomize invoke returns."""

from __future__ import annotations

from typing import Any

TRAINING_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": "kubeflow.org"},
    }
    for name in ("mpijobs.kubeflow.org", "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org")
] + [
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "training-operator", "namespace": "kubeflow"},
        "spec": {"template": {"spec": {"containers": [{"name": "training-operator", "command": ["/manager"]}]}}},
    },
]
