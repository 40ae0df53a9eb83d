"""A small client of the Kubernetes API: discovery, server-side apply, reads. Standard library only."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIELD_MANAGER = "gpu-training"


def status_of(obj: dict[str, Any] | None) -> dict[str, Any]:
    """An object's status; empty when the server has not written one (Go sends `null` for unset fields)."""
    return (obj or {}).get("status") or {}


def conditions_of(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    """An object's status conditions; empty when it has none yet."""
    return list(status_of(obj).get("conditions") or [])


AGAIN = frozenset({404, 409, 429, 503, 504})
"""Answers that mean "look again next round" to a loop that keeps the cluster in a state: gone meanwhile, a conflict,
too many requests (a new CRD's watch cache answers 429 while it initializes), unavailable, timed out."""


THROTTLED_FOR = 30.0
"""How long a request asked to come back later (429) is retried before its caller hears of it."""


def _retry_after(header: str | None) -> float:
    """The seconds a 429's Retry-After asks for, held within 0.2 s and 5 s (1 s when it names none)."""
    try:
        seconds = float(header) if header else 1.0
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.2), 5.0)


def one_round(sync: Callable[[], None], errors: list[str]) -> None:
    """One round of a background loop's `sync`, as an informer-driven controller would run it: what the next round
    may fix is let go, and anything else is noted in `errors` (the API server going away too)."""
    try:
        sync()
    except ClientError as exc:
        if exc.code not in AGAIN:
            errors.append(str(exc))
    except OSError as exc:
        errors.append(str(exc))


class ClientError(RuntimeError):
    """The API server refused a request; `status` is its Status object when it sent one."""

    def __init__(self, message: str, code: int = 0, status: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status or {}


@dataclass(frozen=True, slots=True)
class Resource:
    """Where a kind is served: its REST path segment and whether objects live in a namespace."""

    group_version: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None, name: str | None = None) -> str:
        """The collection or object path."""
        base = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        where = f"/namespaces/{namespace}" if self.namespaced and namespace else ""
        return f"{base}{where}/{self.plural}" + (f"/{name}" if name else "")


class Client:
    """Requests to one API server with a bearer token, trusting its CA file, over a kept-alive connection per
    thread."""

    def __init__(self, server: str, token: str, ca_file: Path) -> None:
        self.server = server
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self._tls = ssl.create_default_context(cafile=str(ca_file))
        self._resources: dict[tuple[str, str], Resource] = {}
        self._address = urllib.parse.urlsplit(server)
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection to the server, and whether it served a request before."""
        kept: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if kept is not None:
            return kept, True
        host, port = self._address.hostname or "127.0.0.1", self._address.port
        made = (
            http.client.HTTPSConnection(host, port, context=self._tls, timeout=60)
            if self._address.scheme == "https"
            else http.client.HTTPConnection(host, port, timeout=60)
        )
        self._local.connection = made
        with self._lock:
            self._opened.append(made)
        return made, False

    def close(self) -> None:
        """Close every thread's connection (a request after it opens a new one)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()
        self._local = threading.local()

    def _exchange(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, Any, bytes]:
        """One request and its status, headers and body. A kept-alive connection the server has since closed is
        opened again once: a new TLS handshake per request was most of our client's and a third of the API
        server's CPU per request."""
        while True:
            connection, reused = self._connection()
            try:
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                return response.status, response.headers, response.read()
            except (http.client.HTTPException, OSError) as exc:
                connection.close()
                self._local.connection = None
                with self._lock:
                    if connection in self._opened:
                        self._opened.remove(connection)
                # Only a connection that served before is tried again: what fails on a fresh one is the server's.
                if reused and isinstance(exc, ConnectionError | http.client.RemoteDisconnected):
                    continue
                if isinstance(exc, http.client.HTTPException):
                    raise ConnectionError(f"{method} {path}: {exc!r}") from exc
                raise

    def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "", accept: str = ""
    ) -> bytes:
        """The response body of `method path`, or ClientError with the server's reason."""
        headers = dict(self._headers)
        if content_type:
            headers["Content-Type"] = content_type
        if accept:
            headers["Accept"] = accept
        deadline = time.monotonic() + THROTTLED_FOR
        while True:
            code, response_headers, raw = self._exchange(method, path, body, headers)
            if code < 400:
                return raw
            try:
                status = json.loads(raw)
            except ValueError:
                status = {"message": raw.decode(errors="replace")}
            # 429 is the server asking us to come back (a watch cache answers "storage is (re)initializing" with
            # Retry-After: 1 while it fills, right after the API server starts): client-go waits and retries it.
            wait = _retry_after(response_headers.get("Retry-After"))
            if code == 429 and time.monotonic() + wait < deadline:
                time.sleep(wait)
                continue
            message = (status.get("message") if isinstance(status, dict) else None) or f"{method} {path}: HTTP {code}"
            raise ClientError(message, code, status if isinstance(status, dict) else {})

    def get_text(self, path: str) -> str:
        """A plain-text endpoint (/readyz)."""
        return self.request("GET", path).decode()

    def get(self, path: str) -> dict[str, Any] | None:
        """The object at `path`, or None when it does not exist."""
        try:
            return dict(json.loads(self.request("GET", path)))
        except ClientError as exc:
            if exc.code == 404:
                return None
            raise

    def resource(self, api_version: str, kind: str) -> Resource:
        """Where `kind` of `api_version` is served (discovery, refreshed once on a miss)."""
        found = self._resources.get((api_version, kind))
        if found is None:
            self._discover(api_version)
            found = self._resources.get((api_version, kind))
        if found is None:
            raise ClientError(f"the API server serves no {kind} in {api_version}", 404)
        return found

    def _discover(self, api_version: str) -> None:
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        listing = self.get(path)
        for item in (listing or {}).get("resources", []):
            if "/" not in item["name"]:
                self._resources[(api_version, item["kind"])] = Resource(
                    api_version, item["name"], bool(item["namespaced"])
                )

    def path_of(self, obj: dict[str, Any], named: bool = True) -> str:
        """The REST path of `obj` (or of its collection)."""
        meta = obj["metadata"]
        res = self.resource(obj["apiVersion"], obj["kind"])
        return res.path(meta.get("namespace"), meta["name"] if named else None)

    def apply(self, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        """Server-side apply `obj` as our field manager, forcing conflicts; the object as stored."""
        query = {"fieldManager": FIELD_MANAGER, "force": "true"}
        if dry_run:
            query["dryRun"] = "All"
        body = json.dumps(obj).encode()
        path = f"{self.path_of(obj)}?{urllib.parse.urlencode(query)}"
        return dict(json.loads(self.request("PATCH", path, body, "application/apply-patch+yaml")))

    def list_metadata(self, path: str) -> list[dict[str, Any]]:
        """The metadata of every object in the collection at `path` (no specs: a list of CRDs without their
        schemas)."""
        partial = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
        listing = json.loads(self.request("GET", path, accept=partial))
        return [dict(item.get("metadata") or {}) for item in listing.get("items") or []]

    def list(self, api_version: str, kind: str, namespace: str | None = None, selector: str = "") -> list[Any]:
        """Every object of a kind (in a namespace, matching a label selector)."""
        path = self.resource(api_version, kind).path(namespace)
        if selector:
            path += "?" + urllib.parse.urlencode({"labelSelector": selector})
        return list((self.get(path) or {}).get("items", []))

    def delete(self, obj: dict[str, Any], propagation: str = "Foreground") -> None:
        """Delete `obj` (by default its dependents first); a missing object is no error."""
        body = json.dumps({"propagationPolicy": propagation}).encode()
        try:
            self.request("DELETE", self.path_of(obj), body, "application/json")
        except ClientError as exc:
            if exc.code != 404:
                raise
