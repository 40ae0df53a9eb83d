"""The registry mirror in the add-ons: each chart's own image values, and the remote installs' objects.

Every chart names its images differently. CHART_IMAGES lists, per chart, the values that name an image and the
chart's default there, read at the pinned chart version (components/versions.py); `values` sets them through the
mirror. UNREACHED names the charts whose images no value here rewrites, and why; docs/addons.md says the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from components import images
from components.addons.install import HelmRelease
from components.addons.network import Patch
from components.images import Mirror


@dataclass(frozen=True, slots=True)
class ChartImage:
    """Where a chart's values name one image, and the chart's default there."""

    at: str
    """The values path of the mapping that holds the keys, dotted (`prometheusOperator.image`)."""
    default: str
    """The chart's default image name, registry included, no tag: what the keys below say together."""
    repository: str | None = "repository"
    """The key of the repository: the whole name (`registry.k8s.io/kueue/kueue`) when `registry` is None, else the
    path inside the registry; None when the chart's templates join a fixed name to `registry` alone."""
    registry: str | None = None
    """The key of the registry host, when the chart names it apart."""


def _repos(*entries: tuple[str, str]) -> tuple[ChartImage, ...]:
    return tuple(ChartImage(at, default) for at, default in entries)


def _split(*entries: tuple[str, str]) -> tuple[ChartImage, ...]:
    return tuple(ChartImage(at, default, registry="registry") for at, default in entries)


_NVCR = "nvcr.io/nvidia"
_CLOUD_NATIVE = f"{_NVCR}/cloud-native"
_EKS_ECR = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks"
_CSI = "public.ecr.aws/csi-components"

CHART_IMAGES: dict[str, tuple[ChartImage, ...]] = {
    # NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/values.yaml: `<component>.repository` + `.image` +
    # `.version`,
    # and its node-feature-discovery subchart 0.19.0 (`image.repository`). vgpuManager (no default) and kataManager
    # (no image) are left out.
    "gpu-operator": _repos(
        ("validator", _NVCR),
        ("operator", _NVCR),
        ("driver", _NVCR),
        ("driver.manager", _CLOUD_NATIVE),
        ("toolkit", f"{_NVCR}/k8s"),
        ("devicePlugin", _NVCR),
        ("dcgm", _CLOUD_NATIVE),
        ("dcgmExporter", f"{_NVCR}/k8s"),
        ("gfd", _NVCR),
        ("migManager", _CLOUD_NATIVE),
        ("nodeStatusExporter", _NVCR),
        ("gds", _CLOUD_NATIVE),
        ("gdrcopy", _CLOUD_NATIVE),
        ("vgpuManager.driverManager", _CLOUD_NATIVE),
        ("vgpuDeviceManager", _CLOUD_NATIVE),
        ("vfioManager", _CLOUD_NATIVE),
        ("vfioManager.driverManager", _CLOUD_NATIVE),
        ("sandboxDevicePlugin", _NVCR),
        ("kataSandboxDevicePlugin", _CLOUD_NATIVE),
        ("ccManager", _CLOUD_NATIVE),
        ("draDriver", _NVCR),
        ("node-feature-discovery.image", "registry.k8s.io/nfd/node-feature-discovery"),
    ),
    # Mellanox/network-operator v26.4.1 deployment/network-operator/values.yaml; its NicClusterPolicy's operands are
    # our object (components/images.py rewrites their `repository`).
    "network-operator": _repos(
        ("operator", _CLOUD_NATIVE),
        ("operator.ofedDriver.initContainer", f"{_NVCR}/mellanox"),
        ("node-feature-discovery.image", f"{_NVCR}/mellanox/node-feature-discovery"),
        ("maintenance-operator-chart.operator.image", f"{_NVCR}/mellanox"),
    ),
    # volcano-sh/volcano v1.15.1 installer/helm/chart/volcano: `basic.image_registry` + `basic.<x>_image_name`
    # (volcanosh/vc-*); the templates join them with '/'.
    "volcano": (ChartImage("basic", "docker.io/volcanosh/vc-scheduler", repository=None, registry="image_registry"),),
    # kubernetes-sigs/kueue v0.19.2 charts/kueue; the published chart names registry.k8s.io/kueue
    # (hack/helm-chart-package.sh), the tree the staging registry.
    "kueue": _repos(
        ("controllerManager.manager.image", "registry.k8s.io/kueue/kueue"),
        ("kueueViz.backend.image", "registry.k8s.io/kueue/kueueviz-backend"),
        ("kueueViz.frontend.image", "registry.k8s.io/kueue/kueueviz-frontend"),
    ),
    # kubeflow/trainer v2.3.0 charts/kubeflow-trainer (`image.registry` + `image.repository`), and its JobSet 0.12.0
    # subchart (`image.repository`, registry.k8s.io/jobset when published: hack/helm-chart-package.sh).
    "kubeflow-trainer": (
        *_split(
            ("image", "ghcr.io/kubeflow/trainer/trainer-controller-manager"),
            ("dataCache.cacheImage", "ghcr.io/kubeflow/trainer/data-cache"),
            ("runtimes.installer.image", "docker.io/library/alpine"),
            ("runtimes.deepspeedDistributed.image", "ghcr.io/kubeflow/trainer/deepspeed-runtime"),
            ("runtimes.mlxDistributed.image", "ghcr.io/kubeflow/trainer/mlx-runtime"),
            ("runtimes.xgboostDistributed.image", "ghcr.io/kubeflow/trainer/xgboost-runtime"),
            ("runtimes.torchtuneDistributed.image", "ghcr.io/kubeflow/trainer/torchtune-trainer"),
        ),
        ChartImage("jobset.image", "registry.k8s.io/jobset/jobset"),
    ),
    # aws/eks-charts @5239609 stable/aws-efa-k8s-device-plugin v0.5.30 and stable/aws-dranet 1.0.0.
    "aws-efa-k8s-device-plugin": _repos(("image", f"{_EKS_ECR}/aws-efa-k8s-device-plugin")),
    "aws-dranet": _repos(("image", f"{_EKS_ECR}/dranet")),
    # kubernetes-sigs/aws-efs-csi-driver helm-chart-aws-efs-csi-driver-4.4.1 charts/aws-efs-csi-driver.
    "aws-efs-csi-driver": _repos(
        ("image", "public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver"),
        ("sidecars.livenessProbe.image", f"{_CSI}/livenessprobe"),
        ("sidecars.nodeDriverRegistrar.image", f"{_CSI}/csi-node-driver-registrar"),
        ("sidecars.csiProvisioner.image", f"{_CSI}/csi-provisioner"),
    ),
    # kubernetes-sigs/aws-fsx-csi-driver helm-chart-aws-fsx-csi-driver-1.17.0 charts/aws-fsx-csi-driver (its
    # image.containerRegistry stays empty: the repositories hold the host).
    "aws-fsx-csi-driver": _repos(
        ("image", "public.ecr.aws/fsx-csi-driver/aws-fsx-csi-driver"),
        ("sidecars.livenessProbe.image", f"{_CSI}/livenessprobe"),
        ("sidecars.nodeDriverRegistrar.image", f"{_CSI}/csi-node-driver-registrar"),
        ("sidecars.provisioner.image", f"{_CSI}/csi-provisioner"),
        ("sidecars.resizer.image", f"{_CSI}/csi-resizer"),
    ),
    # kubernetes-csi/csi-driver-nfs charts/v4.13.4/csi-driver-nfs: `image.nfs.repository` is whole; the sidecars'
    # repositories start with '/' and follow `image.baseRepo`.
    "csi-driver-nfs": (
        ChartImage("image.nfs", "registry.k8s.io/sig-storage/nfsplugin"),
        ChartImage("image", "registry.k8s.io/sig-storage/csi-provisioner", repository=None, registry="baseRepo"),
    ),
    # aws/karpenter-provider-aws v1.14.1 charts/karpenter: `controller.image.repository` (+ tag and digest, kept).
    "karpenter": _repos(("controller.image", "public.ecr.aws/karpenter/controller")),
    # kubernetes/autoscaler cluster-autoscaler/charts/cluster-autoscaler: `image.repository` (read at chart 9.51.0;
    # 9.59.0 not read here).
    "cluster-autoscaler": _repos(("image", "registry.k8s.io/autoscaling/cluster-autoscaler")),
    # kubernetes-sigs/dra-driver-nvidia-gpu v0.5.0 deployments/helm/dra-driver-nvidia-gpu: `image.repository`; the
    # controller starts the ComputeDomain daemons from the same image (its IMAGE_NAME).
    "dra-driver-nvidia-gpu": _repos(("image", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu")),
    # prometheus-community/helm-charts kube-prometheus-stack-88.5.3, with its subcharts kube-state-metrics 8.4.0 and
    # prometheus-node-exporter 4.56.1, and grafana-community/helm-charts grafana-12.11.1: `registry` + `repository`
    # everywhere (global.imageRegistry would give every image one registry, which a map of mirrors cannot).
    "kube-prometheus-stack": _split(
        ("crds.upgradeJob.image.busybox", "docker.io/library/busybox"),
        ("crds.upgradeJob.image.kubectl", "registry.k8s.io/kubectl"),
        ("alertmanager.alertmanagerSpec.image", "quay.io/prometheus/alertmanager"),
        ("prometheusOperator.image", "quay.io/prometheus-operator/prometheus-operator"),
        ("prometheusOperator.admissionWebhooks.deployment.image", "quay.io/prometheus-operator/admission-webhook"),
        ("prometheusOperator.admissionWebhooks.patch.image", "ghcr.io/jkroepke/kube-webhook-certgen"),
        ("prometheusOperator.prometheusConfigReloader.image", "quay.io/prometheus-operator/prometheus-config-reloader"),
        ("prometheusOperator.thanosImage", "quay.io/thanos/thanos"),
        ("prometheus.prometheusSpec.image", "quay.io/prometheus/prometheus"),
        ("thanosRuler.thanosRulerSpec.image", "quay.io/thanos/thanos"),
        ("kube-state-metrics.image", "registry.k8s.io/kube-state-metrics/kube-state-metrics"),
        ("kube-state-metrics.kubeRBACProxy.image", "quay.io/brancz/kube-rbac-proxy"),
        ("prometheus-node-exporter.image", "quay.io/prometheus/node-exporter"),
        ("prometheus-node-exporter.kubeRBACProxy.image", "quay.io/brancz/kube-rbac-proxy"),
        ("prometheus-node-exporter.permissionInitContainer.image", "quay.io/prometheus/busybox"),
        ("grafana.image", "docker.io/grafana/grafana"),
        ("grafana.testFramework.image", "docker.io/bats/bats"),
        ("grafana.downloadDashboardsImage", "docker.io/curlimages/curl"),
        ("grafana.initChownData.image", "docker.io/library/busybox"),
        ("grafana.sidecar.image", "quay.io/kiwigrid/k8s-sidecar"),
        ("grafana.imageRenderer.image", "docker.io/grafana/grafana-image-renderer"),
    ),
}

UNREACHED: dict[str, str] = {
    "nvsentinel": (
        "its images (ghcr.io/nvidia/nvsentinel/*, one value per subchart) could not be read at the pinned v1.31.0 "
        "here; set the subcharts' image.repository values, or mirror ghcr.io in the nodes' container runtime"
    ),
    "sriov-network-operator": (
        "its chart names whole references with tags chosen at release (images.*; hack/release/chart-update.sh), "
        "which could not be read for 1.6.0 here; set its images.* values, or mirror ghcr.io in the nodes' "
        "container runtime"
    ),
}
"""Charts whose images the mirror does not reach through values, and why."""


def _set(values: dict[str, Any], path: list[str], value: str) -> None:
    for key in path[:-1]:
        values = values.setdefault(key, {})
    values[path[-1]] = value


def chart_values(chart: str, mirror: Mirror) -> dict[str, Any]:
    """The values that pull a chart's images through the mirror (empty when it names none of its registries)."""
    out: dict[str, Any] = {}
    for image in CHART_IMAGES.get(chart, ()) if mirror else ():
        ref = images.parse(image.default)
        prefix = images.prefix_for(mirror, ref.registry)
        if prefix is None:
            continue
        at = image.at.split(".")
        if image.registry is None and image.repository is not None:
            _set(out, [*at, image.repository], images.rewrite(mirror, image.default))
            continue
        registry, repository = images.split(mirror, ref.registry, ref.path)
        if image.registry is not None:
            _set(out, [*at, image.registry], registry)
        if image.repository is not None:
            _set(out, [*at, image.repository], repository)
    return out


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        old = out.get(key)
        out[key] = _merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


def release(mirror: Mirror, helm: HelmRelease) -> HelmRelease:
    """The release with its chart's images pulled through the mirror."""
    extra = chart_values(helm.name if helm.name in CHART_IMAGES else _chart_key(helm), mirror)
    return replace(helm, values=_merge(helm.values, extra)) if extra else helm


def _chart_key(helm: HelmRelease) -> str:
    """The CHART_IMAGES key of a release whose name is not its chart's (nvidia-dra-driver-gpu)."""
    return helm.chart.chart.rsplit("/", 1)[-1]


def unreached(mirror: Mirror, releases: tuple[HelmRelease, ...]) -> dict[str, str]:
    """The releases whose images the mirror does not reach, and why."""
    if not mirror:
        return {}
    return {r.name: UNREACHED[key] for r in releases if (key := _chart_key(r)) in UNREACHED}


def patch(mirror: Mirror, upstream: Patch | None) -> Patch | None:
    """A remote install's patch that also pulls every image of its objects through the mirror."""
    if not mirror:
        return upstream

    def patched(obj: dict[str, Any]) -> dict[str, Any] | None:
        done = upstream(obj) if upstream is not None else obj
        if done is None:
            return None
        # In place: kustomize's transformations keep the object they were given, not what they return.
        mirrored = images.mirror_object(mirror, done)
        done.clear()
        done.update(mirrored)
        return done

    return patched
