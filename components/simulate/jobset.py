"""The JobSet controller manager, as the Kubeflow Trainer chart installs it (its `jobset` dependency).

JobSet's controller relies on its admission webhooks: the JobSet defaulter fills what the reconciler reads
(success and startup policies, Indexed completion, DNS hostnames), and the pod webhooks hold exclusive
placement together (followers wait on their leader's node). So all of them run, served by the controller on
127.0.0.1 with the run's certificate; its internal certificate rotator is off.
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

ENGINE = engines.Engine("jobset", {"jobset-controller-manager": "sigs.k8s.io/jobset"})
"""JobSet's manager: its main package is the module's root."""
VERSION_NOTE: str | None = None
MODULE = "sigs.k8s.io/jobset"
RELEASE = trainer_addon.NAME
"""The stack installs JobSet as the Trainer chart's dependency, in that release's namespace."""
NAME_PREFIX = "jobset-"
"""config/default's namePrefix, which the webhook configurations get."""
READY_TIMEOUT = 120.0


def release(rendered: Rendered) -> HelmRelease | None:
    """The stack's Trainer release, which carries JobSet."""
    return next((r for r in rendered.addons.releases if r.name == RELEASE), None)


def installed(rendered: Rendered) -> bool:
    """Whether the stack installs JobSet: the Trainer release with `jobset.install` (the chart's default: true)."""
    found = release(rendered)
    return found is not None and bool(found.values.get("jobset", {}).get("install", True))


def source() -> Path:
    """JobSet's module tree at the pinned version, in the Go module cache."""
    return engines.download(MODULE, engines.pinned(ENGINE, MODULE))


def chart_values(rendered: Rendered) -> dict[str, Any]:
    """The values JobSet's chart is installed with: its defaults, the Trainer chart's `jobset` section, the stack's."""
    from components.simulate import trainer  # the parent chart's values live in Trainer's module

    own = yaml.safe_load((source() / "charts" / "jobset" / "values.yaml").read_text())
    parent = trainer.chart_defaults().get("jobset", {})
    stack = (found.values if (found := release(rendered)) else {}).get("jobset", {})
    return kustomize.merged(own, parent, stack)


def configuration(values: dict[str, Any], cert_dir: Path, ports: dict[str, int]) -> dict[str, Any]:
    """The manager's Configuration as the chart's ConfigMap writes it, on 127.0.0.1 ports with leader election
    and the internal certificate rotator off, serving webhooks and metrics with the certificate in `cert_dir`."""
    controller = values["controller"]
    return {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {
            "qps": controller["clientConnection"]["qps"],
            "burst": controller["clientConnection"]["burst"],
        },
        "internalCertManagement": {"enable": False},
        "webhook": {"port": ports["webhook"], "host": "127.0.0.1", "certDir": str(cert_dir)},
        "metrics": {"bindAddress": f"127.0.0.1:{ports['metrics']}", "certDir": str(cert_dir)},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{ports['health']}"},
    }


def webhook_configurations(root: Path) -> Iterator[dict[str, Any]]:
    """The upstream webhook configurations as config/default builds them: the component's patches applied,
    names prefixed."""
    for doc in kustomize.build(root / "config" / "components" / "webhook"):
        if doc["kind"] in webhooks.KINDS:
            doc["metadata"]["name"] = NAME_PREFIX + doc["metadata"]["name"]
            yield doc


def _probe() -> dict[str, Any]:
    container = {"name": "probe", "image": "probe"}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "gpu-training-webhook-probe", "namespace": "default"},
        "spec": {"replicatedJobs": [{"name": "probe", "template": {"spec": {"template": {"spec": {
            "containers": [container]}}}}}]},
    }  # fmt: skip


def _wait_defaulting(plane: ControlPlane, client: Client, timeout: float = READY_TIMEOUT) -> None:
    """Until the API server calls the JobSet defaulter: a dry-run JobSet comes back with its startup policy,
    which only the webhook sets (the webhook configuration reaches the API server's informer a moment after)."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        plane.check_alive()
        try:
            if client.apply(_probe(), dry_run=True)["spec"].get("startupPolicy"):
                return
        except ClientError as exc:
            last = str(exc)
        time.sleep(POLL)
    raise StartError(f"the API server does not call JobSet's webhooks after {timeout:.0f}s {last}")


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Build (cached) and start the JobSet manager against `plane` as the stack's Trainer chart configures it,
    with its webhooks registered; return once the API server calls them."""
    binary = engines.build(ENGINE, progress)["jobset-controller-manager"]
    found = release(rendered)
    client = plane.client()
    namespace = found.namespace if found else "default"
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    serving = webhooks.serving(plane.folder, "jobset")
    ports = {"webhook": free_port(), "metrics": free_port(), "health": free_port()}
    config = plane.folder / "jobset-config.yaml"
    config.write_text(yaml.safe_dump(configuration(chart_values(rendered), serving.cert_dir, ports)))
    progress("starting the JobSet controller manager")
    # --zap-log-level=2: the chart's own argument.
    plane.start(
        "jobset",
        [str(binary), f"--kubeconfig={plane.kubeconfig}", "--zap-log-level=2", f"--config={config}"],
    )
    webhooks.wait_serving(ports["webhook"], serving)
    wait_probe(plane, "jobset", ports["health"])
    webhooks.register(client, webhook_configurations(source()), ports["webhook"], serving.ca_bundle)
    _wait_defaulting(plane, client)
