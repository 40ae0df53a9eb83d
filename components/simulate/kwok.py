"""kwok: it plays the kubelet for our fake nodes, so pods the scheduler binds to them run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from components.manifests.fabriccheck import CHECK_LABEL
from components.simulate import engines, modfiles
from components.simulate.controlplane import ControlPlane, free_port
from components.simulate.nodes import KWOK_ANNOTATION

STAGES = ("node/fast/node-initialize.yaml", "pod/fast/pod-ready.yaml", "pod/general/pod-delete.yaml")
"""kwok's own stages, from its module: nodes become Ready, bound pods Running and Ready (and stay so until
deleted), and deleted pods go once nothing holds them (no finalizer). Beside them, `pod_terminated_stage`."""
DELETE_STAGE = "pod-delete"


# Every container of the pod ends as a passing NCCL test's does: exit 0.
_SUCCEEDED = """{{ $now := Now }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: false
  started: false
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
phase: Succeeded
"""


# A deleted pod's containers are killed (SIGKILL after the grace period: 137), as the kubelet kills them.
_KILLED = (
    _SUCCEEDED.replace("exitCode: 0", "exitCode: 137")
    .replace("reason: Completed", "reason: Error")
    .replace("phase: Succeeded", "phase: Failed")
)


def pod_terminated_stage() -> dict[str, Any]:
    """A kwok Stage that ends a deleted pod that still runs in phase Failed, as the kubelet does when it kills it.
    Until then a Job's pod keeps its tracking finalizer: a Job with a podFailurePolicy replaces a pod only once it
    is Failed, so an eviction (a drain, a NoExecute taint) would otherwise hang the Job."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": "pod-terminated"},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {
                "matchExpressions": [
                    {"key": ".metadata.deletionTimestamp", "operator": "Exists"},
                    {"key": ".status.phase", "operator": "In", "values": ["Pending", "Running"]},
                ]
            },
            "next": {"statusTemplate": _KILLED},
        },
    }


def prompt(stage: dict[str, Any]) -> dict[str, Any]:
    """kwok's stage as given, but a deleted pod goes as soon as nothing holds it, not at a random moment of its
    grace period (kwok's pod-delete jitters up to the deletionTimestamp: 30 s for most pods, which every job's
    removal waited for). The containers exited at once (`pod_terminated_stage` already says so: the pod is Failed the
    moment it is deleted), so the kubelet has nothing left to wait for."""
    if stage["metadata"]["name"] == DELETE_STAGE:
        stage["spec"]["delay"].pop("jitterDurationFrom", None)
        stage["spec"]["delay"]["durationMilliseconds"] = 0
    return stage


def checks_pass_stage() -> dict[str, Any]:
    """A kwok Stage that ends each running pod of a fabric check in success, as a passing NCCL test ends it."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": "fabric-check-passes"},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {
                "matchExpressions": [
                    {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                    {"key": ".status.phase", "operator": "In", "values": ["Running"]},
                    {"key": f'.metadata.labels["{CHECK_LABEL}"]', "operator": "Exists"},
                ]
            },
            "delay": {"durationMilliseconds": 2000},
            "next": {"statusTemplate": _SUCCEEDED},
        },
    }


def start(plane: ControlPlane, binary: Path, *, checks_pass: bool = False) -> None:
    """Run kwok against `plane`, managing only the nodes we annotate as fake; with `checks_pass`, the fabric
    checks' pods succeed once running (there is no NCCL test to run on a fake node)."""
    root = engines.download("sigs.k8s.io/kwok", engines.pinned(engines.KWOK, "sigs.k8s.io/kwok"))
    config = plane.folder / "kwok-stages.yaml"
    stages = [yaml.safe_dump(prompt(modfiles.load(root / "kustomize" / "stage" / s))) for s in STAGES]
    stages.append(yaml.safe_dump(pod_terminated_stage(), sort_keys=False))
    if checks_pass:
        stages.append(yaml.safe_dump(checks_pass_stage(), sort_keys=False))
    config.write_text("\n---\n".join(stages))
    plane.start(
        "kwok",
        env={
            # kwok v0.8.0 builds each stage's CEL environment on first use, from its node and pod controllers at
            # once, and easycel v0.6.0 caches types in a package map without a lock (types.go getTypeValue): once in
            # a CI run kwok died of "concurrent map" access there. On one thread that race (almost) never happens,
            # and kwok's work here is a few CPU-seconds a run.
            "GOMAXPROCS": "1",
        },
        command=[
            str(binary),
            f"--kubeconfig={plane.kubeconfig}",
            f"--config={config}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
            f"--server-address=127.0.0.1:{free_port()}",
            "--cidr=10.244.0.1/16",
            "--node-ip=127.0.0.1",
        ],
    )
