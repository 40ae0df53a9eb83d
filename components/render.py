"""Render a stack offline: every Kubernetes object it would create, as YAML files, and a summary."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components import identifiers, identity, images, launchers, nvlink, plaintext, provisioning, repair
from components.addons.mirror import CHART_IMAGES
from components.addons.plan import AddonPlan
from components.addons.plan import plan as addon_plan
from components.addons.storage import S3_CSI_ADDON
from components.errors import ConfigError
from components.fabric import bandwidth, min_nccl, profile
from components.fabriccheck import home_namespace
from components.manifests import envsecret, fabriccheck, platform
from components.manifests.failure import node_fault
from components.manifests.plan import JobPlan
from components.manifests.trainingruntime import choose_runtime
from components.models.storage import LUSTRE_BACKENDS, OBJECT_STORES
from components.observability import objects as monitoring
from components.pool import Pool
from components.stack import Stack
from components.throughput import CheckpointEstimate, estimate
from components.versions import MOUNTPOINT_S3_CSI_ADDON
from components.yamlio import dump

MARKER = ".gpu-training-render"
ELSEWHERE = "README.md"
"""With addons.install false, the note in helm/ and remote/ that another tool installs what they describe."""
ELSEWHERE_NOTE = (
    "The stack does not install these add-ons (gpu-training:addons install: false): install each Helm release\n"
    "and remote install described here another way (Argo CD, Flux), at its version and with its values.\n"
    "The stack creates the objects they serve (queues, policies, NADs, runtimes ...) without waiting for them:\n"
    "install them first.\n"
)


@dataclass(frozen=True, slots=True)
class Workload:
    """One job of the stack, a training job or a pool's fabric check, and its objects in apply order."""

    plan: JobPlan
    objects: tuple[dict[str, Any], ...]
    """Its supporting objects first, the workload itself (PyTorchJob, MPIJob, TrainJob, Job...) last."""
    gate: bool = False
    """Whether it is a pool's fabric check, which the pool's training jobs wait for."""

    @property
    def workload(self) -> dict[str, Any]:
        """The object that makes the pods."""
        return self.objects[-1]

    @property
    def pods(self) -> int:
        """How many pods the job runs at once: a pod per node, and the MPI launcher."""
        return self.plan.nodes + (1 if self.plan.spec.launcher == "mpi" else 0)


@dataclass(frozen=True, slots=True)
class Rendered:
    """What a stack renders to: the validated stack and its Kubernetes objects in apply order."""

    stack: Stack
    objects: tuple[dict[str, Any], ...]
    addons: AddonPlan
    workloads: tuple[Workload, ...] = ()
    """The stack's jobs, each deploy-time fabric check before the training jobs; their objects are in `objects`
    too (a scale-up check's watcher is there, and its Job waits in a template)."""

    def summary(self) -> str:
        """Per pool: its jobs, their pods and GPUs, and what one node fault costs each; then the object counts
        by kind."""
        lines = [
            f"cluster {self.stack.config.cluster.name} ({self.stack.config.cluster.provider}), "
            f"scheduler {self.stack.scheduler}"
        ]
        for pool in self.stack.pools.values():
            jobs = [p for p in self.stack.jobs if p.pool.name == pool.name]
            pods = sum(w.pods for w in self.workloads if not w.gate and w.plan.pool.name == pool.name)
            gpus = sum(p.world_size for p in jobs)
            lines.append(f"  pool {pool.summary(_fabric(pool))}: {len(jobs)} jobs, {pods} pods, {gpus} GPUs")
            check = self.stack.checks.get(pool.name)
            gate = check.summary() if check else f"off: {self.stack.unchecked.get(pool.name, 'not configured')}"
            lines.append(f"    fabric check: {gate}")
            node = self.stack.node_checks.get(pool.name)
            lines.append(f"    node check: {node.summary() if node else 'off (nodeCheck.enabled is false)'}")
            lines.append(f"    repairs: {repair.pool_line(self.stack.config, pool)}")
            if pool.nvlink_domain_nodes:
                lines.append(f"    nvlink: {nvlink.pool_line(pool)}")
            if pool.provisioning_class:
                lines.append(f"    admission: {provisioning.describe(pool.provisioning_class)}")
            for p in jobs:
                each = (
                    f", {p.requests['cpu']} CPU and {p.requests['memory']} each"
                    if {"cpu", "memory"} <= p.requests.keys()
                    else ""
                )
                account = bandwidth(pool, p.namespace)
                short = f"; below the fabric's bandwidth: {account.shortfall}" if account.shortfall else ""
                lines.append(
                    f"    {p.spec.launcher:<10} {p.namespace}/{p.name}: {p.nodes} x {p.gpus_per_node} GPUs{each} "
                    f"(world size {p.world_size}){_runtime(p)}{_placed(p)}{_domain(p)}{short}"
                )
                lines.append(f"      node fault: {node_fault(p).describe()}")
                found = checkpoint(self.stack, p)
                if found is not None:
                    lines.append(f"      checkpoint: {found.describe()}")
        later = [
            f"{'StorageClass' if v.backend == 'efs' else 'PersistentVolume'} for {v.namespace}/{v.name}"
            for v in self.stack.config.storage.volumes
            # A Lustre PV needs the file system's address (FSx: DNS and mount names; Managed Lustre: its mount
            # point), read at deploy even for a named one; a bucket's needs the name the cloud gives a bucket the
            # stack makes.
            if v.backend in LUSTRE_BACKENDS
            or (v.backend == "efs" and v.file_system_id is None)
            or (v.backend in OBJECT_STORES and v.bucket is None)
        ]
        keys = [f"Secret {c.namespace}/{fabriccheck.ssh_secret_name(c)}" for c in self.stack.checks.values()]
        if later:
            lines.append("made at deploy time, once the file systems and buckets exist: " + ", ".join(later))
        if keys:
            lines.append("made at deploy time, each fabric check's ssh key pair: " + ", ".join(keys))
        accounts = identity.summary(self.stack.config)
        if accounts:
            lines.append(accounts)
        config = self.stack.config
        if self.stack.launches:
            upgrade = launchers.upgrade_line(config.jobs, self.stack.launches, config.default_launcher)
            if upgrade:
                lines.append(upgrade)
        sealed = [found for p in self.stack.jobs if (found := envsecret.made_at_deploy(p))]
        if sealed:
            lines.append("made at deploy time, each job's Pulumi secrets (not in these files): " + ", ".join(sealed))
        lines += monitoring.summary(self.stack)
        installs = [r.name for r in self.addons.remotes] + [r.name for r in self.addons.releases]
        elsewhere = "" if self.stack.config.addons.install else " to install elsewhere (addons.install: false)"
        lines.append(f"add-ons{elsewhere}: " + (", ".join(installs) or "none"))
        managed = cloud_addons(self.stack)
        if managed:
            lines.append("cloud add-ons the stack enables: " + ", ".join(managed))
        if self.stack.config.images.mirror:
            lines.append(self.images_line())
        kinds: dict[str, int] = {}
        for obj in self.objects:
            kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
        lines.append("objects: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
        return "\n".join(lines)

    def images_line(self) -> str:
        """Where the registry mirror takes images from, and the registries the stack pulls from that it leaves."""
        mirror = self.stack.config.images.mirror
        routes = ", ".join(f"{registry} -> {prefix}" for registry, prefix in sorted(mirror.items()))
        pulled = [image for obj in self.objects for image in images.images_of(obj)]
        charts = [CHART_IMAGES.get(r.chart.chart.rsplit("/")[-1], ()) for r in self.addons.releases]
        pulled += [image.default for chart in charts for image in chart]
        kept = [ref for ref in map(_reference, pulled) if ref and images.rewrite(mirror, str(ref)) == str(ref)]
        left = sorted({ref.registry for ref in kept if not images.mirrored(mirror, str(ref))})
        upstream = f"; from their own registries: {', '.join(left)}" if left else ""
        return f"images: through the registry mirror ({routes}){upstream}"

    def warnings(self) -> list[str]:
        """What the stack renders but will not do as well as asked: names taken on the stack's word or past what
        this release knows (components/identifiers.py), checkpoints over their time budget, charts whose images the
        registry mirror does not reach, service accounts the jobs name that the stack does not make, placeholders
        where a credential goes."""
        found = [f"{i.path}: {i.message}" for i in identifiers.warnings(self.stack.config)]
        found += [
            f"images.registryMirror does not reach the images of add-on {name}: {why}"
            for name, why in self.addons.unmirrored.items()
        ]
        found += plaintext.warnings(self.stack.config)
        if self.stack.launches:
            found += launchers.warnings(self.stack.config.jobs, self.stack.launches)
        for plan in self.stack.jobs:
            estimate = checkpoint(self.stack, plan)
            if estimate is not None and estimate.over:
                seconds = math.ceil(estimate.seconds or 0)
                found.append(
                    f"job {plan.namespace}/{plan.name}: a checkpoint takes at least {seconds} s, over "
                    f"checkpoint.maxSeconds ({estimate.max_seconds}): {_faster(estimate)}"
                )
        return found + identity.undeclared(self.stack.config)


def _reference(image: str) -> images.Reference | None:
    try:
        return images.parse(image)
    except ValueError:
        return None


def cloud_addons(stack: Stack) -> list[str]:
    """The add-ons the cloud runs that the stack turns on for its volumes (not Helm releases)."""
    backends = {v.backend for v in stack.config.storage.volumes}
    found = []
    if "s3" in backends:
        found.append(f"{S3_CSI_ADDON} {MOUNTPOINT_S3_CSI_ADDON} (EKS add-on, IAM role through Pod Identity)")
    if "gcs" in backends:
        found.append("Cloud Storage FUSE CSI driver (GKE add-on, at the cluster's version)")
    if "managed-lustre" in backends:
        found.append("Managed Lustre CSI driver (GKE add-on, at the cluster's version)")
    return found


def checkpoint(stack: Stack, plan: JobPlan) -> CheckpointEstimate | None:
    """A job's checkpoint on its volume, written by each of its nodes; None without `checkpoint`."""
    spec = plan.spec.checkpoint
    if spec is None:
        return None
    volume = next(
        v for v in stack.config.storage.volumes if (v.namespace, v.name) == (plan.namespace, spec.claim)
    )  # declared: validation checks it
    return estimate(volume, plan.nodes, plan.pool.machine(), spec.size, spec.max_seconds)


def _faster(found: CheckpointEstimate) -> str:
    """How to write the job's checkpoint faster on its backend."""
    volume = found.volume
    if found.node_bound:
        return "each node's network is the bound: more nodes write it faster, or save asynchronously"
    if volume.backend == "fsx-lustre":
        return "raise throughputPerTiB (up to 1000) or the file system's size, or save asynchronously"
    if volume.backend == "managed-lustre":
        return (
            "a larger instance (its capacity grows in place), or save asynchronously; a higher throughputPerTiB "
            "takes a new instance"
        )
    if volume.backend == "filestore":
        return "a larger instance or the ZONAL / REGIONAL tier scales with capacity, or save asynchronously"
    if volume.backend == "efs":
        return "EFS writes 1-5 GiB/s: put checkpoints on fsx-lustre or s3, or save asynchronously"
    if volume.backend == "s3":
        return "spread checkpoint files over several prefixes (S3 scales per prefix), or save asynchronously"
    return "a faster volume, or save asynchronously"


def _fabric(pool: Pool) -> str:
    """The pool's fabric in a few words: its bandwidth account, and the NCCL its images need."""
    nccl = min_nccl(pool.fabric, profile(pool, home_namespace(pool)).env)
    return ", ".join(part for part in (bandwidth(pool).describe(), f"needs NCCL >= {nccl}" if nccl else "") if part)


def _runtime(plan: JobPlan) -> str:
    """`, runtime <name>` for a TrainJob: its pool's, or its own and why."""
    if plan.spec.training_runtime is None:
        return ""
    choice = choose_runtime(plan)
    if not choice.reasons:
        return f", runtime {choice.ref['name']}"
    return f", own runtime ({'; '.join(choice.reasons)})"


def _placed(plan: JobPlan) -> str:
    """`, <mode> in one <level>` when the job is placed by network topology."""
    placed = plan.placement
    return f", {placed.mode} in one {placed.level.name}" if placed else ""


def _domain(plan: JobPlan) -> str:
    """`, ComputeDomain <name> ...` for a job that shares rack-scale NVLink."""
    if not plan.compute_domain:
        return ""
    where = f"in one NVLink domain ({nvlink.CLIQUE_LABEL})" if plan.one_domain else "across NVLink domains"
    return f", ComputeDomain {plan.compute_domain} {where}"


_LAST: list[Rendered] = []
"""The last stack rendered: loading a stack file renders it once for check's mandatory rules (mandatory.py), and
the command that loaded it renders the same stack again right after."""


def render(stack: Stack) -> Rendered:
    """Every object of the stack (platform objects, the add-ons' objects, each job's), and its add-ons."""
    if _LAST and _LAST[0].stack is stack:  # a Stack is frozen: the same object renders the same
        return _LAST[0]
    rendered = _render(stack)
    _LAST[:] = [rendered]
    return rendered


def _render(stack: Stack) -> Rendered:
    addons = addon_plan(stack)
    gates = [c for c in stack.checks.values() if c.when == "deploy"]
    watched = [o for c in stack.checks.values() if c.when == "scale-up" for o in fabriccheck.objects(c)]
    workloads = [Workload(c.plan, tuple(fabriccheck.objects(c)), gate=True) for c in gates]
    workloads += [Workload(p, stack.objects_of(i)) for i, p in enumerate(stack.jobs)]
    objects = [*platform.objects(stack), *addons.objects, *watched, *(o for w in workloads for o in w.objects)]
    return Rendered(stack=stack, objects=tuple(objects), addons=addons, workloads=tuple(workloads))


def object_path(obj: dict[str, Any]) -> Path:
    """Where an object is written: <namespace or _cluster>/<kind>-<name>.yaml."""
    meta = obj["metadata"]
    return Path(meta.get("namespace", "_cluster")) / f"{obj['kind'].lower()}-{meta['name']}.yaml"


def write(rendered: Rendered, out: Path) -> list[Path]:
    """Write each object to its own YAML file under `out`, each Helm release under `out`/helm/ and each
    remote install under `out`/remote/, replacing an earlier render there. With addons.install false each of those
    folders also holds a README.md saying that another tool installs them.

    Files whose content is unchanged are left as they are (their times too), and files of the earlier
    render that this one does not produce are removed: `out` ends up holding exactly this render.
    """
    fresh = _prepare(out)
    # Paths as strings, relative to `out`: a render writes thousands of files, and pathlib's objects cost more than
    # the writing itself.
    files: list[tuple[str, Any]] = []
    for obj in rendered.objects:
        meta = obj["metadata"]
        files.append((f"{meta.get('namespace', '_cluster')}/{obj['kind'].lower()}-{meta['name']}.yaml", obj))
    files += [(f"helm/{r.name}.yaml", r.describe()) for r in rendered.addons.releases]
    files += [(f"remote/{r.name}.yaml", r.describe()) for r in rendered.addons.remotes]
    folders = {name.rpartition("/")[0] for name, _ in files}
    installs = sorted(folders & {"helm", "remote"})
    notes = [] if rendered.stack.config.addons.install else [f"{folder}/{ELSEWHERE}" for folder in installs]
    root = os.fspath(out)
    for folder in folders:
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    for name, document in files:
        _update(os.path.join(root, name), dump([document]).encode("utf-8"), fresh=fresh)
    for note in notes:
        _update(os.path.join(root, note), ELSEWHERE_NOTE.encode("utf-8"), fresh=fresh)
    names = [name for name, _ in files] + notes
    if not fresh:  # a new folder holds nothing stale
        _remove_stale(root, {os.path.join(root, name) for name in names})
    return [out / name for name in names]


def _update(path: str, content: bytes, *, fresh: bool = False) -> None:
    """Write `content` to `path` unless it already holds exactly that; `fresh`: the file cannot exist yet."""
    if fresh:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    else:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if not fresh:
            if os.read(fd, len(content) + 1) == content:
                return  # the same bytes: left alone, its times too
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _remove_stale(root: str, keep: set[str]) -> None:
    """Remove what an earlier render wrote under `root` and this one did not, then the folders left empty."""
    for folder, _, names in os.walk(root, topdown=False):  # a folder after everything in it
        for name in names:
            path = os.path.join(folder, name)
            if path not in keep and name != MARKER:
                os.unlink(path)
        if folder != root and not os.listdir(folder):
            os.rmdir(folder)


def _prepare(out: Path) -> bool:
    """Make `out` ready for a render: new, empty, or written by an earlier render (never anything else). True
    when it holds nothing yet."""
    existed = out.exists()
    if existed and not (out / MARKER).exists() and any(out.iterdir()):
        raise ConfigError(f"{out} is not empty and was not written by render; choose another --out")
    fresh = not existed or not any(out.iterdir())
    out.mkdir(parents=True, exist_ok=True)
    _update(os.path.join(out, MARKER), b"written by python -m components render; replaced on every run\n", fresh=fresh)
    return fresh
