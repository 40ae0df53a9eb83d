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


class _Answering(http.server.BaseHTTPRequestHandler):
    """A test server's handler: JSON answers, no access log."""

    def answer(self, code: int, obj: dict[str, object], headers: dict[str, str] | None = None) -> None:
        """Send `obj` as JSON with `code` and `headers`."""
        body = json.dumps(obj).encode()
        self.send_response(code)
        for name, value in {**(headers or {}), "Content-Type": "application/json"}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


NAMESPACE = {"kind": "Namespace", "metadata": {"name": "training"}}


class _Initializing(_Answering):
    """An API server whose watch cache fills for the first `busy` requests, as one does right after it starts."""

    busy = 2
    seen = 0

    def do_GET(self) -> None:
        type(self).seen += 1
        if type(self).seen <= type(self).busy:
            status = {"kind": "Status", "message": "storage is (re)initializing", "code": 429}
            self.answer(429, status, {"Retry-After": "1"})
        else:
            self.answer(200, NAMESPACE)


def _serving(handler: type[http.server.BaseHTTPRequestHandler]) -> tuple[Client, http.server.ThreadingHTTPServer]:
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
        assert client.get("/api/v1/namespaces/training") == NAMESPACE
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


class _KeepAlive(_Answering):
    """An HTTP/1.1 server that counts the connections it accepted and closes each after `per_connection` answers."""

    protocol_version = "HTTP/1.1"
    connections = 0
    per_connection = 1000

    def setup(self) -> None:
        super().setup()
        type(self).connections += 1
        self.answered = 0

    def do_GET(self) -> None:
        self.answered += 1
        self.answer(200, NAMESPACE)
        if self.answered >= type(self).per_connection:
            self.close_connection = True  # closed without a word, as an idle connection is


def test_requests_share_one_connection_per_thread() -> None:
    handler = type("Handler", (_KeepAlive,), {"connections": 0, "per_connection": 1000})
    client, server = _serving(handler)
    try:
        for _ in range(20):
            assert client.get("/api/v1/namespaces/training")
        assert handler.connections == 1
        other = threading.Thread(target=lambda: client.get("/api/v1/namespaces/training"))
        other.start()
        other.join()
        assert handler.connections == 2, "another thread, another connection"
    finally:
        server.shutdown()


def test_a_connection_the_server_closed_is_opened_again_without_an_error() -> None:
    handler = type("Handler", (_KeepAlive,), {"connections": 0, "per_connection": 3})
    client, server = _serving(handler)
    try:
        for _ in range(10):
            assert client.get("/api/v1/namespaces/training") == NAMESPACE
        assert handler.connections == 4  # 3 + 3 + 3 + 1
    finally:
        server.shutdown()
