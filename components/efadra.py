"""EFA through DRA on EKS: the claim a worker makes for its node's EFA devices through the AWS EFA DRA driver."""

from __future__ import annotations

from typing import Any

from components import dra
from components.pool import Pool

DEVICE_CLASS = "efa.networking.k8s.aws"
"""The DeviceClass the aws-dranet chart makes for EFA devices (aws/eks-charts stable/aws-dranet values.yaml,
deviceClass.name)."""
CLAIM = "efa"
"""The name of the claim in a worker pod and its container."""


def claim_template_name(pool: Pool) -> str:
    """The ResourceClaimTemplate through which a worker on an EFA-through-DRA pool claims its node's EFA devices."""
    return f"{pool.name}-efa"


def claim_template(pool: Pool, namespace: str) -> dict[str, Any]:
    """A ResourceClaimTemplate for every EFA device of a node of the pool (one worker per node takes them all)."""
    return dra.claim_template(claim_template_name(pool), namespace, CLAIM, DEVICE_CLASS, pool.efa_interfaces)
