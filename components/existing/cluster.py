"""ExistingCluster: a Kubernetes provider for a cluster that already exists, from a kubeconfig or context."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.models import ExistingClusterSpec, NodePoolSpec
from components.pool import Pool

TOKEN = "gpu-training:index:ExistingCluster"


class ExistingCluster(pulumi.ComponentResource):
    """An existing cluster: its provider; its pools are found by their node selectors, not created."""

    kubeconfig: pulumi.Output[str]
    """The kubeconfig given in config (secret), or empty for the ambient one."""

    def __init__(
        self,
        name: str,
        spec: ExistingClusterSpec,
        pools: list[tuple[NodePoolSpec, Pool]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """A provider for the cluster: its kubeconfig (kept secret) or a context of the ambient one."""
        super().__init__(TOKEN, name, {}, opts)
        self.kubeconfig = pulumi.Output.secret(spec.kubeconfig or "")
        self.provider = k8s.Provider(
            f"{name}-kubernetes",
            kubeconfig=self.kubeconfig if spec.kubeconfig else None,
            context=spec.context,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.node_pools: dict[str, pulumi.Resource] = {}
        self.storage_objects: list[pulumi.Resource] = []
        self.register_outputs({"kubeconfig": self.kubeconfig})
