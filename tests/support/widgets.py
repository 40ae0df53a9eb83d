"""A custom resource definition of our own (example.com's Widget), for tests that install or change a CRD."""

from __future__ import annotations

from typing import Any


def widget_crd(description: str = "a widget") -> dict[str, Any]:
    """The CRD of example.com/v1 Widget, its schema described as `description` (change it to change the CRD)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "description": description}},
                }
            ],
        },
    }
