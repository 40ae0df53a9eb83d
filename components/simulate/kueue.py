"""Kueue, run out of cluster: the stack's own manager configuration, its admission webhooks, on 127.0.0.1.

The configuration is the one the stack gives Kueue's Helm chart (`managerConfig.controllerManagerConfigYaml`),
changed only where a process on 127.0.0.1 differs from a pod behind a Service: its ports, its webhook
certificate (ours, not the internal rotator's, whose certificate names the Service's DNS name), and no leader
election. The webhooks are the upstream configurations from Kueue's module, named as the chart names them and
pointed at the process; they are what suspends a queued job on creation and defaults the queue objects.
"""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from components.addons.install import HelmRelease
from components.render import Rendered
from components.simulate import engines, modfiles, webhooks
from components.simulate.controlplane import ControlPlane, StartError, free_port, wait_probe

MODULE = "sigs.k8s.io/kueue"
ENGINE = engines.Engine("kueue", {"kueue": f"{MODULE}/cmd/kueue"})
VERSION_NOTE: str | None = None
RELEASE = "kueue"
READY_TIMEOUT = 120.0
WEBHOOKS = "config/components/webhook"
METRICS_CERTS = Path("/etc/kueue/metrics/certs")
"""Where Kueue reads its metrics certificate whenever its internal certificate management is off (fixed in
its main.go; the chart mounts a Secret there)."""
_SANDBOX = """set -e
mount -t tmpfs tmpfs "$KUEUE_ETC"
mkdir "$KUEUE_ETC/upper" "$KUEUE_ETC/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$KUEUE_ETC/upper,workdir=$KUEUE_ETC/work" /etc
mkdir -p /etc/kueue/metrics/certs
cp "$KUEUE_METRICS_CERTS/tls.crt" "$KUEUE_METRICS_CERTS/tls.key" /etc/kueue/metrics/certs/
exec "$@"
"""
"""Run Kueue with a private /etc (an overlay in its own mount namespace) that holds the metrics certificate at
the fixed path: the machine's /etc is never written."""


def release(rendered: Rendered) -> HelmRelease | None:
    """The stack's Kueue Helm release, if it installs Kueue."""
    return next((r for r in rendered.addons.releases if r.name == RELEASE), None)


def installed(rendered: Rendered) -> bool:
    """Whether the stack installs Kueue."""
    return release(rendered) is not None


def namespace(rendered: Rendered) -> str:
    """The namespace Kueue runs in, and reads its MultiKueue kubeconfig Secrets from: its configuration's, else the
    release's."""
    found = release(rendered)
    if found is None:
        raise ValueError("the stack does not install Kueue")
    config = yaml.safe_load(found.values["managerConfig"]["controllerManagerConfigYaml"])
    return str(config.get("namespace") or found.namespace)


def configuration(
    rendered: Rendered, cert_dir: Path, webhook_port: int, health_port: int, metrics_port: int
) -> dict[str, Any]:
    """The stack's Kueue Configuration, with only what running out of cluster on 127.0.0.1 needs changed."""
    found = release(rendered)
    if found is None:
        raise ValueError("the stack does not install Kueue")
    config = dict(yaml.safe_load(found.values["managerConfig"]["controllerManagerConfigYaml"]))
    config.setdefault("namespace", found.namespace)
    config["health"] = {**config.get("health", {}), "healthProbeBindAddress": f"127.0.0.1:{health_port}"}
    config["metrics"] = {**config.get("metrics", {}), "bindAddress": f"127.0.0.1:{metrics_port}"}
    config["webhook"] = {
        **config.get("webhook", {}),
        "host": "127.0.0.1",
        "port": webhook_port,
        "certDir": str(cert_dir),
    }
    config["leaderElection"] = {**config.get("leaderElection", {}), "leaderElect": False}
    # The rotator would write a certificate for <service>.<namespace>.svc over ours, which the API server,
    # calling 127.0.0.1, would refuse.
    config["internalCertManagement"] = {"enable": False}
    # With the rotator off, the on-demand visibility API server reads its certificate from a fixed /visibility
    # and exits the manager when it is not there; it serves only listings of pending workloads, which neither
    # admission nor placement reads.
    config["featureGates"] = {**config.get("featureGates", {}), "VisibilityOnDemand": False}
    return config


def webhook_configurations(root: Path, config: dict[str, Any]) -> list[dict[str, Any]]:
    """Kueue's Mutating/ValidatingWebhookConfigurations from its module tree, as its chart installs them:
    named `<release>-...`, and the job webhooks limited to the namespaces Kueue manages."""
    configs = modfiles.documents(root / WEBHOOKS / "manifests.yaml")
    kustomization = yaml.safe_load((root / WEBHOOKS / "kustomization.yaml").read_text())
    # The kustomization gives the pod webhook the default namespace selector and copies it to every job
    # webhook; the chart does the same, taking the configuration's managedJobsNamespaceSelector when set.
    selector = config.get("managedJobsNamespaceSelector")
    limited: set[tuple[str, str]] = set()
    for entry in kustomization.get("patches", []):
        patch = yaml.safe_load(entry["patch"])
        for hook in patch.get("webhooks", []):
            selector = selector or hook.get("namespaceSelector")
            limited.add((patch["kind"], hook["name"]))
    for replacement in kustomization.get("replacements", []):
        for target in replacement.get("targets", []):
            for path in target.get("fieldPaths", []):
                name = path.partition("[name=")[2].partition("]")[0]
                limited.add((target["select"]["kind"], name))
    if selector is None or not limited:
        raise StartError(f"{MODULE}: {WEBHOOKS}/kustomization.yaml no longer says which webhooks are namespaced")
    named = []
    for upstream in configs:
        doc = copy.deepcopy(upstream)
        doc["metadata"]["name"] = f"{RELEASE}-{doc['metadata']['name']}"
        for hook in doc.get("webhooks", []):
            if (doc["kind"], hook["name"]) in limited:
                hook["namespaceSelector"] = copy.deepcopy(selector)
        named.append(doc)
    return named


def _sandboxed(command: list[str], run: Path, metrics_certs: Path) -> tuple[list[str], dict[str, str]]:
    """`command` run with the metrics certificate at the path Kueue insists on."""
    if (METRICS_CERTS / "tls.crt").is_file() and (METRICS_CERTS / "tls.key").is_file():
        return command, {}
    unshare = shutil.which("unshare")
    if unshare is None:
        raise StartError(
            f"Kueue reads its metrics certificate from {METRICS_CERTS}, which is absent, and without `unshare` "
            "(util-linux) simulate cannot give it a private /etc"
        )
    etc = run / "kueue-etc"
    etc.mkdir(exist_ok=True)
    # Unprivileged, a user namespace grants the mount namespace; root needs none.
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    argv = [unshare, *user, "--mount", "--propagation", "private", "sh", "-c", _SANDBOX, "kueue", *command]
    return argv, {"KUEUE_ETC": str(etc), "KUEUE_METRICS_CERTS": str(metrics_certs)}


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Build (cached) and start Kueue against `plane`, configured as the stack configures it; return once its
    webhooks answer and it reports ready."""
    binary = engines.build(ENGINE, progress)["kueue"]
    root = engines.download(MODULE, engines.pinned(ENGINE, MODULE))
    serving = webhooks.serving(plane.folder, "kueue")
    metrics = webhooks.serving(plane.folder, "kueue-metrics")
    webhook_port, health_port, metrics_port = free_port(), free_port(), free_port()
    config = configuration(rendered, serving.cert_dir, webhook_port, health_port, metrics_port)
    path = plane.folder / "kueue-config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    client = plane.client()
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": config["namespace"]}})
    webhooks.register(client, webhook_configurations(root, config), webhook_port, serving.ca_bundle)
    command, env = _sandboxed(
        [str(binary), f"--config={path}", f"--kubeconfig={plane.kubeconfig}"], plane.folder, metrics.cert_dir
    )
    progress(f"starting Kueue {engines.pinned(ENGINE, MODULE)}")
    plane.start("kueue", command, env=env)
    wait_probe(plane, "kueue", health_port)
    webhooks.wait_serving(webhook_port, serving)
