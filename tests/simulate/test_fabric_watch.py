"""A pool that scales from zero proves its fabric on scale-up: the watcher (fabric-watch.sh, the real kubectl as its
own service account) starts the check's Job once the pool has its checked nodes, the real Volcano and Job
controller run it (kwok ends its pods as a passing NCCL test does), and the watcher records the verdict, then
leaves the pool alone until the verdict is deleted.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from components.manifests import fabriccheck as manifests
from components.render import render
from components.resolution import resolve_file
from components.simulate import engines, simulation
from components.simulate.client import conditions_of
from tests.support import accounts, verdict, waiting
from tests.support.stacks import variant

pytestmark = pytest.mark.simulate

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0


def _scaling_dev(tmp_path: Path) -> Path:
    """dev with a pool that keeps no node, so its fabric check runs on scale-up."""
    return variant(
        REPO / "Pulumi.dev.yaml", tmp_path, lambda config: config["gpu-training:nodePools"][0].update(minNodes=0)
    )


_until = functools.partial(waiting.until, wait=WAIT)
"""Wait for what the cluster does in its own time (tests/support/waiting.py)."""


def test_the_watcher_proves_a_scaled_up_pools_fabric_once_and_again_on_demand(control_plane, tmp_path: Path) -> None:
    kubectl = engines.build(engines.KUBECTL)["kubectl"]
    rendered = render(resolve_file(_scaling_dev(tmp_path)))
    (check,) = rendered.stack.checks.values()
    assert check.when == "scale-up" and not [w for w in rendered.workloads if w.gate]
    ns = check.namespace
    cron = next(o for o in rendered.objects if o["kind"] == "CronJob")
    container = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    folder = tmp_path / "watch"
    (folder / "scripts").mkdir(parents=True)
    for name, text in manifests.configmap(check)["data"].items():
        (folder / "scripts" / name).write_text(text)
    template = folder / manifests.TEMPLATE_KEY
    template.write_text(manifests.template(check)["data"][manifests.TEMPLATE_KEY])

    with simulation.running(rendered, tmp_path / "cluster", 2, checks_pass=True, plane=control_plane()) as cluster:
        client = cluster.client
        own = accounts.kubeconfig(cluster.plane, ns, manifests.watcher_name(check), folder)

        def watch(**override: str) -> str:
            said = verdict.run(
                folder / "scripts" / manifests.WATCH_SCRIPT,
                env={**env, "TEMPLATE": str(template), **accounts.kubectl_env(kubectl, own, folder), **override},
                timeout=120,
            )
            assert said.status == 0, f"the watcher failed:\n{said.out}\n{said.err}"
            return said.out

        job_path = f"/apis/batch/v1/namespaces/{ns}/jobs/{check.name}"
        result_path = f"/api/v1/namespaces/{ns}/configmaps/{check.result_name}"
        assert "waiting: the pool has 2 of the 3 checked nodes" in watch(NODES="3")
        assert client.get(job_path) is None

        watch()
        assert client.get(job_path) is not None, "two checked nodes: the watcher started the check"

        def complete() -> bool:
            return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions_of(client.get(job_path)))

        _until("the check's Job Complete (Volcano placed its gang, kwok passed its pods)", complete)
        out = watch()
        stored = client.get(result_path)
        assert stored is not None, f"a finished check is recorded at the next look:\n{out}"
        recorded = stored["data"]
        assert recorded["passed"] == "true" and recorded["fingerprint"] == check.fingerprint()
        _until("the check's Job removed", lambda: client.get(job_path) is None)
        events = [e for e in client.list("v1", "Event", ns) if e["involvedObject"].get("name") == check.name]
        assert {"FabricCheckStarted", "FabricCheckPassed"} <= {e["reason"] for e in events}

        assert "recorded:" in watch(), "proven for this configuration: nothing more runs"
        assert client.get(job_path) is None

        client.request("DELETE", result_path)
        watch()
        assert client.get(job_path) is not None, "on demand: deleting the verdict runs the check again"
