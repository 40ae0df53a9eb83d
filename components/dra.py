"""Dynamic resource allocation: the claim templates through which a worker takes devices a DRA driver publishes."""

from __future__ import annotations

from typing import Any

API_VERSION = "resource.k8s.io/v1"


def claim_template(name: str, namespace: str, request: str, device_class: str, count: int) -> dict[str, Any]:
    """A ResourceClaimTemplate whose one request takes exactly `count` devices of `device_class` (a worker that
    takes every such device of its node)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": request,
                            "exactly": {
                                "deviceClassName": device_class,
                                "allocationMode": "ExactCount",
                                "count": count,
                            },
                        }
                    ]
                }
            }
        },
    }
