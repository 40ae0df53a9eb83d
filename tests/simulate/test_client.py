"""The API client's readers of status: what the server sends before a controller has written a status."""

from __future__ import annotations

import http.server
import json
import ssl
import threading
import time
from pathlib import Path

import pytest

from components.simulate import client as client_module
from components.simulate.client import Client, ClientError, conditions_of, status_of


def test_a_new_crd_whose_conditions_are_null_has_no_conditions() -> None:
    # kube-apiserver serialises a CRD's unset condition list as null right after creation (seen in CI).
    crd = {"metadata": {"name": "jobtemplates.flow.volcano.sh"}, "status": {"acceptedNames": {}, "conditions": None}}
    assert conditions_of(crd) == []


def test_missing_objects_and_statuses_read_as_empty() -> None:
    assert status_of(None) == {} and conditions_of(None) == []
    assert status_of({"status": None}) == {} and conditions_of({"metadata": {}}) == []


def test_conditions_are_returned_as_the_server_wrote_them() -> None:
    established = {"type": "Established", "status": "True"}
    assert conditions_of({"status": {"conditions": [established]}}) == [established]
    assert status_of({"status": {"phase": "Bound"}})["phase"] == "Bound"


class _Initializing(http.server.BaseHTTPRequestHandler):
    """An API server whose watch cache fills for the first `busy` requests, as one does right after it starts."""

    busy = 2
    seen = 0

    def do_GET(self) -> None:
        type(self).seen += 1
        if type(self).seen <= type(self).busy:
            body = json.dumps({"kind": "Status", "message": "storage is (re)initializing", "code": 429}).encode()
            self.send_response(429)
            self.send_header("Retry-After", "1")
        else:
            body = json.dumps({"kind": "Namespace", "metadata": {"name": "training"}}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


def _serving(handler: type[_Initializing]) -> tuple[Client, http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Plain HTTP: the TLS context is only used for https addresses; the CA file is never read for this one.
    return Client(f"http://127.0.0.1:{server.server_port}", "token", _system_ca()), server


def _system_ca() -> Path:
    """The system's CA bundle, which the client loads (a plain-HTTP server never presents a certificate)."""
    paths = ssl.get_default_verify_paths()
    return Path(paths.cafile or paths.openssl_cafile)


def test_a_server_still_filling_its_cache_is_asked_again_not_reported() -> None:
    handler = type("Handler", (_Initializing,), {"busy": 2, "seen": 0})
    client, server = _serving(handler)
    try:
        started = time.monotonic()
        assert client.get("/api/v1/namespaces/training") == {"kind": "Namespace", "metadata": {"name": "training"}}
        assert handler.seen == 3 and time.monotonic() - started >= 2  # it waited the Retry-After each time
    finally:
        server.shutdown()


def test_a_server_that_stays_throttled_is_reported_after_the_limit(monkeypatch) -> None:
    monkeypatch.setattr(client_module, "THROTTLED_FOR", 2.5)
    handler = type("Handler", (_Initializing,), {"busy": 1000, "seen": 0})
    client, server = _serving(handler)
    try:
        with pytest.raises(ClientError, match="initializing") as raised:
            client.get("/api/v1/namespaces/training")
        assert raised.value.code == 429 and handler.seen == 3  # at 0, 1 and 2 s; a fourth would end after 2.5 s
    finally:
        server.shutdown()
