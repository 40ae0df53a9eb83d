"""ClusterAddons: the Helm releases and remote installs of a stack's add-on plan, in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.addons.install import HelmRelease, RemoteInstall
from components.addons.plan import AddonPlan, Patch
from components.kubernetes.dependencies import Dependencies, combine
from components.kubernetes.objects import kube_object, logical_name

TOKEN = "gpu-training:index:ClusterAddons"


class ClusterAddons(pulumi.ComponentResource):
    """Every add-on of the plan, each waiting for the installs it needs, then the objects they serve."""

    def __init__(
        self,
        name: str,
        plan: AddonPlan,
        opts: pulumi.ResourceOptions | None = None,
        *,
        install: bool = True,
        prefix: str = "",
    ) -> None:
        """Install the plan's releases and remote installs, then create its objects (NicClusterPolicy, ...).

        With `install` false another tool installs them (`addons.install: false`): only the objects are created,
        and they wait for nothing here. `prefix` begins the name of each resource made here (and of each object a
        remote install makes).
        """
        super().__init__(TOKEN, name, {}, opts)
        self.installs: dict[str, pulumi.Resource] = {}
        self._ready: dict[str, Dependencies] = {}
        pending: list[HelmRelease | RemoteInstall] = [*plan.remotes, *plan.releases] if install else []
        while pending:
            ready = [i for i in pending if all(n in self.installs or n not in plan.names for n in i.needs)]
            if not ready:
                raise ValueError(f"add-ons wait for each other in a cycle: {[i.name for i in pending]}")
            for addon in ready:
                needs = combine(*(self._ready[n] for n in addon.needs if n in self._ready))
                child = pulumi.ResourceOptions(parent=self, depends_on=needs)
                if isinstance(addon, HelmRelease):
                    resource: pulumi.Resource = _release(addon, child, prefix)
                    self._ready[addon.name] = [resource]
                else:
                    resource = _remote(addon, plan.patches.get(addon.name), child, prefix)
                    # kustomize builds its objects at deploy time: waiting for the component alone
                    # would not wait for them, its `resources` output does.
                    ready = getattr(resource, "resources", None)
                    self._ready[addon.name] = (
                        ready.apply(lambda found: list((found or {}).values())) if ready is not None else [resource]
                    )
                self.installs[addon.name] = resource
                pending.remove(addon)
        self.objects = [
            kube_object(
                f"{prefix}{logical_name(obj)}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=self.waits_for(plan, obj)),
            )
            for obj in plan.objects
        ]
        self.register_outputs({"installs": sorted(self.installs)})

    def waits_for(self, plan: AddonPlan, obj: dict[str, Any]) -> Dependencies:
        """The install an object needs (for its CRD or webhook), as a dependency list."""
        return self.ready(plan.owner(obj))

    def ready(self, name: str | None) -> Dependencies:
        """What to wait for so that an install is in place (nothing when the plan has no such install)."""
        return self._ready.get(name or "", [])

    def everything(self) -> Dependencies:
        """What to wait for so that every install, and every object the add-ons serve, is in place."""
        return combine(*self._ready.values(), self.objects)


def _release(release: HelmRelease, opts: pulumi.ResourceOptions, prefix: str = "") -> k8s.helm.v3.Release:
    chart = release.chart
    return k8s.helm.v3.Release(
        f"{prefix}{release.name}",
        name=release.name,
        chart=chart.chart,
        version=chart.version,
        repository_opts={"repo": chart.repository} if chart.repository else None,
        namespace=release.namespace,
        create_namespace=True,
        values=release.values,
        opts=opts,
    )


def _remote(
    install: RemoteInstall, patch: Patch | None, opts: pulumi.ResourceOptions, prefix: str = ""
) -> pulumi.Resource:
    remote = install.remotes[0]
    if remote.kind == "kustomize":
        # kustomize v1 builds the overlay at deploy time and lets a transformation drop an object. Its objects are
        # named by kind, namespace and name alone, so a prefix goes before them; yaml v2 names them after itself.
        transformations = [_transformation(patch)] if patch else []
        return k8s.kustomize.Directory(
            f"{prefix}{install.name}",
            directory=remote.url,
            transformations=transformations,
            opts=opts,
            resource_prefix=prefix.rstrip("-") or None,
        )
    transforms = [_transform(patch)] if patch else []
    merged = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(transforms=transforms))
    if len(install.remotes) == 1:
        return k8s.yaml.v2.ConfigFile(f"{prefix}{install.name}", file=remote.url, opts=merged)
    return k8s.yaml.v2.ConfigGroup(f"{prefix}{install.name}", files=[r.url for r in install.remotes], opts=merged)


def _transformation(patch: Patch) -> Callable[[dict[str, Any], pulumi.ResourceOptions], None]:
    def transformation(obj: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        patched = patch(obj)
        if patched is None:  # an empty List is how a kustomize transformation omits an object
            obj.clear()
            obj.update({"apiVersion": "v1", "kind": "List", "items": []})

    return transformation


def _transform(patch: Patch) -> Callable[[pulumi.ResourceTransformArgs], pulumi.ResourceTransformResult | None]:
    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if not args.type_.startswith("kubernetes:") or "kind" not in args.props:
            return None
        patched = patch(dict(args.props))
        return pulumi.ResourceTransformResult(props=patched or args.props, opts=args.opts)

    return transform
