"""The dev stack deployed by the real Pulumi engine to a simulated cluster: preview, up, an up that changes
nothing, an edit of one job that updates only it, and destroy, which leaves the storage declared retained.

The cluster is `simulate`'s: the real API server with the stack's controllers and CRDs, its add-ons installed
the way a platform team that manages them elsewhere does (`addons.install: false`), since Helm chart
repositories cannot be reached here. The fabric gate runs: kwok ends its pods in success, as a fabric that meets
its floor would (there is no NCCL test to run on a fake node), and `pulumi up` waits for its Job.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from components.render import render
from components.resolution import resolve_file
from components.simulate import apply, simulation
from components.simulate.client import Client
from tests.engine.conftest import REPO, Project

pytestmark = pytest.mark.engine

STACK = "dev"
POLICY_CONFIG = REPO / "policy" / "config.json"


def engine_variant(config: dict[str, Any]) -> None:
    """The dev stack as the engine tier deploys it (see the module's docstring)."""
    config["gpu-training:addons"] = {"install": False}


def subset(live: Any, declared: Any, path: str = "") -> list[str]:
    """Where `live` lacks or differs from what `declared` states (scalars compared as the API server prints
    them: 8 and "8" agree)."""
    if isinstance(declared, dict) and not declared and live is None:
        return []
    if isinstance(declared, list) and not declared and live is None:
        return []
    if isinstance(declared, dict):
        if not isinstance(live, dict):
            return [f"{path}: {live!r} is not an object"]
        return [m for k, v in declared.items() for m in subset(live.get(k), v, f"{path}.{k}")]
    if isinstance(declared, list):
        if not isinstance(live, list) or len(live) != len(declared):
            return [f"{path}: {live!r} is not {declared!r}"]
        return [m for i, (a, b) in enumerate(zip(live, declared, strict=True)) for m in subset(a, b, f"{path}[{i}]")]
    if live is None and declared in (False, 0, ""):
        return []  # the API server omits a field at its zero value (PriorityClass.globalDefault: false)
    if str(live) != str(declared):
        return [f"{path}: {live!r} is not {declared!r}"]
    return []


def differences(client: Client, objects: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per object that `render` writes, how the cluster's copy differs from it (missing, or a field)."""
    found: dict[str, list[str]] = {}
    for obj in objects:
        live = client.get(client.path_of(obj))
        if live is None:
            found[apply.key(obj)] = ["not in the cluster"]
            continue
        declared = {k: v for k, v in obj.items() if k != "status"}
        if misses := subset(live, declared):
            found[apply.key(obj)] = misses
    return found


def test_the_dev_stack_deploys_updates_in_place_and_destroys_on_the_real_engine(
    project: Project, policy_pack: Path, tmp_path: Path
) -> None:
    project.edit_config(STACK, engine_variant)
    rendered = render(resolve_file(project.stack_file(STACK)))
    objects = list(rendered.objects)
    with simulation.running(rendered, tmp_path / "cluster", with_platform=False, checks_pass=True) as cluster:
        client = cluster.client
        project.on_cluster(STACK, cluster.plane.kubeconfig, context="simulate")

        # The review a pull request gets (.github/workflows/review.yml): a preview with the policy pack, which
        # creates everything and which no mandatory policy stops. (A pack changes no step, so this is the plain
        # preview too, run once.)
        reviewed = project.run(
            STACK, "preview", "--policy-pack", str(policy_pack), "--policy-pack-config", str(POLICY_CONFIG)
        )
        assert reviewed["ok"], reviewed["error"]
        assert reviewed["steps"] and {s["op"] for s in reviewed["steps"]} == {"create"}, reviewed["steps"]
        assert "[mandatory]" not in reviewed["log"], reviewed["log"]

        up = project.run(STACK, "up")
        assert up["ok"], up["error"]
        assert not differences(client, objects), differences(client, objects)
        # The kubeconfig (its token) is secret in the stack file, in the state and in the outputs.
        assert up["outputs"]["kubeconfig"] == "[secret]"
        token = cluster.plane.token
        assert token not in project.stack_file(STACK).read_text()
        state = project.cli("stack", "export", "-s", STACK).stdout
        assert token not in state and "4dabf18193072939515e22adb298388d" in state  # the secret signature

        # The gate ran and passed before the pool's jobs, and its ssh key is secret in the state.
        gate = up["outputs"]["fabricChecks"]["h100"]
        assert gate["passed"] is True and gate["completedAt"], gate
        keys = client.get("/api/v1/namespaces/training/secrets/fabric-check-h100-ssh")
        private = base64.b64decode(keys["data"]["id_ed25519"]).decode()
        assert private.startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
        clear = (private.splitlines()[1], keys["data"]["id_ed25519"])  # as written, and as the live Secret holds it
        assert not [c for c in clear if c in state or c in json.dumps(up["outputs"])], "the private key is in the clear"

        again = project.run(STACK, "up", "--expect-no-changes")
        assert again["ok"], again["error"]
        assert again["steps"] == [], again["steps"]
        assert client.get("/api/v1/namespaces/training/secrets/fabric-check-h100-ssh")["data"] == keys["data"], (
            "the key made at create is kept"
        )

        # One job edited: that job alone is updated.
        project.edit_config(STACK, lambda c: c["gpu-training:jobs"][0].update(image="registry.example.com/llm:v2"))
        edited = project.run(STACK, "up")
        assert edited["ok"], edited["error"]
        changed = {(s["op"], s["urn"].rsplit("::", 1)[1]) for s in edited["steps"]}
        assert changed == {("update", "training-llama-finetune-pytorchjob")}, changed

        # Claims are protected and their namespace and classes retained: `destroy --exclude-protected`
        # removes everything else and leaves the data where it was.
        claims = [o for o in objects if o["kind"] == "PersistentVolumeClaim"]
        homes = {c["metadata"]["namespace"] for c in claims}
        kept = [
            *claims,
            *(o for o in objects if o["kind"] == "StorageClass"),
            *(o for o in objects if o["kind"] == "Namespace" and o["metadata"]["name"] in homes),
        ]
        assert claims and any(o["kind"] == "Namespace" for o in objects if o not in kept), "gpu-node-check goes"
        down = project.run(STACK, "destroy", "--exclude-protected")
        assert down["ok"], down["error"]
        left = {apply.key(o) for o in objects if client.get(client.path_of(o)) is not None}
        assert left == {apply.key(o) for o in kept}, left
        claims = client.list("v1", "PersistentVolumeClaim", "training")
        assert {c["status"]["phase"] for c in claims} == {"Bound"}, "the claims keep their volumes"
