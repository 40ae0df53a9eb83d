"""PlatformObjects: the namespaces, networks, storage and queues a stack declares, as a component."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi

from components.kubernetes.dependencies import Dependencies, combine
from components.kubernetes.objects import kube_object, logical_name
from components.manifests import platform
from components.manifests.meta import key
from components.manifests.plan import JobPlan
from components.manifests.references import references
from components.stack import Stack

TOKEN = "gpu-training:index:PlatformObjects"
# Kinds that hold or lead to data: deleting them from the stack must never delete the data.
_KEEP = {"PersistentVolumeClaim", "PersistentVolume", "StorageClass"}
# Kinds whose deletion takes an explicit unprotect: a claim, and the volume of a named bucket.
_PROTECT = {"PersistentVolumeClaim", "PersistentVolume"}


class PlatformObjects(pulumi.ComponentResource):
    """Namespaces (with GPU quotas), NetworkAttachmentDefinitions, storage classes, named buckets' volumes and
    claims, queues."""

    objects: pulumi.Output[list[str]]
    """The objects created, as Kind/namespace/name."""

    def __init__(
        self,
        name: str,
        stack: Stack,
        opts: pulumi.ResourceOptions | None = None,
        *,
        needs: Callable[[dict[str, Any]], Dependencies] | None = None,
        prefix: str = "",
    ) -> None:
        """Create the stack's plain objects; claims are protected and kept when removed from the stack.

        `needs` gives the installs an object waits for (the CRDs of NADs and queues); `prefix` begins each object's
        resource name.
        """
        super().__init__(TOKEN, name, {}, opts)
        self._needs = needs or (lambda obj: [])
        manifests = platform.objects(stack)
        holding = {v.namespace for v in stack.config.storage.volumes}
        namespaces: dict[str, pulumi.Resource] = {}
        self.resources: dict[str, pulumi.Resource] = {}
        for obj in manifests:
            self.resources[key(obj)] = resource = kube_object(
                f"{prefix}{logical_name(obj)}", obj, self._options(obj, holding, namespaces)
            )
            if obj["kind"] == "Namespace":
                namespaces[obj["metadata"]["name"]] = resource
        self.objects = pulumi.Output.from_input([key(o) for o in manifests])
        self.register_outputs({"objects": self.objects})

    def uses(self, plan: JobPlan) -> list[pulumi.Resource]:
        """The objects a job uses (its namespace, claims, NADs, queue, priority class) that this made."""
        return [self.resources[k] for k in references(plan) if k in self.resources]

    def _options(
        self, obj: dict[str, Any], holding: set[str], namespaces: dict[str, pulumi.Resource]
    ) -> pulumi.ResourceOptions:
        kind, meta = obj["kind"], obj["metadata"]
        namespace = namespaces.get(meta.get("namespace", ""))
        depends = combine(namespace, self._needs(obj))
        keep = kind in _KEEP or (kind == "Namespace" and meta["name"] in holding)
        return pulumi.ResourceOptions(
            parent=self,
            depends_on=depends,
            retain_on_delete=keep or None,
            protect=(kind in _PROTECT) or None,
        )
