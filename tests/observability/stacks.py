"""Stacks the observability tests render: the repository's, and variants that reach every alert and panel."""

from __future__ import annotations

from components.stack import Stack
from tests.addons.stacks import stack_file

GKE_OPERATOR_POOL = {
    "name": "a3",
    "machineType": "a3-megagpu-8g",
    "maxNodes": 4,
    "zone": "us-central1-a",
    "placement": "compact",
    "capacity": {"type": "reservation", "reservationId": "a3-mega-training-reservation"},
    "gpuDriverVersion": "INSTALLATION_DISABLED",
}
"""gke's pool with the driver left to the GPU Operator."""


def gke_gpu_operator() -> Stack:
    """gke with the GPU Operator (and its DCGM exporter) on its pool instead of GKE's drivers."""
    return stack_file("gke", nodePools=[GKE_OPERATOR_POOL], gpuOperator={"enabled": True})


def stacks() -> dict[str, Stack]:
    """Stacks that reach every alert and panel: Volcano and Kueue, every provider, each repair agent or none, the
    GPU Operator or GKE's drivers."""
    return {
        "dev": stack_file("dev"),
        "prod": stack_file("prod"),
        "gke": stack_file("gke"),
        "gke-gpu-operator": gke_gpu_operator(),
        "dev-unrepaired": stack_file("dev", health={"repair": {"enabled": False}}),
    }
