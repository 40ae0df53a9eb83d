"""A local Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler.

Every process listens on 127.0.0.1 only, on ports the kernel hands out, and writes its log beside the
kubeconfig in the run folder. Clients authenticate with a static token in `system:masters`; the API
server makes its own serving certificate, which the kubeconfig trusts.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from components.simulate import engines
from components.simulate.client import Client, ClientError

SERVICE_RANGE = "10.96.0.0/16"
ETCD_DATA = "etcd"
"""etcd's data folder in the run folder."""
READY_TIMEOUT = 120.0
POLL = 0.1
"""How often a wait for a process of the run looks again: each look is a log read, a connect or a request to a
server on this machine, so looking often costs little and every wait ends within a tenth of a second of its
event (at 0.5 s, a run's dozen waits in a row added seconds)."""


NEW_P256_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1")
"""`openssl req`'s arguments for a new P-256 key: made in about a millisecond where RSA-2048 takes tens to hundreds
(a run makes the API server's certificate, a webhook CA and a certificate per webhook server); every engine here is
Go, whose TLS takes either."""


class StartError(RuntimeError):
    """A control-plane process did not start or become ready; the message ends with its log's tail."""


@dataclass
class Process:
    """A started engine process and its log."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 20) -> str:
        """The last lines of its log."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class ControlPlane:
    """A running control plane: where it lives, how to reach it, and the processes to stop."""

    folder: Path
    server: str
    token: str
    ca_file: Path
    kubeconfig: Path
    processes: list[Process] = field(default_factory=list)
    _client: Client | None = field(default=None, repr=False)

    def client(self) -> Client:
        """A client of this control plane's API server (one per plane: it keeps what discovery found)."""
        if self._client is None:
            self._client = Client(self.server, self.token, self.ca_file)
        return self._client

    def drop_client(self) -> None:
        """Close the plane's client: the next `client()` is a new one, which discovers the API afresh."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def start(
        self, name: str, command: list[str], env: dict[str, str] | None = None, pass_fds: tuple[int, ...] = ()
    ) -> Process:
        """Start `command` as a process of this control plane (with `env` added to ours, and `pass_fds` left
        open in it), logging to <folder>/<name>.log. The log of an earlier process of that name (on a plane that
        tests share) is kept as <name>.<n>.log, so what a test's process wrote outlives the next test."""
        log = self.folder / f"{name}.log"
        if log.exists() and not any(p.name == name for p in self.processes):
            n = 1
            while (kept := self.folder / f"{name}.{n}.log").exists():
                n += 1
            log.rename(kept)
        with log.open("wb") as out:
            popen = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**engines.GO_RUNTIME, **os.environ, **(env or {})},
                pass_fds=pass_fds,
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def check_alive(self) -> None:
        """Raise StartError naming any process that has exited."""
        for process in self.processes:
            if process.popen.poll() is not None:
                raise StartError(f"{process.name} exited with {process.popen.returncode}:\n{process.tail()}")

    def stop(self, keep_data: bool = False) -> None:
        """Stop every process this control plane started: etcd last and cleanly, the rest at once (a throwaway
        cluster has nothing to hand over, and the API server's graceful shutdown alone took 10 s); then remove
        etcd's data unless `keep_data`."""
        self.drop_client()
        for process in reversed(self.processes):
            if process.popen.poll() is None:
                os.killpg(process.popen.pid, signal.SIGTERM if process.name == "etcd" else signal.SIGKILL)
        deadline = time.monotonic() + 10
        for process in reversed(self.processes):
            try:
                process.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.popen.pid, signal.SIGKILL)
                process.popen.wait()
        self.processes.clear()
        if not keep_data:
            shutil.rmtree(self.folder / ETCD_DATA, ignore_errors=True)


def wait_log(plane: ControlPlane, process: Process, line: str, what: str, timeout: float = READY_TIMEOUT) -> None:
    """Return once `process` has logged `line` (a controller saying it runs); StartError naming `what` with the
    log's tail when it has not within `timeout`, or when any process of the plane exits."""
    deadline = time.monotonic() + timeout
    needle, seen, carry = line.encode(), 0, b""
    while True:
        with process.log.open("rb") as log:  # only what was written since the last look
            log.seek(seen)
            fresh = log.read()
        seen += len(fresh)
        if needle in carry + fresh:
            return
        carry = (carry + fresh)[-len(needle) :]
        plane.check_alive()
        if time.monotonic() > deadline:
            raise StartError(f"{what} did not start in {timeout:.0f}s:\n{process.tail()}")
        time.sleep(POLL)


# Listening ports: 10000-31999 in 11 blocks of 2000, below Linux's ephemeral range (32768 and up unless an
# administrator lowers it).
PORT_BASE, PORT_BLOCK, PORT_BLOCKS = 10000, 2000, 11


def _listen_block() -> range:
    """This process's block of listening ports: one per pytest-xdist worker, else one at random. A port bind(0)
    picks is one the kernel may also give the next outgoing connection (a plane makes thousands) before the
    process told to listen on it binds, seconds later; a port another worker was just given is one it may not
    have bound yet. Both happened in CI: "bind: address already in use"."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else secrets.randbelow(PORT_BLOCKS)
    start = PORT_BASE + (index % PORT_BLOCKS) * PORT_BLOCK
    return range(start, start + PORT_BLOCK)


class _Ports:
    """Hands out this process's block in turn from a random start, so a port comes round again only after the
    whole block has."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.block: range | None = None
        self.turn = 0

    def take(self) -> int | None:
        """The next port of the block that binds now; None when none does."""
        with self.lock:
            if self.block is None:
                self.block, self.turn = _listen_block(), secrets.randbelow(PORT_BLOCK)
            for _ in self.block:
                port = self.block[self.turn % len(self.block)]
                self.turn += 1
                with socket.socket() as probe:
                    try:
                        probe.bind(("127.0.0.1", port))
                    except OSError:
                        continue
                return port
            return None


_PORTS = _Ports()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, and that this process has not handed out lately."""
    if (port := _PORTS.take()) is not None:
        return port
    with socket.socket() as probe:  # the whole block is taken: let the kernel choose
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(
    folder: Path,
    binaries: dict[str, Path],
    progress: Callable[[str], None] = lambda _: None,
    *,
    seed: Path | None = None,
) -> ControlPlane:
    """Start etcd, the API server, the controller manager and the scheduler in `folder`; wait until ready. With
    `seed`, etcd starts from a copy of that data folder (what an earlier control plane stored: simulate/seed.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    if seed is not None:
        copy_data(seed, folder / ETCD_DATA)
    certs = folder / "certs"
    certs.mkdir(exist_ok=True)
    token = secrets.token_hex(16)
    (folder / "tokens.csv").write_text(f'{token},admin,admin,"system:masters"\n')
    sa_key = certs / "service-account.key"
    # P-256: the API server signs service-account tokens with ES256 as well as RS256, and the key is made in a
    # millisecond where RSA-2048 took a tenth of a second or more.
    _openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(sa_key)])  # SEC1, as it reads EC
    # The API server's serving certificate, P-256 and self-signed, which the kubeconfig trusts. Left to make its own,
    # it makes an RSA-2048 one, and signing with it was 6% of its CPU in a run: every request of our client (and of
    # kubectl) opens a connection, and each handshake signs once.
    _openssl(
        ["req", "-x509", *NEW_P256_KEY, "-nodes", "-days", "2",
         "-subj", "/CN=kube-apiserver", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(certs / "apiserver.key"), "-out", str(certs / "apiserver.crt")]
    )  # fmt: skip
    api_port, etcd_port, peer_port = free_port(), free_port(), free_port()
    server = f"https://127.0.0.1:{api_port}"
    plane = ControlPlane(folder, server, token, certs / "apiserver.crt", folder / "kubeconfig")
    try:
        progress("starting etcd")
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        plane.start(
            "etcd",
            [
                str(binaries["etcd"]),
                f"--data-dir={folder / ETCD_DATA}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",  # a throwaway cluster: durability buys nothing and costs seconds
            ],
        )
        progress("starting kube-apiserver")
        plane.start(
            "kube-apiserver",
            [
                str(binaries["kube-apiserver"]),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={api_port}",
                f"--tls-cert-file={certs / 'apiserver.crt'}",
                f"--tls-private-key-file={certs / 'apiserver.key'}",
                f"--token-auth-file={folder / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-cluster-ip-range={SERVICE_RANGE}",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={sa_key}",
                f"--service-account-signing-key-file={sa_key}",
                "--allow-privileged=true",
                "--endpoint-reconciler-type=none",
                # A new node is tainted not-ready until the node lifecycle controller sees it Ready; kwok's
                # nodes are Ready at once and that controller is off (it would only fight kwok).
                "--disable-admission-plugins=TaintNodesByCondition",
            ],
        )
        _wait_ready(plane)
        _write_kubeconfig(plane)
        progress("starting kube-controller-manager and kube-scheduler")
        kubeconfig = f"--kubeconfig={plane.kubeconfig}"
        plane.start(
            "kube-controller-manager",
            [
                str(binaries["kube-controller-manager"]),
                kubeconfig,
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--service-account-private-key-file={sa_key}",
                f"--root-ca-file={plane.ca_file}",
                "--use-service-account-credentials=false",
                # No cloud, no nodes that really run pods: these controllers would only fight kwok.
                "--controllers=*,-nodeipam,-nodelifecycle,-cloud-node-lifecycle,-service-lb-controller,-route",
                # A claim applied beside its pre-bound stand-in volume can miss the binder's event and wait for its
                # resync (15 s by default): the only wait of a run that no event ends.
                "--pvclaimbinder-sync-period=1s",
            ],
        )
        plane.start(
            "kube-scheduler",
            [
                str(binaries["kube-scheduler"]),
                kubeconfig,
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
            ],
        )
        _wait_default_account(plane)
    except BaseException:
        plane.stop()
        raise
    return plane


def copy_data(source: Path, target: Path) -> None:
    """Copy an etcd data folder, keeping the zeros of its preallocated WAL as holes (64 MB a segment, nearly all
    unwritten), so that a copy per control plane costs little time and disk."""
    done = subprocess.run(
        ["cp", "-r", "--sparse=always", str(source), str(target)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise StartError(f"could not copy etcd's seed {source}: {done.stderr.strip()}")


def wait_probe(
    plane: ControlPlane, name: str, port: int, timeout: float = READY_TIMEOUT, path: str = "/readyz"
) -> None:
    """Until the process `name`'s probe on 127.0.0.1:`port` (`path`, its readiness by default) answers 200;
    StartError, with its log's tail, when it exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        plane.check_alive()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            tail = "\n".join((plane.folder / f"{name}.log").read_text(errors="replace").splitlines()[-20:])
            raise StartError(f"{name} not ready after {timeout:.0f}s:\n{tail}")
        time.sleep(POLL)


def _openssl(args: list[str]) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise StartError(f"openssl {args[0]} failed: {done.stderr.strip()}")


def _wait_ready(plane: ControlPlane) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        plane.check_alive()
        if plane.ca_file.exists():
            try:
                if plane.client().get_text("/readyz") == "ok":
                    return
            except (ClientError, OSError):
                pass
        time.sleep(POLL)
    raise StartError(f"kube-apiserver not ready after {READY_TIMEOUT:.0f}s:\n{plane.processes[-1].tail()}")


def _wait_default_account(plane: ControlPlane) -> None:
    """Pods need the namespace's default ServiceAccount, which the controller manager makes."""
    deadline = time.monotonic() + READY_TIMEOUT
    client = plane.client()
    while time.monotonic() < deadline:
        plane.check_alive()
        if client.get("/api/v1/namespaces/default/serviceaccounts/default") is not None:
            return
        time.sleep(POLL)
    raise StartError("the controller manager made no default ServiceAccount in time")


def _write_kubeconfig(plane: ControlPlane) -> None:
    plane.kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: simulate\n  cluster:\n    server: {plane.server}\n"
        f"    certificate-authority: {plane.ca_file}\n"
        f"users:\n- name: admin\n  user:\n    token: {plane.token}\n"
        "contexts:\n- name: simulate\n  context: {cluster: simulate, user: admin}\n"
        "current-context: simulate\n"
    )
    plane.kubeconfig.chmod(0o600)
