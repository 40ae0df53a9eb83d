"""The CustomResourceDefinitions of what the stacks install, read from the upstream modules' own trees.

Each source is a Go module at the version `components/versions.py` pins for its add-on, downloaded into
the Go module cache (checksum-verified) and read there; nothing upstream is kept in this repository.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components import versions
from components.simulate import engines, kueue, modfiles


@dataclass(frozen=True, slots=True)
class CrdSource:
    """The CRD files of one add-on: its Go module, version and the files' paths inside it."""

    addon: str
    module: str
    version: str
    files: tuple[str, ...]


def _v(version: str) -> str:
    return version if version.startswith("v") else f"v{version}"


_KUEUE = "config/components/crd/bases/kueue.x-k8s.io_"
_VOLCANO = "config/crd/volcano/bases/"
_KARPENTER = "pkg/apis/crds/"

SOURCES: tuple[CrdSource, ...] = (
    CrdSource(
        "kueue",
        "sigs.k8s.io/kueue",
        _v(versions.KUEUE.version),
        tuple(
            f"{_KUEUE}{kind}.yaml"
            for kind in (
                "admissionchecks",
                "clusterqueues",
                "cohorts",
                "localqueues",
                "resourceflavors",
                "topologies",
                "workloadpriorityclasses",
                "workloads",
                "provisioningrequestconfigs",
                # Kueue's manager sets up MultiKueue's indexes at start and exits when these are not served.
                "multikueueclusters",
                "multikueueconfigs",
            )
        ),
    ),
    CrdSource(
        "volcano",
        "volcano.sh/volcano",
        _v(versions.VOLCANO.version),
        tuple(
            f"{_VOLCANO}{f}.yaml"
            for f in (
                "batch.volcano.sh_jobs",
                "scheduling.volcano.sh_podgroups",
                "scheduling.volcano.sh_queues",
                "topology.volcano.sh_hypernodes",
                "bus.volcano.sh_commands",
            )
        ),
    ),
    CrdSource(
        "training-operator",
        "github.com/kubeflow/trainer",
        versions.TRAINING_OPERATOR.ref,
        # Not its MPIJob v1: the platform disables that scheme and installs the MPI Operator's v2beta1.
        ("manifests/base/crds/kubeflow.org_pytorchjobs.yaml", "manifests/base/crds/kubeflow.org_tfjobs.yaml"),
    ),
    CrdSource(
        "mpi-operator",
        "github.com/kubeflow/mpi-operator",
        versions.MPI_OPERATOR.ref,
        ("manifests/base/kubeflow.org_mpijobs.yaml",),
    ),
    CrdSource(
        "kubeflow-trainer",
        "github.com/kubeflow/trainer/v2",
        _v(versions.TRAINER.version),
        tuple(
            f"manifests/base/crds/trainer.kubeflow.org_{kind}.yaml"
            for kind in ("trainjobs", "trainingruntimes", "clustertrainingruntimes")
        ),
    ),
    CrdSource(
        "jobset",
        "sigs.k8s.io/jobset",
        _v(versions.JOBSET_VERSION),
        ("config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",),
    ),
    CrdSource(
        "nvidia-dra-driver-gpu",
        "sigs.k8s.io/dra-driver-nvidia-gpu",
        _v(versions.DRA_DRIVER.version),
        tuple(
            f"deployments/helm/dra-driver-nvidia-gpu/crds/resource.nvidia.com_{kind}.yaml"
            for kind in ("computedomains", "computedomaincliques")
        ),
    ),
    CrdSource(
        "multus",
        "github.com/k8snetworkplumbingwg/network-attachment-definition-client",
        # The CRD Multus's thick daemonset manifest installs is this client's, unchanged since v1.
        "v1.7.7",
        ("artifacts/networks-crd.yaml",),
    ),
    CrdSource(
        "karpenter",
        "sigs.k8s.io/karpenter",
        _v(versions.KARPENTER.version),
        tuple(f"{_KARPENTER}karpenter.sh_{kind}.yaml" for kind in ("nodepools", "nodeclaims", "nodeoverlays")),
    ),
    CrdSource(
        "karpenter",
        "github.com/aws/karpenter-provider-aws",
        _v(versions.KARPENTER.version),
        (f"{_KARPENTER}karpenter.k8s.aws_ec2nodeclasses.yaml",),
    ),
    CrdSource(
        "kube-prometheus-stack",
        "github.com/prometheus-operator/prometheus-operator",
        versions.PROMETHEUS_OPERATOR_VERSION,
        # The kinds the observability pack, the GPU Operator and Kueue make; the chart's crds subchart installs
        # these files of the operator's release.
        tuple(
            f"example/prometheus-operator-crd/monitoring.coreos.com_{kind}.yaml"
            for kind in ("servicemonitors", "podmonitors", "prometheusrules")
        ),
    ),
    CrdSource(
        "sriov-network-operator",
        "github.com/k8snetworkplumbingwg/sriov-network-operator",
        _v(versions.SRIOV_NETWORK_OPERATOR.version),
        tuple(
            f"config/crd/bases/sriovnetwork.openshift.io_{kind}.yaml"
            for kind in ("sriovnetworks", "sriovibnetworks", "sriovnetworknodepolicies", "sriovoperatorconfigs")
        ),
    ),
)

AUTOSCALER_APIS = "k8s.io/autoscaler/cluster-autoscaler/apis"
"""The Cluster Autoscaler's API module, where the ProvisioningRequest CRD lives (its chart installs none)."""
PROVISIONING_REQUESTS = CrdSource(
    "cluster-autoscaler",
    AUTOSCALER_APIS,
    # The version Kueue's own module builds against: the API its admission check speaks (kubernetes-sigs/kueue
    # v0.19.2 go.mod). GKE serves the same autoscaling.x-k8s.io/v1 itself; on EKS the stack installs the CRD from the
    # autoscaler's release tag (components/versions.py provisioning_request_crd).
    engines.pinned(kueue.ENGINE, AUTOSCALER_APIS),
    ("config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml",),
)
"""Installed on every simulated cluster before Kueue starts: Kueue sets its ProvisioningRequest admission check up
only when the CRD is served as it starts (cmd/kueue/main.go, provisioning.ServerSupportsProvisioningRequest)."""
SOURCES += (PROVISIONING_REQUESTS,)

UNAVAILABLE: dict[str, str] = {
    "mellanox.com": "the NVIDIA Network Operator's module is not served by the Go module proxy",
    "nvidia.com": "the NVIDIA GPU Operator's module is not served by the Go module proxy",
    "networking.gke.io": "GKE's networking CRDs are installed by GKE itself and published in no module",
}
"""API groups we emit whose CRDs no module here provides, and why: their objects are not applied."""


def definitions(group: str | None = None) -> Iterator[dict[str, Any]]:
    """Every CRD of every source (of one API group's sources, by their file names), downloading each module
    once."""
    for source in SOURCES:
        if group is not None and not any(Path(name).name.startswith(f"{group}_") for name in source.files):
            continue
        root = engines.download(source.module, source.version)
        for name in source.files:
            path = root / name
            if not path.is_file():
                raise engines.BuildError(f"{source.module}@{source.version} has no {name}")
            for doc in modfiles.documents(path):
                if doc.get("kind") == "CustomResourceDefinition":
                    yield doc


@functools.cache
def every_definition() -> tuple[dict[str, Any], ...]:
    """Every CRD of every source, read once per process (3.4 MB of YAML): callers must not change them."""
    return tuple(definitions())


def stand_ins(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A CRD that accepts any content for each kind among `objects` whose group is UNAVAILABLE: what the add-on
    installed elsewhere would serve, without its schema (which no module here provides), so that a deploy to a
    simulated cluster can create those objects. Their content is not validated."""
    kinds: dict[tuple[str, str], tuple[set[str], bool]] = {}
    for obj in objects:
        group, _, version = obj["apiVersion"].rpartition("/")
        if group in UNAVAILABLE:
            versions_, _ = kinds.setdefault((group, obj["kind"]), (set(), "namespace" in obj["metadata"]))
            versions_.add(version)
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {
                "name": f"{_plural(kind)}.{group}",
                "labels": {"gpu-training/simulated": "true"},
                "annotations": {"gpu-training/stand-in": UNAVAILABLE[group]},
            },
            "spec": {
                "group": group,
                "names": {"kind": kind, "plural": _plural(kind), "singular": kind.lower(), "listKind": f"{kind}List"},
                "scope": "Namespaced" if namespaced else "Cluster",
                "versions": [
                    {
                        "name": version,
                        "served": True,
                        "storage": index == 0,
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                        "subresources": {"status": {}},
                    }
                    for index, version in enumerate(sorted(versions_))
                ],
            },
        }
        for (group, kind), (versions_, namespaced) in sorted(kinds.items())
    ]


def _plural(kind: str) -> str:
    """The resource name of a kind, as kubebuilder makes it (NicClusterPolicy -> nicclusterpolicies)."""
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return f"{lower[:-1]}ies"
    return f"{lower}es" if lower.endswith(("s", "x", "ch", "sh")) else f"{lower}s"
