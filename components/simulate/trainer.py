"""Kubeflow Trainer v2's controller manager, as the stack's kubeflow-trainer chart configures it.

The TrainJob webhooks are part of how Trainer works: the defaulter stamps each runtime patch's time and the
validators check a TrainJob against its runtime (a missing runtime, an MPI runtime's launcher and nodes) before
the controller ever sees it. So they run, served by the manager on 127.0.0.1 with the run's certificate
(found where controller-runtime looks by default, under $TMPDIR, as the chart mounts its Secret there); the
manager's own certificate rotator is off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from components.addons import trainer as trainer_addon
from components.addons.install import HelmRelease
from components.render import Rendered
from components.simulate import engines, kustomize, webhooks
from components.simulate.client import Client, ClientError
from components.simulate.controlplane import POLL, ControlPlane, StartError, free_port, wait_probe

MODULE = "github.com/kubeflow/trainer/v2"
ENGINE = engines.Engine("trainer", {"trainer-controller-manager": f"{MODULE}/cmd/trainer-controller-manager"})
"""Trainer's manager, at the chart's version (the chart and the manager are released together)."""
VERSION_NOTE: str | None = None
RELEASE = trainer_addon.NAME
VALIDATOR = "validator.trainjob.trainer.kubeflow.org"
READY_TIMEOUT = 120.0


def release(rendered: Rendered) -> HelmRelease | None:
    """The stack's kubeflow-trainer release."""
    return next((r for r in rendered.addons.releases if r.name == RELEASE), None)


def installed(rendered: Rendered) -> bool:
    """Whether the stack installs Kubeflow Trainer."""
    return release(rendered) is not None


def source() -> Path:
    """Trainer's module tree at the pinned version, in the Go module cache."""
    return engines.download(MODULE, engines.pinned(ENGINE, MODULE))


def chart_defaults() -> dict[str, Any]:
    """The kubeflow-trainer chart's values.yaml."""
    return dict(yaml.safe_load((source() / "charts" / "kubeflow-trainer" / "values.yaml").read_text()))


def configuration(values: dict[str, Any], ports: dict[str, int]) -> dict[str, Any]:
    """The manager's Configuration as the chart's ConfigMap writes it from `manager.config`, on 127.0.0.1
    ports with leader election and certificate management off."""
    config = values["manager"]["config"]
    election = config["leaderElection"]
    concurrency = config["controller"]["groupKindConcurrency"]
    written: dict[str, Any] = {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
        "kind": "Configuration",
        "health": {
            "healthProbeBindAddress": f"127.0.0.1:{ports['health']}",
            "readinessEndpointName": config["health"]["readinessEndpointName"],
            "livenessEndpointName": config["health"]["livenessEndpointName"],
        },
        "metrics": {
            "bindAddress": f"127.0.0.1:{ports['metrics']}",
            "secureServing": config["metrics"]["secureServing"],
        },
        "webhook": {"port": ports["webhook"], "host": "127.0.0.1"},
        "leaderElection": {
            "leaderElect": False,
            "resourceName": election["resourceName"],
            "resourceNamespace": election["resourceNamespace"],
            "leaseDuration": election["leaseDuration"],
            "renewDeadline": election["renewDeadline"],
            "retryPeriod": election["retryPeriod"],
        },
        "controller": {
            "groupKindConcurrency": {
                "TrainJob.trainer.kubeflow.org": concurrency["trainJob"],
                "TrainingRuntime.trainer.kubeflow.org": concurrency["trainingRuntime"],
                "ClusterTrainingRuntime.trainer.kubeflow.org": concurrency["clusterTrainingRuntime"],
            }
        },
        "certManagement": {"enable": False},
        "clientConnection": dict(config["clientConnection"]),
        # Served only with the TrainJobStatus feature gate (off by default), and then on every interface.
        "statusServer": {**config["statusServer"], "port": ports["status"]},
    }
    if config.get("featureGates"):
        written["featureGates"] = dict(config["featureGates"])
    return written


def webhook_configurations(root: Path) -> Iterator[dict[str, Any]]:
    """The upstream webhook configurations as manifests/base/webhook builds them (its patches name them as the
    chart does and exempt runtimes labelled webhook-validation: disabled)."""
    yield from (d for d in kustomize.build(root / "manifests" / "base" / "webhook") if d["kind"] in webhooks.KINDS)


def _probe() -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "gpu-training-webhook-probe", "namespace": "default"},
        "spec": {
            "runtimeRef": {
                "apiGroup": "trainer.kubeflow.org",
                "kind": "ClusterTrainingRuntime",
                "name": "gpu-training-no-such-runtime",
            }
        },
    }


def _wait_validating(plane: ControlPlane, client: Client, timeout: float = READY_TIMEOUT) -> None:
    """Until the API server calls the TrainJob validator: a dry-run TrainJob naming no runtime is denied by it
    (the webhook configuration reaches the API server's informer a moment after it is applied)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        plane.check_alive()
        try:
            client.apply(_probe(), dry_run=True)
        except ClientError as exc:
            if VALIDATOR in str(exc):
                return
        time.sleep(POLL)
    raise StartError(f"the API server does not call Trainer's webhooks after {timeout:.0f}s")


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Build (cached) and start Trainer's manager against `plane` as the stack's chart configures it, with its
    webhooks registered; return once the API server calls them."""
    binary = engines.build(ENGINE, progress)["trainer-controller-manager"]
    found = release(rendered)
    if found is None:
        raise StartError("the stack does not install Kubeflow Trainer")
    if (pinned := engines.pinned(ENGINE, MODULE)).lstrip("v") != found.chart.version:
        raise StartError(f"the trainer engine pins {pinned}, the stack's chart is {found.chart.version}")
    client = plane.client()
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": found.namespace}})
    serving = webhooks.serving(plane.folder, "trainer")
    # controller-runtime's default certificate folder, $TMPDIR/k8s-webhook-server/serving-certs, where the
    # chart mounts the webhook Secret; the manager has no setting for it.
    scratch = plane.folder / "trainer-tmp"
    (scratch / "k8s-webhook-server").mkdir(parents=True, exist_ok=True)
    linked = scratch / "k8s-webhook-server" / "serving-certs"
    if not linked.exists():
        linked.symlink_to(serving.cert_dir)
    ports = {"webhook": free_port(), "metrics": free_port(), "health": free_port(), "status": free_port()}
    values = kustomize.merged(chart_defaults(), found.values)
    config = plane.folder / "trainer-config.yaml"
    config.write_text(yaml.safe_dump(configuration(values, ports)))
    progress("starting the Kubeflow Trainer controller manager")
    plane.start(
        "trainer",
        [str(binary), f"--kubeconfig={plane.kubeconfig}", f"--config={config}"],
        env={"TMPDIR": str(scratch)},
    )
    webhooks.wait_serving(ports["webhook"], serving)
    wait_probe(plane, "trainer", ports["health"])
    webhooks.register(client, webhook_configurations(source()), ports["webhook"], serving.ca_bundle)
    _wait_validating(plane, client)
