"""A fleet's credentials on the real engine: `pulumi up` of a fleet stack reaches its worker with the kubeconfig given
as a Pulumi secret (`pulumi config set --secret --path 'gpu-training:fleet.workers[0].kubeconfig'`), makes MultiKueue's
ServiceAccount there, and puts the kubeconfig made from that account's token in the manager's Secret, where Kueue
connects with it. The token and that kubeconfig are in the clear nowhere else: not in render's files, the state
(exported unencrypted), the stack's outputs or up's own output. The account may do what MultiKueue does and no more,
and changing `fleet.rotation` makes a new token, hands it to the manager, and revokes the old one.

The worker is a stack file of its own with its kubeconfig a Pulumi secret, the form where the fleet alone owns the
worker's credentials: its platform (Kueue, Trainer, queues) is its own stack's, which `simulate` applies as that
stack's `pulumi up` would, and the fleet adds only MultiKueue's access. (An inline worker's kubeconfig is an existing
cluster's, which tests/engine/test_deploy.py covers for one stack.) The manager is as test_deploy.py's cluster: its
add-ons run by `simulate` (`addons.install: false`), since Helm chart repositories cannot be reached here.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.fleetobjects import manager_addons, manager_objects
from components.fleetstack import resolve_fleet_file
from components.manifests import multikueue
from components.render import Rendered, render
from components.resolution import resolve_file
from components.simulate import simulation
from components.simulate.client import Client, ClientError, conditions_of
from tests.engine.conftest import Project
from tests.support.waiting import until

pytestmark = pytest.mark.engine

STACK = "fleet"
WORKER = "east"
WORKER_FILE = """\
config:
  gpu-training:cluster: {provider: existing, name: east}
  gpu-training:nodePools:
    - {name: h100, instanceType: p5.48xlarge, maxNodes: 2, nodeSelector: {gpu-training.example/pool: h100}}
  gpu-training:scheduler:
    type: kueue
    queues:
      - {name: h100, gpus: 16, namespaces: [training]}
  gpu-training:namespaces:
    - {name: training}
"""
FLEET_FILE = f"""\
config:
  gpu-training:cluster: {{provider: existing, name: manager, context: simulate}}
  gpu-training:addons: {{install: false}}
  gpu-training:fleet:
    workers:
      - {{name: {WORKER}, stackFile: Pulumi.{WORKER}.yaml}}
"""
KUBECONFIG_PATH = "gpu-training:fleet.workers[0].kubeconfig"
ROTATION = "2026-11-27"
SECRET_SIG = "4dabf18193072939515e22adb298388d"
"""The engine's mark of a secret value in the state: beside it, the ciphertext."""
MANAGER_SECRET = f"/api/v1/namespaces/kueue-system/secrets/{multikueue.kubeconfig_secret_name(WORKER)}"
HELD = f"manager-secret-kueue-system-{multikueue.kubeconfig_secret_name(WORKER)}"
"""The manager's Secret that holds the worker's kubeconfig, by its Pulumi name."""
ACCOUNT = f"system:serviceaccount:kueue-system:{multikueue.WORKER_ACCOUNT}"
WAIT = 60.0


def _token_path(rotation: str | None = None) -> str:
    return f"/api/v1/namespaces/kueue-system/secrets/{multikueue.token_secret_name(rotation)}"


def _admin_kubeconfig(server: str, ca_file: Path, token: str) -> str:
    """The worker's admin kubeconfig as a user gives it: its CA and token inline."""
    ca = base64.b64encode(ca_file.read_bytes()).decode()
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": WORKER, "cluster": {"server": server, "certificate-authority-data": ca}}],
            "users": [{"name": "admin", "user": {"token": token}}],
            "contexts": [{"name": WORKER, "context": {"cluster": WORKER, "user": "admin"}}],
            "current-context": WORKER,
        }
    )


def _reach(kubeconfig: str, folder: Path) -> Client:
    """A client of the cluster a token kubeconfig names, with its token (no other way to authenticate)."""
    config = yaml.safe_load(kubeconfig)
    (cluster,) = config["clusters"]
    (user,) = config["users"]
    assert set(user["user"]) == {"token"}, user
    folder.mkdir(parents=True, exist_ok=True)
    ca = folder / "ca.crt"
    ca.write_bytes(base64.b64decode(cluster["cluster"]["certificate-authority-data"]))
    return Client(cluster["cluster"]["server"], user["user"]["token"], ca)


def _code(client: Client, path: str) -> int:
    """The HTTP status of a GET (200 when allowed)."""
    try:
        client.request("GET", path)
    except ClientError as exc:
        return exc.code
    return 200


def _manager_kubeconfig(client: Client) -> str:
    """The kubeconfig the manager's Secret holds for the worker."""
    secret = client.get(MANAGER_SECRET)
    assert secret is not None, "the manager holds the worker's kubeconfig Secret"
    return base64.b64decode(secret["data"][multikueue.KUBECONFIG_KEY]).decode()


def _token(client: Client, rotation: str | None = None) -> str:
    """The token the worker's token controller filled its MultiKueue token Secret with."""
    secret = until(
        "the token Secret filled",
        lambda: (s := client.get(_token_path(rotation))) and (s.get("data") or {}).get("token") and s,
        wait=WAIT,
    )
    return base64.b64decode(secret["data"]["token"]).decode()


def _resources(state: str) -> dict[str, dict[str, Any]]:
    """The state's resources by their names."""
    deployment = json.loads(state)["deployment"]
    return {r["urn"].rsplit("::", 1)[1]: r for r in deployment["resources"]}


def _ciphertext(value: Any) -> bool:
    return isinstance(value, dict) and SECRET_SIG in value and bool(value.get("ciphertext"))


def _in_the_clear(project: Project, up: dict[str, Any], rendered: Path, secrets: dict[str, str]) -> list[str]:
    """Where any of `secrets` is in the clear: render's files, the state, the outputs (shown or not), up's output."""
    text = "\n".join(p.read_text() for p in sorted(rendered.rglob("*")) if p.is_file())
    places = {
        "render's files": text,
        "the state": project.cli("stack", "export", "-s", STACK).stdout,
        "the outputs": project.cli("stack", "output", "--json", "-s", STACK).stdout,
        "the outputs shown": project.cli("stack", "output", "--json", "--show-secrets", "-s", STACK).stdout,
        "up's outputs": json.dumps(up["outputs"]),
        "up's output": up["log"],
        "the stack file": project.stack_file(STACK).read_text(),
    }
    return [
        f"{what} in {where}" for where, content in places.items() for what, value in secrets.items() if value in content
    ]


def _clear_forms(name: str, value: str) -> dict[str, str]:
    """A value as it would show in the clear: as is, and base64 as a Secret's data holds it."""
    return {name: value, f"{name} (base64)": base64.b64encode(value.encode()).decode()}


def test_a_fleet_reaches_its_worker_as_multikueues_own_account_rotates_its_token_and_keeps_both_secret(
    project: Project, tmp_path: Path
) -> None:
    project.workdir.joinpath(f"Pulumi.{WORKER}.yaml").write_text(WORKER_FILE)
    project.stack_file(STACK).write_text(FLEET_FILE)
    with ExitStack() as clusters:
        worker = clusters.enter_context(
            simulation.running(render(resolve_file(project.workdir / f"Pulumi.{WORKER}.yaml")), tmp_path / WORKER)
        )
        admin = _admin_kubeconfig(worker.plane.server, worker.plane.ca_file, worker.plane.token)
        project.cli("stack", "init", STACK)
        project.cli("config", "set", "--secret", "--path", KUBECONFIG_PATH, admin, "-s", STACK)
        assert worker.plane.token not in project.stack_file(STACK).read_text()

        # The manager as the fleet makes it: Kueue configured for MultiKueue, its objects left to `pulumi up`.
        fleet = resolve_fleet_file(project.stack_file(STACK))
        manager_stack = Rendered(
            stack=fleet.manager,
            objects=tuple(manager_objects(fleet)),
            addons=manager_addons(fleet),
        )
        manager = clusters.enter_context(simulation.running(manager_stack, tmp_path / "manager", with_platform=False))
        project.cli(
            "config", "set", "--secret", "--path", "gpu-training:cluster.kubeconfig",
            manager.plane.kubeconfig.read_text(), "-s", STACK,
        )  # fmt: skip

        up = project.run(STACK, "up")
        assert up["ok"], up["error"]

        # 2. The manager's Secret holds a kubeconfig of the worker's API server with MultiKueue's own token.
        token = _token(worker.client)
        made = _manager_kubeconfig(manager.client)
        config = yaml.safe_load(made)
        assert config["clusters"][0]["cluster"]["server"] == worker.plane.server
        assert config["users"] == [{"name": multikueue.WORKER_ACCOUNT, "user": {"token": token}}]
        reach = _reach(made, tmp_path / "reach")
        assert _code(reach, "/apis/kueue.x-k8s.io/v1beta2/workloads") == 200
        assert _code(reach, "/apis/trainer.kubeflow.org/v1alpha1/trainjobs") == 200
        with pytest.raises(ClientError) as refused:
            reach.request("GET", "/api/v1/namespaces/kube-system/secrets")
        assert refused.value.code == 403 and ACCOUNT in str(refused.value), "least RBAC: no Secrets"
        assert _code(reach, "/api/v1/namespaces/training/pods") == 403
        # Kueue on the manager connects to the worker with it (it watches Workloads and TrainJobs there).
        cluster_path = manager.client.path_of(multikueue.multikueue_cluster(WORKER))

        def active() -> bool:
            found = conditions_of(manager.client.get(cluster_path))
            return any(c["type"] == "Active" and c["status"] == "True" for c in found)

        until("the MultiKueueCluster Active", active, lambda: manager.client.get(cluster_path), wait=WAIT)

        # 1. Neither the token nor the kubeconfig made from it, nor the admin's, is in the clear anywhere.
        out = tmp_path / "rendered"
        render_cli = ["render", "--config", str(project.stack_file(STACK)), "--out", str(out)]
        subprocess.run(
            [sys.executable, "-m", "components", *render_cli],
            cwd=project.workdir,
            env=project.env,
            check=True,
            capture_output=True,
        )
        assert (out / "workers" / WORKER).is_dir() and (out / "manager").is_dir()
        secrets = {
            **_clear_forms("the MultiKueue token", token),
            **_clear_forms("the worker's kubeconfig", made),
            **_clear_forms("the admin token", worker.plane.token),
        }
        leaks = _in_the_clear(project, up, out, secrets)
        assert not leaks, leaks
        state = project.cli("stack", "export", "-s", STACK).stdout
        resources = _resources(state)
        held = resources[HELD]
        assert _ciphertext(held["inputs"]["data"]) and _ciphertext(held["outputs"]["data"]), "ciphertext in the state"
        filled = resources[f"{WORKER}-secret-kueue-system-{multikueue.token_secret_name()}"]
        assert _ciphertext(filled["outputs"]["data"]), "the token Secret's data is ciphertext in the state"
        assert _ciphertext(resources[f"{WORKER}-kubernetes"]["inputs"]["kubeconfig"])
        assert "kubeconfig" not in json.dumps(up["outputs"])

        # 4. Nothing changed, nothing to do.
        again = project.run(STACK, "up", "--expect-no-changes")
        assert again["ok"], again["error"]
        assert again["steps"] == [], again["steps"]

        # 3. Rotation: a new token Secret, the manager's kubeconfig with its token, the old token gone and refused.
        project.cli("config", "set", "--path", "gpu-training:fleet.rotation", ROTATION, "-s", STACK)
        rotated = project.run(STACK, "up")
        assert rotated["ok"], rotated["error"]
        steps = [(s["op"], s["urn"].rsplit("::", 1)[1]) for s in rotated["steps"]]
        old, new = (f"{WORKER}-secret-kueue-system-{multikueue.token_secret_name(r)}" for r in (None, ROTATION))
        # The provider replaces a Secret whose data changes (pulumi-kubernetes provider/pkg/provider/diff.go:27): the
        # manager's goes and comes back with the new kubeconfig, after the new token and before the old one goes.
        assert {name for _, name in steps} == {new, HELD, old}, steps
        order = [steps.index(step) for step in [("create", new), ("create-replacement", HELD), ("delete", old)]]
        assert order == sorted(order), steps
        fresh = _token(worker.client, ROTATION)
        assert fresh != token
        remade = _manager_kubeconfig(manager.client)
        assert yaml.safe_load(remade)["users"] == [{"name": multikueue.WORKER_ACCOUNT, "user": {"token": fresh}}]
        assert worker.client.get(_token_path()) is None, "the old token Secret is deleted"
        until("the old token refused", lambda: _code(reach, "/apis/kueue.x-k8s.io/v1beta2/workloads") == 401, wait=WAIT)
        assert _code(_reach(remade, tmp_path / "rotated"), "/apis/kueue.x-k8s.io/v1beta2/workloads") == 200
        until(
            "the MultiKueueCluster Active with the new token",
            active,
            lambda: manager.client.get(cluster_path),
            wait=WAIT,
        )
        secrets = {
            **secrets,
            **_clear_forms("the new MultiKueue token", fresh),
            **_clear_forms("the new kubeconfig", remade),
        }
        leaks = _in_the_clear(project, rotated, out, secrets)
        assert not leaks, leaks
