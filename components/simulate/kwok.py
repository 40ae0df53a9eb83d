"""kwok: it plays the kubelet for our fake nodes, so pods the scheduler binds to them run."""

from __future__ import annotations

from pathlib import Path

from components.simulate import engines
from components.simulate.controlplane import ControlPlane, free_port
from components.simulate.nodes import KWOK_ANNOTATION

STAGES = ("node/fast/node-initialize.yaml", "pod/fast/pod-ready.yaml", "pod/fast/pod-delete.yaml")
"""kwok's own stages, from its module: nodes become Ready, bound pods Running and Ready (and stay so until
deleted), and deleted pods go."""


def start(plane: ControlPlane, binary: Path) -> None:
    """Run kwok against `plane`, managing only the nodes we annotate as fake."""
    root = engines.download("sigs.k8s.io/kwok", engines.pinned(engines.KWOK, "sigs.k8s.io/kwok"))
    config = plane.folder / "kwok-stages.yaml"
    config.write_text("\n---\n".join((root / "kustomize" / "stage" / s).read_text() for s in STAGES))
    plane.start(
        "kwok",
        [
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
