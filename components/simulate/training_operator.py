"""The Kubeflow Training Operator v1 (PyTorchJob, TFJob) as a process, with its validating webhooks.

It runs with the args of the upstream standalone overlay's Deployment after the stack's own patch
(components/addons/operators.py), the environment its pod would have, and what running out of cluster needs:
the kubeconfig, metrics and health probes on loopback ports, a webhook port of its own.

Its certificates: v1.9 always runs a cert rotator (no flag turns it off) that fills the overlay's Secret,
injects its CA into the webhook configuration named `validator.training-operator.kubeflow.org`, and holds every
controller back until a certificate file exists in the fixed folder /tmp/k8s-webhook-server/serving-certs
(in a cluster, that Secret mounted). Its certificates name the in-cluster Service, never 127.0.0.1, so the
webhook server serves the run's certificate instead (controller-runtime reads $TMPDIR/k8s-webhook-server/
serving-certs), and the upstream webhook configuration is registered, pointed at 127.0.0.1, under a name of
its own that the rotator does not rewrite.
"""

from __future__ import annotations

import copy
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.render import Rendered
from components.simulate import apply, engines, kustomize, webhooks
from components.simulate.client import Client, status_of
from components.simulate.controlplane import POLL, ControlPlane, StartError, free_port, wait_probe
from components.wellknown import TRAINING_OPERATOR_INSTALL as TRAINING_NAME

MODULE = "github.com/kubeflow/training-operator"
"""The module path of kubeflow/trainer's v1 line (the repository was renamed, its go.mod was not)."""
ENGINE = engines.Engine(TRAINING_NAME, {"training-operator": f"{MODULE}/cmd/training-operator.v1"})
VERSION_NOTE: str | None = None
OVERLAY = "manifests/overlays/standalone"
CONTAINER = "training-operator"
ROTATOR_CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
"""Where the rotator looks for its mounted certificate (a constant of pkg/cert)."""
LOCAL_SUFFIX = ".simulated"
READY_TIMEOUT = 120.0


def installed(rendered: Rendered) -> bool:
    """Whether the stack installs the Training Operator."""
    return any(r.name == TRAINING_NAME for r in rendered.addons.remotes)


def upstream(rendered: Rendered) -> list[dict[str, Any]]:
    """The standalone overlay's objects at the pinned version, as the stack patches them."""
    root = engines.download(MODULE, engines.pinned(ENGINE, MODULE))
    return kustomize.patched(root / OVERLAY, rendered.addons.patches[TRAINING_NAME])


def crds() -> list[dict[str, Any]]:
    """The CRDs of the standalone overlay at the pinned version (every scheme's, MPIJob v1 among them)."""
    root = engines.download(MODULE, engines.pinned(ENGINE, MODULE))
    return [o for o in kustomize.build(root / OVERLAY) if o["kind"] == "CustomResourceDefinition"]


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Build and start the Training Operator against `plane`, configured as the stack configures it; return
    once its webhooks answer and its controllers are set up."""
    binary = engines.build(ENGINE, progress)["training-operator"]
    objects = upstream(rendered)
    deployment, container = kustomize.container(objects, TRAINING_NAME, CONTAINER)
    client = plane.client()
    # Its namespace and the (empty) Secret its rotator fills, as the overlay makes them.
    for obj in objects:
        if obj["kind"] in ("Namespace", "Secret"):
            client.apply(obj)
    # Its CRDs as the stack installs them: beside the MPI Operator, without its MPIJob v1 (the stack's patch drops
    # it, and the operator runs only the schemes it keeps); otherwise every scheme's, MPIJob v1 in place of the
    # MPI Operator's v2beta1, since the operator then runs them all and exits on a kind it cannot watch.
    definitions = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
    for crd in definitions:
        _replace_if_other_versions(client, crd)
    apply.install_crds(client, definitions)

    serving = webhooks.serving(plane.folder, TRAINING_NAME)
    tmp = plane.folder / f"{TRAINING_NAME}-tmp"
    (tmp / "k8s-webhook-server").mkdir(parents=True, exist_ok=True)
    link = tmp / "k8s-webhook-server" / "serving-certs"
    if not link.exists():
        link.symlink_to(serving.cert_dir)
    _mount_stand_in(serving.cert_dir / "tls.crt")

    port, probes = free_port(), free_port()
    configs = []
    for config in objects:
        if config["kind"] in webhooks.KINDS:
            local = copy.deepcopy(config)
            local["metadata"]["name"] += LOCAL_SUFFIX
            configs.append(local)
    progress(f"starting the Training Operator {engines.pinned(ENGINE, MODULE)}")
    plane.start(
        TRAINING_NAME,
        [
            str(binary),
            *container.get("args", []),
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{probes}",
            f"--webhook-server-port={port}",
            "--leader-elect=false",
        ],
        env={
            **kustomize.env_of(deployment, container, f"{TRAINING_NAME}-simulated"),
            "KUBECONFIG": str(plane.kubeconfig),
            "TMPDIR": str(tmp),
        },
    )
    webhooks.wait_serving(port, serving)
    webhooks.register(client, configs, port, serving.ca_bundle)
    wait_probe(plane, TRAINING_NAME, probes)
    _wait_handlers(plane, port, serving, _served_paths(configs, container.get("args", [])))


def _served_paths(configs: list[dict[str, Any]], args: list[str]) -> list[str]:
    """The webhook paths of the schemes the operator runs (every scheme when no --enable-scheme is given)."""
    schemes = {a.split("=", 1)[1].lower() + "s" for a in args if a.startswith("--enable-scheme=")}
    paths = []
    for config in configs:
        for hook in config.get("webhooks", []):
            resources = {r for rule in hook.get("rules", []) for r in rule.get("resources", [])}
            if not schemes or resources <= schemes:
                paths.append(hook["clientConfig"]["service"]["path"])
    return paths


def _wait_handlers(plane: ControlPlane, port: int, serving: webhooks.Serving, paths: list[str]) -> None:
    """Until each path has its handler: the operator registers them only after its certificates are ready."""
    context = ssl.create_default_context(cafile=str(serving.cert_dir / "ca.crt"))
    deadline = time.monotonic() + READY_TIMEOUT
    waiting = list(paths)
    while waiting:
        plane.check_alive()
        for path in list(waiting):
            request = urllib.request.Request(
                f"https://127.0.0.1:{port}{path}", b"{}", {"Content-Type": "application/json"}, method="POST"
            )
            try:
                urllib.request.urlopen(request, context=context, timeout=2).close()
                waiting.remove(path)
            except urllib.error.HTTPError as exc:
                if exc.code != 404:
                    waiting.remove(path)
            except OSError:
                pass
        if waiting and time.monotonic() > deadline:
            raise StartError(f"the Training Operator serves no webhook at {', '.join(waiting)}")
        time.sleep(POLL)


def _mount_stand_in(cert: Path) -> None:
    """A certificate where the rotator checks for its mounted Secret: it only checks that the file exists."""
    target = ROTATOR_CERT_DIR / "tls.crt"
    if not target.exists():
        ROTATOR_CERT_DIR.mkdir(parents=True, exist_ok=True)
        target.write_bytes(cert.read_bytes())


def _replace_if_other_versions(client: Client, crd: dict[str, Any], timeout: float = 60.0) -> None:
    """Delete the cluster's CRD of the same name when it stores versions `crd` does not serve (the MPI Operator's
    MPIJob v2beta1 where the Training Operator's v1 goes): the API server refuses such an update."""
    live = client.get(client.path_of(crd))
    if live is None:
        return
    served = {v["name"] for v in crd["spec"]["versions"]}
    if set(status_of(live).get("storedVersions") or []) <= served:
        return
    client.delete(live, propagation="Background")
    deadline = time.monotonic() + timeout
    while client.get(client.path_of(crd)) is not None:
        if time.monotonic() > deadline:
            raise StartError(f"the CRD {crd['metadata']['name']} was not deleted in {timeout:.0f}s")
        time.sleep(POLL)
