"""FabricCheck: a pool's fabric acceptance gate as a Pulumi component; `pulumi up` fails when the fabric does."""

from __future__ import annotations

from typing import Any

import pulumi

from components import fabriccheck, sshkeys
from components.kubernetes.objects import kube_object
from components.manifests import fabriccheck as manifests
from components.manifests.meta import key

TOKEN = "gpu-training:index:FabricCheck"
# Past the Job's own deadline, so the Job's failure (with its verdict) is what Pulumi reports.
_AWAIT_MARGIN_MINUTES = 5


class FabricCheck(pulumi.ComponentResource):
    """NCCL tests across a pool's nodes, awaited: the component is created only when the pool's fabric
    reaches its bus bandwidth floor over the fabric's own network."""

    result: pulumi.Output[dict[str, Any]]
    """The gate's outcome: pool, test, nodes, floor and its source, when it passed, and where the logs are."""

    def __init__(self, name: str, check: fabriccheck.FabricCheck, opts: pulumi.ResourceOptions | None = None) -> None:
        """Create the gate's ssh key, scripts, Service and Job on `check`'s pool, and wait for the Job.

        When the test fails, the Job fails and `pulumi up` stops with the verdict (pool, measured and
        expected bus bandwidth, the logs command), which fabric-check.sh writes as pod 0's termination
        message. The Job's pod template carries a digest of the pool and the gate's config, so the test
        runs again when one of them changes, and not on every `up`.
        """
        super().__init__(TOKEN, name, {}, opts)
        self.check = check
        child = pulumi.ResourceOptions(parent=self)
        # The key pair is made here and kept by the engine: the Secret ignores later keys, so the pods' key stays
        # the one made at create (as a key resource would keep it) and an `up` shows no diff. Both stay secret.
        # The provider stores stringData as data (base64), so both are ignored, else the next `up` replaces it.
        pair = sshkeys.generate(comment=check.name)
        secret = manifests.ssh_secret(check, pulumi.Output.secret(pair.private_openssh), pair.public_openssh)  # type: ignore[arg-type]
        objects = manifests.objects(check)
        self.manifests: list[dict[str, Any]] = [secret, *objects]
        kept = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(ignore_changes=["stringData", "data"]))
        supporting = [kube_object(f"{name}-secret", secret, kept)]
        summary = {
            "pool": check.pool.name,
            "test": check.test,
            "nodes": check.nodes,
            "sizes": f"{check.sizes.min}-{check.sizes.max}",
            "minBusBandwidth": check.floor_gbs,
            "floorSource": check.floor_source,
            "logs": check.logs,
        }
        self.job: pulumi.CustomResource | None = None
        if check.when == "scale-up":
            # Nothing to wait for: the watcher runs the test once the pool has the nodes, and records the verdict.
            template = manifests.template(check)
            after_key = pulumi.ResourceOptions(parent=self, depends_on=supporting)
            for obj in objects:
                kind = "template" if obj == template else obj["kind"].lower()
                kube_object(f"{name}-{kind}", obj, after_key)
            result = f"configmap {check.namespace}/{check.result_name}"
            self.result = pulumi.Output.from_input({**summary, "when": "scale-up", "result": result})
            self.register_outputs({"result": self.result})
            return
        supporting += [kube_object(f"{name}-{obj['kind'].lower()}", obj, child) for obj in objects[:-1]]
        timeout = f"{check.timeout_minutes + _AWAIT_MARGIN_MINUTES}m"
        self.job = kube_object(
            f"{name}-job",
            objects[-1],
            pulumi.ResourceOptions(
                parent=self,
                depends_on=supporting,
                custom_timeouts=pulumi.CustomTimeouts(create=timeout, update=timeout),
            ),
        )
        summary["job"] = key(objects[-1])
        status = getattr(self.job, "status", None)
        self.result = (
            status.apply(lambda s: {**summary, "passed": True, "completedAt": _completed(s)})
            if isinstance(status, pulumi.Output)
            else pulumi.Output.from_input({**summary, "passed": True})
        )
        self.register_outputs({"result": self.result})


def _completed(status: Any) -> str | None:
    """When the Job completed, from its status (a typed JobStatus, or a dict under mocks)."""
    if status is None:
        return None
    if isinstance(status, dict):
        return status.get("completionTime") or status.get("completion_time")
    return getattr(status, "completion_time", None)
