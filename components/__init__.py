"""gpu-training: a GPU distributed-training platform on Kubernetes, as Pulumi components.

The pure core (models, catalog, fabric, manifests, rules) imports no Pulumi; `Platform`, `Fleet`, `TrainingJob` and
the other components load the Pulumi SDKs only when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.fleet import Fleet
    from components.kubernetes.trainingjob import TrainingJob
    from components.platform import Platform

__all__ = ["Fleet", "Platform", "TrainingJob"]


def __getattr__(name: str) -> Any:
    if name == "TrainingJob":
        from components.kubernetes.trainingjob import TrainingJob

        return TrainingJob
    if name == "Platform":
        from components.platform import Platform

        return Platform
    if name == "Fleet":
        from components.fleet import Fleet

        return Fleet
    raise AttributeError(f"module 'components' has no attribute {name!r}")
