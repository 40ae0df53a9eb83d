"""Admission webhooks of controllers run out of cluster: a local CA, serving certificates for 127.0.0.1, and
the controllers' own webhook configurations pointed at them.

In a cluster, a controller's webhooks are a Service the API server calls, trusting a CA that cert-manager or the
controller's own rotator injects. Here the controller is a process on 127.0.0.1: it serves with a certificate
signed by the run's CA (kept in the run folder), and each webhook of its upstream configuration calls
`https://127.0.0.1:<port><path>` with that CA as its bundle, so the API server admits objects through the real
webhook code.
"""

from __future__ import annotations

import base64
import copy
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.simulate.client import Client
from components.simulate.controlplane import NEW_P256_KEY, POLL

KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
SERVE_TIMEOUT = 120.0


class CertificateError(RuntimeError):
    """openssl could not make the run's CA or a serving certificate."""


@dataclass(frozen=True, slots=True)
class Serving:
    """Where a controller finds its serving certificate, and the CA bundle its webhooks are called with."""

    cert_dir: Path
    """Holds tls.crt and tls.key (the names controller-runtime reads) and ca.crt."""
    ca_bundle: str
    """The run CA's PEM, base64-encoded, as a webhook's clientConfig.caBundle takes it."""


def _openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CertificateError(f"openssl {args[0]} failed: {done.stderr.strip()}")


def _ca(folder: Path) -> tuple[Path, Path]:
    """The run's CA (made once per run folder)."""
    cert, key = folder / "webhook-ca.crt", folder / "webhook-ca.key"
    if not cert.exists():
        _openssl(
            "req", "-x509", *NEW_P256_KEY, "-nodes", "-days", "2", "-subj", "/CN=gpu-training simulate CA",
            "-keyout", str(key), "-out", str(cert),
        )  # fmt: skip
    return cert, key


_SIGNING = threading.Lock()
"""Controllers start at once, in threads: one CA per run folder, and its serial file, must not be made twice."""


def serving(folder: Path, name: str) -> Serving:
    """A serving certificate for 127.0.0.1 and localhost, signed by the run's CA, in `<folder>/<name>-certs/`."""
    with _SIGNING:
        return _serving(folder, name)


def _serving(folder: Path, name: str) -> Serving:
    ca_cert, ca_key = _ca(folder)
    out = folder / f"{name}-certs"
    out.mkdir(parents=True, exist_ok=True)
    request, extensions = out / "tls.csr", out / "san.cnf"
    extensions.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    _openssl(
        "req", *NEW_P256_KEY, "-nodes", "-subj", f"/CN={name}",
        "-keyout", str(out / "tls.key"), "-out", str(request),
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", str(request), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
        "-days", "2", "-extfile", str(extensions), "-out", str(out / "tls.crt"),
    )  # fmt: skip
    (out / "ca.crt").write_bytes(ca_cert.read_bytes())
    return Serving(out, base64.b64encode(ca_cert.read_bytes()).decode())


def localize(config: dict[str, Any], port: int, ca_bundle: str) -> dict[str, Any]:
    """`config` (a Mutating or ValidatingWebhookConfiguration) with every webhook calling
    https://127.0.0.1:<port><its service path> and trusting `ca_bundle`."""
    local = copy.deepcopy(config)
    for hook in local.get("webhooks", []):
        client_config = hook.setdefault("clientConfig", {})
        service = client_config.pop("service", None) or {}
        client_config["url"] = f"https://127.0.0.1:{port}{service.get('path', '/')}"
        client_config["caBundle"] = ca_bundle
    return local


def register(client: Client, configs: Iterable[dict[str, Any]], port: int, ca_bundle: str) -> list[str]:
    """Apply each webhook configuration among `configs`, localized; the names applied."""
    names = []
    for config in configs:
        if config.get("kind") in KINDS:
            client.apply(localize(config, port, ca_bundle))
            names.append(config["metadata"]["name"])
    return names


def wait_serving(port: int, serving_cert: Serving, timeout: float = SERVE_TIMEOUT) -> None:
    """Until a TLS server on 127.0.0.1:`port` completes a handshake with the run's CA (TimeoutError otherwise)."""
    context = ssl.create_default_context(cafile=str(serving_cert.cert_dir / "ca.crt"))
    deadline = time.monotonic() + timeout
    while True:
        try:
            with (
                socket.create_connection(("127.0.0.1", port), timeout=2) as raw,
                context.wrap_socket(raw, server_hostname="127.0.0.1"),
            ):
                return
        except (OSError, ssl.SSLError):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no webhook server on 127.0.0.1:{port} after {timeout:.0f}s") from None
            time.sleep(POLL)
