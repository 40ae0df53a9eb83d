"""A fleet: this stack's cluster as the manager of Kueue's MultiKueue, and the worker clusters its jobs run on."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from components.models.base import DnsLabel, Spec, at

MAX_WORKERS = 20
"""The most workers one queue dispatches to: a MultiKueueConfig lists at most 20 clusters (kubernetes-sigs/kueue
v0.19.2 apis/kueue/v1beta2/multikueue_types.go:156, `MaxItems=20`)."""

RESERVED = "manager"
"""What no worker is called: render writes the manager's objects under manager/, and the fleet names its resources on
the manager after it."""

STACK_REFERENCE = r"^[A-Za-z0-9][-A-Za-z0-9_.]*(/[A-Za-z0-9][-A-Za-z0-9_.]*){0,2}$"
"""A Pulumi stack name: `stack`, `project/stack` or `organization/project/stack`."""

ROTATION = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
"""A rotation label: it ends the name of each worker's token Secret, so it is a DNS label's tail."""


class WorkerSpec(Spec):
    """A worker cluster: MultiKueue dispatches the fleet's jobs to it. Either another stack file of this project
    (`stackFile`), whose own `pulumi up` makes its cluster, pools, namespaces, queues and runtimes, or the worker's
    stack keys inline (`config`), which the fleet deploys itself."""

    name: DnsLabel
    """The worker's name in the fleet: its MultiKueueCluster on the manager, and the Secret there that holds its
    kubeconfig (`multikueue-<name>`). Required."""
    stack_file: str | None = None
    """Another stack file of this project (Pulumi.<stack>.yaml), relative to this one: the worker's pools,
    namespaces, queues and runtimes are read from it offline, never restated here. It runs Kueue (scheduler.type
    kueue) and Kubeflow Trainer. Its own `pulumi up -s <stack>` makes them; the fleet adds what MultiKueue needs
    there. Required unless `config` is set."""
    config: dict[str, Any] | None = None
    """The worker's stack keys inline, as a stack file's `config:` holds them without the `gpu-training:` prefix
    (cluster, nodePools, scheduler ...), but no jobs (the fleet's `jobs` run on the workers): the fleet deploys this
    worker's whole platform itself, with the provider its `cluster` key gives. Required unless `stackFile` is
    set."""
    stack_reference: str | None = Field(default=None, pattern=STACK_REFERENCE)
    """With stackFile: the worker's deployed Pulumi stack (organization/project/stack), whose `kubeconfig` output (a
    secret, as every stack of this project exports it) the fleet reads at deploy time to reach the worker. Required
    unless `kubeconfig` is set."""
    kubeconfig: str | None = None
    """With stackFile: a kubeconfig that may manage the worker (its contents as a Pulumi secret, `pulumi config set
    --secret --path 'gpu-training:fleet.workers[N].kubeconfig'`, or a file's path), read at deploy time. Contents in
    plain text are refused. Required unless `stackReference` is set."""

    @model_validator(mode="after")
    def _one_source(self) -> WorkerSpec:
        if (self.stack_file is None) == (self.config is None):
            raise at(
                "stackFile",
                "set exactly one of stackFile (another stack file of this project) and config (the worker's stack "
                "keys inline)",
            )
        credentials = [k for k, v in (("stackReference", self.stack_reference), ("kubeconfig", self.kubeconfig)) if v]
        if self.config is not None and credentials:
            raise at(
                credentials[0],
                "is for a worker given by stackFile: an inline worker is reached as its own `cluster` key says "
                "(the cluster the fleet makes, or an existing one's kubeconfig or context)",
            )
        if self.stack_file is not None and len(credentials) != 1:
            raise at(
                "stackReference",
                "set exactly one of stackReference (the worker's deployed stack, whose `kubeconfig` output the fleet "
                "reads) and kubeconfig (a Pulumi secret): the fleet needs one way to reach the worker",
            )
        return self


class FleetSpec(Spec):
    """A fleet of GPU clusters behind one set of queues (Kueue's MultiKueue): this stack's `cluster` is the
    manager, which holds the queues and the jobs; the workers run them."""

    workers: list[WorkerSpec] = Field(min_length=1, max_length=MAX_WORKERS)
    """The worker clusters, most preferred first: MultiKueue offers a job to every worker that has its queue, in
    this order. At most 20 (a MultiKueueConfig's limit). Required."""
    rotation: str | None = Field(default=None, max_length=30, pattern=ROTATION)
    """The generation of the workers' MultiKueue tokens, in the name of each worker's token Secret: change it (to
    today's date, say) and `pulumi up` makes every worker a new token, puts the kubeconfig made from it on the
    manager, then deletes the old token Secret, which revokes the old token. Default: none (the first
    generation)."""

    @model_validator(mode="after")
    def _distinct(self) -> FleetSpec:
        names = [w.name for w in self.workers]
        for index, name in enumerate(names):
            if name == RESERVED:
                raise at(f"workers[{index}].name", f"'{RESERVED}' names the manager: give the worker another name")
            if names.index(name) != index:
                raise at(f"workers[{index}].name", f"worker '{name}' is declared twice: name each worker once")
        return self
