"""Everything a stack installs on its cluster, and which install each object waits for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.addons import (
    autoscaler,
    dra_driver,
    gpu_operator,
    gpudirect,
    karpenter,
    mirror,
    monitoring,
    network,
    nvsentinel,
    operators,
    scheduler,
    storage,
    trainer,
)
from components.addons.install import HelmRelease, RemoteInstall
from components.addons.network import Patch
from components.images import mirror_objects
from components.memo import per_object
from components.observability import objects as observability
from components.observability import pack as packs
from components.stack import Stack

# The install whose CRDs (or webhooks) an API group's objects need.
_GROUP_OWNERS = {
    "k8s.cni.cncf.io": network.MULTUS_NAME,
    "mellanox.com": network.NETWORK_OPERATOR_NAME,
    "sriovnetwork.openshift.io": network.SRIOV_NAME,
    "scheduling.volcano.sh": scheduler.VOLCANO_NAME,
    "batch.volcano.sh": scheduler.VOLCANO_NAME,
    "kueue.x-k8s.io": scheduler.KUEUE_NAME,
    "trainer.kubeflow.org": trainer.NAME,
    "jobset.x-k8s.io": trainer.NAME,
    "nvidia.com": gpu_operator.NAME,
    "resource.nvidia.com": dra_driver.NAME,
    "karpenter.sh": karpenter.NAME,
    "karpenter.k8s.aws": karpenter.NAME,
    "monitoring.coreos.com": monitoring.NAME,
}
_KIND_OWNERS = {
    ("kubeflow.org/v1", "PyTorchJob"): operators.TRAINING_NAME,
    ("kubeflow.org/v1", "TFJob"): operators.TRAINING_NAME,
    ("kubeflow.org/v2beta1", "MPIJob"): operators.MPI_NAME,
}


@dataclass(frozen=True, slots=True)
class AddonPlan:
    """The releases and remote installs of a stack, in install order, and the objects that follow them."""

    releases: tuple[HelmRelease, ...]
    remotes: tuple[RemoteInstall, ...]
    objects: tuple[dict[str, Any], ...]
    patches: dict[str, Patch] = field(default_factory=dict)
    """Per remote install, the function applied to each upstream object (None drops it)."""
    namespaces: dict[str, str] = field(default_factory=dict)
    """Namespaces an install creates that objects of the plan go to, and that install (kube-prometheus-stack's)."""
    unmirrored: dict[str, str] = field(default_factory=dict)
    """With a registry mirror: the releases whose images it does not reach, and why."""

    @property
    def names(self) -> set[str]:
        """Every install's name."""
        return {r.name for r in self.releases} | {r.name for r in self.remotes}

    def owner(self, obj: dict[str, Any]) -> str | None:
        """The install an object must wait for (its CRD or webhook), if this stack installs it; else the release that
        makes the object's namespace (the dashboards' ConfigMaps in kube-prometheus-stack's)."""
        group = obj["apiVersion"].rpartition("/")[0]
        name = _KIND_OWNERS.get((obj["apiVersion"], obj["kind"])) or _GROUP_OWNERS.get(group)
        if name in self.names:
            return name
        name = self.namespaces.get(obj.get("metadata", {}).get("namespace", ""))
        return name if name in self.names else None


def plan(stack: Stack, *, efs_role_arn: Any = None) -> AddonPlan:
    """What the stack installs: the GPU Operator, networking, operators, scheduler, Trainer and CSI drivers. The
    plan is shared: callers must not change it."""
    return _offline(stack) if efs_role_arn is None else _plan(stack, efs_role_arn)


@per_object
def _offline(stack: Stack) -> AddonPlan:
    # Resolving a stack file plans its add-ons three times (what their DaemonSets leave of a node, their
    # namespaces, the render the mandatory rules read): a fifth of a small stack's render, so once per stack.
    return _plan(stack, None)


def _plan(stack: Stack, efs_role_arn: Any) -> AddonPlan:
    pack = packs.resolve(stack.config)
    releases = [
        # First: the GPU Operator and Kueue make ServiceMonitors, whose kind it brings.
        monitoring.release(stack, pack),
        karpenter.release(stack),
        autoscaler.release(stack),
        gpu_operator.release(stack) if gpu_operator.enabled(stack) else None,
        network.network_operator(stack),
        network.sriov_operator(stack),
        network.efa_device_plugin(stack),
        network.efa_dra_driver(stack),
        scheduler.volcano(stack),
        scheduler.kueue(stack),
        trainer.release(stack),
        nvsentinel.release(stack),
        dra_driver.release(stack),
        storage.nfs(stack),
        storage.efs(stack, efs_role_arn),
        storage.fsx(stack),
    ]
    remotes = [
        network.multus(stack),
        network.whereabouts(stack),
        operators.training_operator(stack),
        operators.mpi_operator(stack),
        autoscaler.provisioning_request_crd(stack),
    ]
    objects: list[dict[str, Any]] = karpenter.objects(stack)
    objects += gpudirect.objects(stack)
    objects += network.efa_claim_templates(stack)
    policy = network.nic_cluster_policy(stack)
    if policy is not None:
        objects.append(policy)
    objects += network.sriov_policies(stack)
    objects += scheduler.priority_classes(stack)
    objects += observability.objects(stack)
    patches: dict[str, Patch] = {
        network.MULTUS_NAME: network.pin_multus_image,
        network.WHEREABOUTS_NAME: network.pin_whereabouts_image,
        operators.TRAINING_NAME: operators.training_operator_patch(stack),
        operators.MPI_NAME: operators.mpi_operator_patch(stack),
    }
    # Every image through the stack's registry mirror: the charts' own values, our objects, the remote installs'.
    registries = stack.config.images.mirror
    installed = tuple(mirror.release(registries, r) for r in releases if r is not None)
    return AddonPlan(
        releases=installed,
        remotes=tuple(r for r in remotes if r is not None),
        objects=tuple(mirror_objects(registries, objects)),
        patches={name: p for name, upstream in patches.items() if (p := mirror.patch(registries, upstream))},
        namespaces={pack.namespace: monitoring.NAME} if pack.install else {},
        unmirrored=mirror.unreached(registries, installed),
    )
