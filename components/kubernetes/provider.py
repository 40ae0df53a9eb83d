"""The Kubernetes provider of an existing cluster, from its kubeconfig or context."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.models import ExistingClusterSpec


def existing_cluster_provider(spec: ExistingClusterSpec, opts: pulumi.ResourceOptions | None = None) -> k8s.Provider:
    """A provider for an existing cluster: its kubeconfig (kept secret) or a context of the ambient one."""
    kubeconfig = pulumi.Output.secret(spec.kubeconfig) if spec.kubeconfig else None
    return k8s.Provider(
        f"{spec.name}-kubernetes",
        kubeconfig=kubeconfig,
        context=spec.context,
        enable_server_side_apply=True,
        opts=opts,
    )
