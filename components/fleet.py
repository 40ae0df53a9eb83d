"""A fleet as one component: the manager's platform with Kueue set up for MultiKueue, the queues, MultiKueue objects
and jobs on it; on each worker MultiKueue's ServiceAccount and least role, and its token made into the kubeconfig
the manager reaches the worker with, a Pulumi secret from the cluster's token Secret to the manager's Secret.

Each worker is reached with a provider of its own: a worker given by a stack file through its deployed stack's
`kubeconfig` output (a StackReference) or a kubeconfig given as a Pulumi secret; a worker whose keys are inline
through the Platform the fleet builds for it. No kubeconfig or token is an output of this component.

Rotation: the worker's token lives in a Secret of type kubernetes.io/service-account-token, which does not expire.
Changing `fleet.rotation` renames that Secret, so `pulumi up` creates the new one (the cluster fills it with a new
token), replaces the manager's Secret with one holding the kubeconfig made from it (the Kubernetes provider replaces a
Secret whose data changes), which Kueue watches, and deletes the old token Secret last, which revokes the old token.
`pulumi up --replace <the token Secret's URN>` does the same for one worker, the old Secret first (its name is the
same), so that worker is unreachable for a moment.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import kubeconfig as kubeconfigs
from components.errors import ConfigError, Issue
from components.fleetobjects import manager_addons, multikueue_objects
from components.fleetstack import Fleet as FleetStack
from components.fleetstack import resolve_fleet_raw
from components.fleetworker import Worker
from components.kubernetes.dependencies import combine
from components.kubernetes.objects import as_pulumi_error, kube_object, logical_name
from components.kubernetes.trainingjob import env_secret
from components.manifests import multikueue
from components.manifests.meta import key
from components.models import ExistingClusterSpec
from components.models.envsource import Sealed
from components.platform import Platform
from components.wellknown import KUEUE_INSTALL

TOKEN = "gpu-training:index:Fleet"


class Fleet(pulumi.ComponentResource):
    """A fleet of GPU clusters behind one set of queues: the manager (its platform, the queues, MultiKueue and the
    jobs) and, on every worker, what MultiKueue needs there."""

    workers: pulumi.Output[dict[str, Any]]
    """Each worker: whose platform it is (its own stack's, or the fleet's) and its queues, by name."""
    queues: pulumi.Output[dict[str, list[str]]]
    """Each queue of the manager and the workers MultiKueue offers its jobs to."""
    jobs: pulumi.Output[dict[str, Any]]
    """Each job's workload on the manager and the workers that can take it, by namespace/name."""

    def __init__(
        self, name: str, fleet: FleetStack | Mapping[str, Any], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Build a fleet from a validated fleet, or from config keys as a fleet's stack file writes them."""
        super().__init__(TOKEN, name, {}, opts)
        fleet = _fleet(name, fleet)
        self.fleet = fleet
        """The validated fleet this was built from."""
        installs = manager_addons(fleet)
        self.manager = Platform("manager", fleet.manager, pulumi.ResourceOptions(parent=self), installs=installs)
        """The manager's platform: its cluster, Kueue and Kubeflow Trainer."""
        manager = self.manager
        kueue = manager.installed.ready(KUEUE_INSTALL)
        # Each job's objects on each of its workers: its TrainJob waits for them, so it is never dispatched first.
        on_workers: dict[str, list[pulumi.Resource]] = {}
        self.kubeconfig_secrets: dict[str, pulumi.CustomResource] = {}
        """Per worker, the manager's Secret that holds its kubeconfig (data a Pulumi secret)."""
        self.worker_platforms: dict[str, Platform] = {}
        """Per inline worker, the platform the fleet deploys there."""
        for worker in fleet.workers:
            provider, admin, ready = self._reach(worker)
            on_worker = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=ready)
            access: dict[str, pulumi.CustomResource] = {}
            for obj in multikueue.worker_access(fleet.config.fleet.rotation if fleet.config.fleet else None):
                # The account before its token Secret: the token controller deletes a token Secret whose account does
                # not exist (kubernetes v1.36.0 pkg/controller/serviceaccount/tokens_controller.go:310-320), and the
                # provider, waiting for the token, then failed the create (or crashed on the vanished object).
                after = [access["ServiceAccount"]] if obj["kind"] == "Secret" else []
                opts = pulumi.ResourceOptions.merge(on_worker, pulumi.ResourceOptions(depends_on=after))
                access[obj["kind"]] = kube_object(f"{worker.name}-{logical_name(obj)}", obj, opts)
            token = access["Secret"]
            encoded = pulumi.Output.secret(
                pulumi.Output.all(admin, token.data).apply(lambda args, w=worker: _encoded_kubeconfig(w, *args))
            )
            secret = multikueue.kubeconfig_secret(worker.name, encoded)
            self.kubeconfig_secrets[worker.name] = kube_object(
                f"manager-{logical_name(secret)}",
                secret,
                pulumi.ResourceOptions(parent=self, provider=manager.provider, depends_on=combine(kueue)),
            )
            for job in fleet.jobs:
                if worker.name not in job.workers:
                    continue
                placed = on_workers.setdefault(key(job.objects[-1]), [])
                found = env_secret(job.plan)
                for obj in [*([found] if found is not None else []), *job.objects[:-1]]:
                    placed.append(kube_object(f"{worker.name}-{logical_name(obj)}", obj, on_worker))
        made: dict[str, pulumi.Resource] = {}
        for obj in multikueue_objects(fleet):
            meta = obj["metadata"]
            needs: list[Any] = [manager.installed.waits_for(manager.installs, obj)]
            if meta.get("namespace") in made and obj["kind"] != "Namespace":
                needs.append(made[meta["namespace"]])
            if obj["kind"] == "MultiKueueCluster":
                needs.append(self.kubeconfig_secrets[meta["name"]])
            if obj["kind"] == "TrainJob":
                needs += [made[k] for k in _uses(obj) if k in made]
                needs.append(on_workers.get(key(obj), []))
            resource = kube_object(
                f"manager-{logical_name(obj)}",
                obj,
                pulumi.ResourceOptions(parent=self, provider=manager.provider, depends_on=combine(*needs)),
            )
            made[meta["name"] if obj["kind"] == "Namespace" else key(obj)] = resource
        self.workers = pulumi.Output.from_input(
            {
                w.name: {"platform": "fleet" if w.inline else "own stack", "queues": sorted(w.queues)}
                for w in fleet.workers
            }
        )
        self.queues = pulumi.Output.from_input({q: [w.name for w in ws] for q, ws in fleet.queues.items()})
        self.jobs = pulumi.Output.from_input(
            {
                f"{job.plan.namespace}/{job.plan.name}": {
                    "workload": key(job.objects[-1]),
                    "workers": list(job.workers),
                }
                for job in fleet.jobs
            }
        )
        self.register_outputs({"workers": self.workers, "queues": self.queues, "jobs": self.jobs})

    def _reach(self, worker: Worker) -> tuple[pulumi.ProviderResource, pulumi.Output[str], list[Any]]:
        """A worker's provider, a kubeconfig that may manage it (a secret; empty for the ambient one), and what the
        objects the fleet makes there wait for (an inline worker's Kueue, whose namespace MultiKueue's account goes
        to, and its platform objects, the namespaces and runtimes its jobs' objects need)."""
        if worker.inline:
            platform = Platform(
                f"worker-{worker.name}", worker.stack, pulumi.ResourceOptions(parent=self), prefix=f"{worker.name}-"
            )
            self.worker_platforms[worker.name] = platform
            ready = combine(platform.installed.ready(KUEUE_INSTALL), platform.objects_component)
            return platform.provider, platform.kubeconfig, list(ready)
        spec = worker.spec
        if spec.stack_reference is not None:
            reference = pulumi.StackReference(
                f"{worker.name}-stack", stack_name=spec.stack_reference, opts=pulumi.ResourceOptions(parent=self)
            )
            admin = pulumi.Output.secret(reference.get_output("kubeconfig"))
        else:
            value = spec.kubeconfig
            if isinstance(value, Sealed):
                value = value.value
            if value is None:
                raise as_pulumi_error(
                    ConfigError(
                        Issue(
                            f"fleet.workers[{self.fleet.workers.index(worker)}].kubeconfig",
                            "is a Pulumi secret whose value this program was not given: run `pulumi up` in the "
                            "project folder, where the stack file says which value it is",
                        )
                    )
                )
            admin = pulumi.Output.secret(value)
        provider = k8s.Provider(
            f"{worker.name}-kubernetes",
            kubeconfig=admin,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return provider, admin, []


def _uses(trainjob: dict[str, Any]) -> list[str]:
    """The objects of the manager a TrainJob needs there: its runtime and its LocalQueue."""
    meta, ref = trainjob["metadata"], trainjob["spec"]["runtimeRef"]
    runtime = ref["name"] if ref["kind"] == "ClusterTrainingRuntime" else f"{meta['namespace']}/{ref['name']}"
    queue = meta.get("labels", {}).get("kueue.x-k8s.io/queue-name")
    return [f"{ref['kind']}/{runtime}", *([f"LocalQueue/{meta['namespace']}/{queue}"] if queue else [])]


def _encoded_kubeconfig(worker: Worker, admin: str | None, data: Mapping[str, str] | None) -> str:
    """The kubeconfig MultiKueue reaches a worker with, base64 as a Secret's data holds it: the worker's API server
    (and its CA, when the kubeconfig that manages it gives one) and the MultiKueue ServiceAccount's token and CA
    from the token Secret the cluster filled. Empty while the Secret is not filled (a preview)."""
    if not data or "token" not in data:
        return ""
    try:
        token = base64.b64decode(data["token"]).decode()
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"worker {worker.name}: its token Secret holds no token: {exc}") from None
    source = admin or ""
    cluster = worker.stack.config.cluster
    existing = isinstance(cluster, ExistingClusterSpec)
    # At the context the worker's provider uses: an inline worker's platform reaches its cluster at its `context`
    # (components/existing/cluster.py), in its kubeconfig or the ambient one.
    context = cluster.context if existing and (worker.inline or not source) else None
    if not source and existing:  # the ambient kubeconfig
        source = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or str(Path("~/.kube/config").expanduser())
    endpoint = kubeconfigs.endpoint(source, context)
    ca = endpoint.ca_data or data.get("ca.crt", "")
    text = kubeconfigs.token_kubeconfig(worker.name, endpoint.server, ca, token, multikueue.WORKER_ACCOUNT)
    return base64.b64encode(text.encode()).decode()


def _fleet(name: str, fleet: FleetStack | Mapping[str, Any]) -> FleetStack:
    """The validated fleet; config mistakes as a Pulumi error naming each key and its fix."""
    if isinstance(fleet, FleetStack):
        return fleet
    try:
        return resolve_fleet_raw(fleet, source=f"Fleet {name}")
    except ConfigError as exc:
        raise as_pulumi_error(exc) from None
