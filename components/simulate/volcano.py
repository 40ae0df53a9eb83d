"""Volcano, as the stack's Helm release installs it: its scheduler, controller manager and admission webhooks.

The configuration is the pinned chart's (components/versions.py VOLCANO), read from the chart folder of the
volcano.sh/volcano module at that version in the Go module cache, with the stack's release values over the
chart's own: the scheduler's actions and tiers, each Deployment's flags, the CRDs and the webhook
configurations the chart installs. The binaries are built from the nearest release that builds from the Go
module proxy (VERSION_NOTE). Every process listens on 127.0.0.1 only, without leader election.
"""

from __future__ import annotations

import functools
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components import versions
from components.addons.install import HelmRelease
from components.render import Rendered
from components.simulate import apply, engines, kustomize, modfiles, webhooks
from components.simulate.client import Client, status_of
from components.simulate.controlplane import POLL, ControlPlane, StartError, free_port

MODULE = "volcano.sh/volcano"
ENGINE = engines.Engine(
    "volcano",
    {
        "vc-scheduler": f"{MODULE}/cmd/scheduler",
        "vc-controller-manager": f"{MODULE}/cmd/controller-manager",
        "vc-webhook-manager": f"{MODULE}/cmd/webhook-manager",
    },
)
CHART_VERSION = f"v{versions.VOLCANO.version}"
CHART_PATH = "installer/helm/chart/volcano"
VERSION_NOTE: str | None = (
    f"Volcano chart {versions.VOLCANO.version}: {MODULE} {CHART_VERSION} does not build from the Go module proxy "
    "(it takes volcano.sh/apis from its repository's staging/ folder, which the module leaves out, and the proxy "
    "serves no volcano.sh/apis v1.15.x); running the binaries of v1.14.1 (with volcano.sh/apis v1.14.0) under the "
    f"{versions.VOLCANO.version} chart's configuration, CRDs and webhooks (a chart flag v1.14.1 lacks is left out, "
    "and named)"
)
READY_TIMEOUT = 120.0
BUILT = engines.pinned(ENGINE, MODULE)
"""The release the binaries are built from (the engine's go.mod)."""


class ChartError(RuntimeError):
    """The chart has a template construct this reader does not evaluate (a newer chart): say so, never guess."""


def release_of(rendered: Rendered) -> HelmRelease | None:
    """The stack's Volcano release, if it installs one."""
    return next((r for r in rendered.addons.releases if r.chart.chart == versions.VOLCANO.chart), None)


def installed(rendered: Rendered) -> bool:
    """Whether the stack installs Volcano."""
    return release_of(rendered) is not None


def chart_dir() -> Path:
    """The pinned chart's folder in the Go module cache."""
    return engines.download(MODULE, CHART_VERSION) / CHART_PATH


def values(release: HelmRelease, chart: Path) -> dict[str, Any]:
    """The release's values over the chart's defaults, as Helm merges them."""
    return kustomize.merged(yaml.safe_load((chart / "values.yaml").read_text()) or {}, release.values)


def _lookup(path: str, scope: dict[str, Any]) -> Any:
    found: Any = scope
    for part in path.strip(".").split("."):
        found = found.get(part) if isinstance(found, dict) else None
    return found


_TAG = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
_IF = re.compile(r'^if (\.[\w.]+)(?: \| regexMatch "([^"]*)")?$')
_TO_YAML = re.compile(r"^toYaml (\.[\w.]+) \| nindent (\d+)$")


def render_template(text: str, scope: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects of a chart template written only with `if .X`, `if .X | regexMatch "re"`, `end`,
    `toYaml .X | nindent N` and plain `.X` references (ChartError on anything else).

    Helm itself is a large build for a file of this shape; this evaluates those constructs exactly and
    refuses the rest, so a chart that outgrows it fails loudly."""
    out: list[str] = []
    taken: list[bool] = []
    for line in text.splitlines():
        tags = _TAG.findall(line)
        only = line.strip()
        if len(tags) == 1 and _TAG.fullmatch(only):
            action = tags[0]
            if action == "end":
                taken.pop()
                continue
            if condition := _IF.match(action):
                value = _lookup(condition[1], scope)
                met = bool(re.search(condition[2], str(value or ""))) if condition[2] is not None else bool(value)
                taken.append(met)
                continue
            if dumped := _TO_YAML.match(action):
                if all(taken):
                    dump = yaml.safe_dump(_lookup(dumped[1], scope), sort_keys=False).rstrip("\n")
                    out.extend(" " * int(dumped[2]) + row for row in dump.splitlines())
                continue
        if not all(taken):
            continue
        for action in tags:
            if not re.fullmatch(r"\.[\w.]+", action):
                raise ChartError(f"unsupported template action {{{{ {action} }}}} in: {only}")
        out.append(_TAG.sub(lambda m: str(_lookup(m[1], scope)), line))
    if taken:
        raise ChartError("unbalanced if/end in the template")
    return [doc for doc in yaml.safe_load_all("\n".join(out)) if doc]


def _flag(args: list[str], name: str, value: Any) -> None:
    """`--name=value` when the chart would pass it (its `if .Values...` guards: a value set and not false)."""
    if value not in (None, "", False):
        args.append(f"--{name}={value}")


@functools.cache
def _flags(binary: Path) -> frozenset[str]:
    """The long flags `binary --help` lists."""
    usage = subprocess.run([str(binary), "--help"], capture_output=True, text=True, check=False)
    return frozenset(re.findall(r"^\s+(?:-\w, )?--([\w-]+)", usage.stdout + usage.stderr, re.MULTILINE))


def chart_crds(chart: Path | None = None) -> list[dict[str, Any]]:
    """The chart's own CRDs (its jobflow subchart's too): the controllers watch kinds beyond those our objects use
    (cronjobs, jobflows, numatopologies...), and an informer on a missing kind never syncs."""
    chart = chart or chart_dir()
    files = sorted((chart / "crd" / "bases").glob("*.yaml")) + sorted(chart.glob("charts/*/crd/bases/*.yaml"))
    return [modfiles.documents(f)[0] for f in files]


def _install_crds(client: Client, chart: Path) -> None:
    apply.install_crds(client, chart_crds(chart))


def _wait(what: str, ready: Callable[[], bool], plane: ControlPlane) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while not ready():
        plane.check_alive()
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {p.name}\n{p.tail()}" for p in plane.processes if p.name.startswith("volcano"))
            raise StartError(f"Volcano: {what} not after {READY_TIMEOUT:.0f}s\n{logs}")
        time.sleep(POLL)


@dataclass
class _Launch:
    """What every Volcano process of one start shares: the cluster, the chart and its values."""

    plane: ControlPlane
    client: Client
    chart: Path
    release: HelmRelease
    config: dict[str, Any]
    env: dict[str, str]
    progress: Callable[[str], None]

    @property
    def custom(self) -> dict[str, Any]:
        """The chart's `custom` values."""
        return dict(self.config.get("custom") or {})

    @property
    def common(self) -> list[str]:
        """The flags every process takes: our kubeconfig, and the scheduler name when the values set one."""
        name = self.custom.get("scheduler_name")
        return [f"--kubeconfig={self.plane.kubeconfig}", *([f"--scheduler-name={name}"] if name else [])]

    def run(self, name: str, binary: Path, args: list[str], env: dict[str, str]) -> None:
        """Start `binary` with the flags it knows among `args`, saying which of the chart's it does not."""
        known = _flags(binary)
        unknown = [a for a in args if a.startswith("--") and a[2:].split("=", 1)[0] not in known]
        for flag in unknown:
            self.progress(
                f"{name}: {flag} (chart {versions.VOLCANO.version}) is no flag of {binary.name} {BUILT}; left out"
            )
        self.plane.start(name, [str(binary), *(a for a in args if a not in unknown)], env=env)

    def conf(self, folder: str, override: Any, chart_file: str) -> Path:
        """A configuration file as the chart's ConfigMap holds it: the values' override, else the chart's file."""
        # Alone in its folder, as the ConfigMap's mount is: the processes watch the whole folder, and in the
        # run folder every line of their own logs would wake them.
        path = self.plane.folder / folder / Path(chart_file).name
        path.parent.mkdir(exist_ok=True)
        path.write_text(override or (self.chart / chart_file).read_text())
        return path

    def webhooks(self, binary: Path) -> None:
        """The webhook manager on a local port, and the chart's webhook configurations pointed at it."""
        custom, basic = self.custom, self.config.get("basic") or {}
        serving = webhooks.serving(self.plane.folder, "volcano-admission")
        port = free_port()
        scope = {"Values": self.config, "Release": {"Name": self.release.name, "Namespace": self.release.namespace}}
        # Registered before the server answers (failurePolicy Fail): nothing of Volcano's is created until it
        # does, and the manager itself waits for these configurations to exist before serving.
        configs = render_template((self.chart / "templates" / "webhooks.yaml").read_text(), scope)
        webhooks.register(self.client, configs, port, serving.ca_bundle)
        conf = self.conf(
            "volcano-admission-config", custom.get("admission_config_override"), basic["admission_config_file"]
        )
        args = [
            *self.common,
            f"--enabled-admission={custom['enabled_admissions']}",
            f"--tls-cert-file={serving.cert_dir / 'tls.crt'}",
            f"--tls-private-key-file={serving.cert_dir / 'tls.key'}",
            f"--ca-cert-file={serving.cert_dir / 'ca.crt'}",
            f"--admission-conf={conf}",
            f"--webhook-namespace={self.release.namespace}",
            f"--webhook-service-name={self.release.name}-admission-service",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{free_port()}",
            "--logtostderr",
            "--listen-address=127.0.0.1",
            f"--port={port}",
        ]
        _flag(args, "feature-gates", custom.get("admission_feature_gates"))
        args.append(f"-v={custom.get('admission_log_level', 4)}")
        self.run("volcano-admission", binary, args, self.env)
        try:
            webhooks.wait_serving(port, serving, READY_TIMEOUT)
        except TimeoutError as exc:
            self.plane.check_alive()
            raise StartError(f"Volcano's webhooks: {exc}") from None

    def scheduler(self, binary: Path) -> None:
        """vc-scheduler with the values' actions and tiers; until it has made its default queue."""
        custom, basic = self.custom, self.config.get("basic") or {}
        conf = self.conf(
            "volcano-scheduler-config", custom.get("scheduler_config_override"), basic["scheduler_config_file"]
        )
        args = [
            *self.common,
            "--logtostderr",
            f"--scheduler-conf={conf}",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{free_port()}",
            f"--listen-address=127.0.0.1:{free_port()}",
            "--leader-elect=false",
            f"--cache-dump-dir={self.plane.folder}",
        ]
        _flag(args, "enable-metrics", custom.get("scheduler_metrics_enable"))
        _flag(args, "enable-pprof", custom.get("scheduler_pprof_enable"))
        for flag, key in (
            ("kube-api-qps", "scheduler_kube_api_qps"),
            ("kube-api-burst", "scheduler_kube_api_burst"),
            ("schedule-period", "scheduler_schedule_period"),
            ("node-worker-threads", "scheduler_node_worker_threads"),
            ("plugins-dir", "scheduler_plugins_dir"),
            ("feature-gates", "scheduler_feature_gates"),
            ("ignored-provisioners", "ignored_provisioners"),
            ("scheduler-sharding-mode", "scheduler_sharding_mode"),
        ):
            _flag(args, flag, custom.get(key))
        if custom.get("scheduler_percentage_nodes_to_find") is not None:
            args.append(f"--percentage-nodes-to-find={custom['scheduler_percentage_nodes_to_find']}")
        args.append(f"-v={custom.get('scheduler_log_level', 3)}")
        self.run("volcano-scheduler", binary, args, self.env)
        # It makes the root and default queues before it starts its informers.
        _wait("the scheduler's default queue", lambda: self.client.get(queue_path("default")) is not None, self.plane)

    def controllers(self, binary: Path) -> None:
        """vc-controller-manager with the chart's controllers; until its queue controller has opened a queue."""
        custom = self.custom
        override = custom.get("controller_config_override")
        self.client.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{self.release.name}-controller-configmap", "namespace": self.release.namespace},
                "data": {"volcano-controller.conf": yaml.safe_dump(override, sort_keys=False) if override else ""},
            }
        )
        args = [
            *self.common,
            "--logtostderr",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{free_port()}",
            f"--listen-address=127.0.0.1:{free_port()}",
            "--leader-elect=false",
        ]
        _flag(args, "enable-metrics", custom.get("controller_metrics_enable"))
        for flag, key in (
            ("kube-api-qps", "controller_kube_api_qps"),
            ("kube-api-burst", "controller_kube_api_burst"),
            ("worker-threads", "controller_worker_threads"),
            ("worker-threads-for-gc", "controller_worker_threads_for_gc"),
            ("worker-threads-for-podgroup", "controller_worker_threads_for_podgroup"),
            ("controllers", "controller_enabled_controllers"),
        ):
            _flag(args, flag, custom.get(key))
        if custom.get("sharding_configmap_enable"):
            args += [
                f"--sharding-configmap={self.release.name}-sharding-configmap",
                f"--sharding-configmap-namespace={self.release.namespace}",
            ]
        args.append(f"-v={custom.get('controller_log_level', 4)}")
        env = {**self.env, "KUBE_POD_NAMESPACE": self.release.namespace, "HELM_RELEASE_NAME": self.release.name}
        self.run("volcano-controller-manager", binary, args, env)
        # The queue controller opens each queue once its informers have synced: the controllers are working.
        _wait("the default queue Open", lambda: queue_open(self.client, "default"), self.plane)


def queue_path(name: str) -> str:
    """The REST path of a Volcano Queue."""
    return f"/apis/scheduling.volcano.sh/v1beta1/queues/{name}"


def queue_open(client: Client, name: str) -> bool:
    """Whether the queue exists and its status says Open (what Volcano's PodGroup webhook requires)."""
    queue = client.get(queue_path(name)) or {}
    return status_of(queue).get("state") == "Open"


def start(plane: ControlPlane, rendered: Rendered, progress: Callable[[str], None] = lambda _: None) -> None:
    """Build (cached) and start Volcano against `plane` as the stack's release configures it; return once
    its webhooks answer, the scheduler has made its default queue and the controllers have opened it."""
    release = release_of(rendered)
    if release is None:
        raise ValueError("the stack installs no Volcano")
    binaries = engines.build(ENGINE, progress)
    chart = chart_dir()
    client = plane.client()
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": release.namespace}})
    progress("installing Volcano's CRDs")
    _install_crds(client, chart)
    # klog's log-level sockets default to /tmp/klog-socks, where two runs would collide.
    sockets = plane.folder / "volcano-klog-socks"
    sockets.mkdir(exist_ok=True)
    launch = _Launch(
        plane, client, chart, release, values(release, chart), {"DEBUG_SOCKET_DIR": str(sockets)}, progress
    )
    custom = launch.custom
    if custom.get("admission_enable"):
        progress("starting Volcano's admission webhooks")
        launch.webhooks(binaries["vc-webhook-manager"])
    if custom.get("scheduler_enable"):
        progress("starting the Volcano scheduler")
        launch.scheduler(binaries["vc-scheduler"])
    if custom.get("controller_enable"):
        progress("starting the Volcano controller manager")
        launch.controllers(binaries["vc-controller-manager"])
