"""Rules over the Kubernetes objects a stack or a TrainingJob emits: placement, NCCL, RDMA, images, robustness."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from components import quantity
from components.fabric import PRIMARY_INTERFACE
from components.manifests.gang import KUEUE_QUEUE_LABEL as KUEUE_QUEUE
from components.manifests.pod import VOLCANO_GROUP_ANNOTATION
from components.models.nodepool import GPU_TAINT_KEY as GPU_TAINT
from components.rules.pods import REPLICA_KEYS, multi_node, resources, templates
from components.rules.podtemplate import GPU, PodTemplate
from components.rules.rule import Rule, Settings, Subject
from components.rules.trainjobs import RUNTIME_KINDS, TRAINJOB, runtime_spec

# Volcano reads either annotation; we write the first.
VOLCANO_GROUP = (VOLCANO_GROUP_ANNOTATION, "scheduling.volcano.sh/group-name")
RDMA_RESOURCE = re.compile(r"^(rdma/|vpc\.amazonaws\.com/efa$)|sriov|mlnx|_vf$")
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def _gpu_templates(subject: Subject, subjects: list[Subject]) -> Iterator[PodTemplate]:
    yield from (t for t in templates(subject.data, subjects) if t.gpus)


def _known_templates(subject: Subject, subjects: list[Subject]) -> Iterator[PodTemplate]:
    """GPU pod templates whose placement, fabric and /dev/shm are known (not a TrainJob's without its runtime)."""
    yield from (t for t in _gpu_templates(subject, subjects) if not t.partial)


def gpu_placement(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """GPU pods tolerate the GPU taint and select GPU nodes."""
    for t in _known_templates(subject, subjects):
        tolerations = t.spec.get("tolerations") or []
        if not any(
            x.get("key") == GPU_TAINT or (x.get("operator") == "Exists" and not x.get("key")) for x in tolerations
        ):
            yield f"{t.role} pods request GPUs but tolerate no {GPU_TAINT} taint"
        affinity = (t.spec.get("affinity") or {}).get("nodeAffinity")
        if not t.spec.get("nodeSelector") and not affinity:
            yield f"{t.role} pods request GPUs but select no GPU nodes"


def gpu_requests_equal_limits(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """GPU requests equal GPU limits."""
    for t in templates(subject.data, subjects):
        for c in t.spec.get("containers", []):
            resources = c.get("resources") or {}
            limit, request = (resources.get("limits") or {}).get(GPU), (resources.get("requests") or {}).get(GPU)
            if request is not None and limit is not None and int(float(limit)) != int(float(request)):
                yield f"{t.role}/{c.get('name')}: nvidia.com/gpu request {request} differs from its limit {limit}"
            elif request is not None and limit is None:
                yield f"{t.role}/{c.get('name')}: nvidia.com/gpu is requested but not limited"


def shared_memory(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """Multi-node jobs mount a Memory-backed /dev/shm of a sane size."""
    if not multi_node(subject.data, subjects):
        return
    minimum = quantity.parse(settings.min_shm)
    for t in _known_templates(subject, subjects):
        volumes = {v.get("name"): v for v in t.spec.get("volumes", [])}
        for c in t.spec.get("containers", []):
            mount = next(
                (m for m in c.get("volumeMounts", []) if m.get("mountPath", "").rstrip("/") == "/dev/shm"), None
            )
            source = (volumes.get(mount["name"]) or {}).get("emptyDir") if mount else None
            if source is None or source.get("medium") != "Memory":
                yield f"{t.role}/{c.get('name')}: no Memory-backed emptyDir at /dev/shm (the container default is 64Mi)"
            elif source.get("sizeLimit") and quantity.parse(str(source["sizeLimit"])) < minimum:
                yield f"{t.role}/{c.get('name')}: /dev/shm is {source['sizeLimit']}, below {settings.min_shm}"


def gang_scheduled(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """Multi-node jobs are gang-scheduled when a gang scheduler is installed."""
    if settings.gang_scheduler == "none" or not multi_node(subject.data, subjects):
        return
    data = subject.data
    labels = (data.get("metadata") or {}).get("labels") or {}
    if settings.gang_scheduler == "kueue":
        # Kueue admits the TrainJob, by its own label; its runtime is no workload of Kueue's.
        if subject.kind not in RUNTIME_KINDS and KUEUE_QUEUE not in labels:
            yield f"a multi-node job without the {KUEUE_QUEUE} label is not admitted as a whole by Kueue"
        return
    if subject.kind in (TRAINJOB, *RUNTIME_KINDS):
        # Trainer makes the PodGroup when the runtime's podGroupPolicy names Volcano.
        policy = ((runtime_spec(data, subjects) or {}).get("podGroupPolicy") or {}).get("volcano")
    else:
        policy = ((data.get("spec") or {}).get("runPolicy") or {}).get("schedulingPolicy")
    for t in templates(data, subjects):
        if t.partial:
            continue
        grouped = policy is not None or any(a in (t.metadata.get("annotations") or {}) for a in VOLCANO_GROUP)
        if t.spec.get("schedulerName") != "volcano" or not grouped:
            yield f"{t.role} pods are not gang-scheduled by Volcano (schedulerName volcano and a PodGroup)"


# GKE GPUDirect's NCCL plugins name the GPU NICs themselves; NCCL_SOCKET_IFNAME stays on eth0 there.
GKE_NIC_VARIABLES = ("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "NCCL_FASTRAK_IFNAME")


def nccl_interface(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """NCCL_SOCKET_IFNAME (and GKE's GPU NIC variables) name interfaces the pod has, and NCCL_SOCKET_IFNAME
    is not eth0 when Multus attaches a fabric."""
    for t in _known_templates(subject, subjects):
        if t.spec.get("hostNetwork"):
            continue  # the pod sees every interface of its node
        multus = [interface for _, interface in t.multus_networks()]
        gke = [name for name, _ in t.gke_interfaces() or [] if name and name != PRIMARY_INTERFACE]
        interfaces = (PRIMARY_INTERFACE, *multus, *gke)
        for c in t.spec.get("containers", []):
            where = f"{t.role}/{c.get('name')}"
            env = t.env(c)
            value = env.get("NCCL_SOCKET_IFNAME")
            if value is not None and not value.startswith("^"):
                wanted = [v.lstrip("=") for v in value.split(",")]
                if not any(i.startswith(w) for w in wanted for i in interfaces):
                    yield f"{where}: NCCL_SOCKET_IFNAME={value} names no interface of the pod ({', '.join(interfaces)})"
                elif multus and all(w.startswith("eth") for w in wanted):
                    yield f"{where}: the pod attaches {', '.join(multus)} but NCCL bootstraps on eth0"
            for variable in GKE_NIC_VARIABLES if gke else ():
                names = [n.strip() for n in env.get(variable, "").split(",") if n.strip()]
                missing = [n for n in names if n not in interfaces]
                if missing:
                    yield (
                        f"{where}: {variable} names {', '.join(missing)}, which the pod does not attach "
                        f"({', '.join(interfaces)})"
                    )


def rdma_devices(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """Pods that use RDMA (InfiniBand enabled, EFA) request the device resource and IPC_LOCK, unprivileged."""
    for t in templates(subject.data, subjects):
        if t.partial:
            continue  # the device and IPC_LOCK may come from the runtime
        for c in t.spec.get("containers", []):
            env = t.env(c)
            if env.get("NCCL_IB_DISABLE") != "0" and env.get("FI_PROVIDER") != "efa":
                continue
            if not (c.get("resources") or {}).get("limits") and not (c.get("resources") or {}).get("requests"):
                continue  # an MPI launcher: it forwards the variables and runs no NCCL itself
            if GPU not in (requested := resources(c)):
                continue
            context = c.get("securityContext") or {}
            if not any(RDMA_RESOURCE.search(r) for r in requested):
                yield f"{t.role}/{c.get('name')}: uses RDMA but requests no RDMA or EFA device resource"
            if "IPC_LOCK" not in ((context.get("capabilities") or {}).get("add") or []):
                yield f"{t.role}/{c.get('name')}: uses RDMA without IPC_LOCK (memory registration fails)"
            if context.get("privileged"):
                yield f"{t.role}/{c.get('name')}: is privileged; RDMA needs only its device and IPC_LOCK"


def checkpoint_claims(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """Volumes a multi-node job writes to (checkpoints) are ReadWriteMany claims."""
    if not multi_node(subject.data, subjects):
        return
    namespace = (subject.data.get("metadata") or {}).get("namespace")
    claims = {
        (s.data["metadata"].get("namespace"), s.data["metadata"]["name"]): s.data
        for s in subjects
        if s.kind == "PersistentVolumeClaim"
    }
    for t in _gpu_templates(subject, subjects):
        volumes = {v["name"]: v for v in t.spec.get("volumes", []) if "persistentVolumeClaim" in v}
        for c in t.spec.get("containers", []):
            for mount in c.get("volumeMounts", []):
                volume = volumes.get(mount.get("name"))
                if volume is None or mount.get("readOnly"):
                    continue
                name = volume["persistentVolumeClaim"]["claimName"]
                claim = claims.get((namespace, name))
                modes = ((claim or {}).get("spec") or {}).get("accessModes") or []
                if claim is not None and "ReadWriteMany" not in modes:
                    yield f"{t.role}: claim {name} is written by every node but is {', '.join(modes) or 'not shared'}"


def _registry(image: str) -> str:
    first = image.split("/", 1)[0]
    return first if "/" in image and ("." in first or ":" in first or first == "localhost") else "docker.io"


def images(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """Images are pinned (a tag that is not latest, or a digest) and come from allowed registries."""
    for t in templates(subject.data, subjects):
        for c in t.containers:
            if t.partial and "image" not in c:
                continue  # the runtime's image, unknown here
            image = str(c.get("image", ""))
            name = image.rsplit("/", 1)[-1]
            if not _DIGEST.search(image) and (":" not in name or name.endswith(":latest")):
                yield f"{t.role}/{c.get('name')}: image {image} is not pinned to a tag or digest"
            allowed = settings.allowed_registries
            if allowed and _registry(image) not in allowed:
                yield f"{t.role}/{c.get('name')}: image {image} is not from an allowed registry ({', '.join(allowed)})"


def host_namespaces(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """No hostNetwork or hostIPC unless allowed."""
    if settings.allow_host_network:
        return
    for t in templates(subject.data, subjects):
        for key in ("hostNetwork", "hostIPC"):
            if t.spec.get(key):
                yield f"{t.role} pods use {key}"


def robustness(subject: Subject, _: list[Subject], __: Settings) -> Iterator[str]:
    """Training jobs set a backoffLimit and a restart policy."""
    data = subject.data
    kinds = ("Job", "PyTorchJob", "TFJob", "MPIJob", *RUNTIME_KINDS)
    if data.get("kind") not in kinds or not any(t.gpus for t in templates(data)):
        return
    spec = data.get("spec") or {}
    if data["kind"] in RUNTIME_KINDS:
        # A TrainJob restarts as its runtime's JobSet says: the runtime owns both.
        jobset = (spec.get("template") or {}).get("spec") or {}
        if (jobset.get("failurePolicy") or {}).get("maxRestarts") is None:
            yield "no failurePolicy.maxRestarts: the first failure of any node fails the whole TrainJob"
        for t in templates(data):
            if not t.spec.get("restartPolicy"):
                yield f"{t.role} has no restartPolicy"
        return
    backoff = spec.get("backoffLimit") if data["kind"] == "Job" else (spec.get("runPolicy") or {}).get("backoffLimit")
    if backoff is None:
        yield "no backoffLimit: a transient failure either retries forever (operators) or six times silently"
    replicas = next((spec[k] for k in REPLICA_KEYS if k in spec), None)
    if replicas is not None:
        for role, replica in replicas.items():
            if not replica.get("restartPolicy"):
                yield f"{role} has no restartPolicy"


def nccl_debug_in_production(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """NCCL_DEBUG=INFO in a production stack (verbose logs on every rank)."""
    if not settings.production:
        return
    for t in templates(subject.data, subjects):
        for c in t.spec.get("containers", []):
            if t.env(c).get("NCCL_DEBUG", "").upper() in ("INFO", "TRACE"):
                yield f"{t.role}/{c.get('name')}: NCCL_DEBUG={t.env(c)['NCCL_DEBUG']} in production"


def _rule(id: str, severity: Any, enforcement: Any, check: Any, fix: str) -> Rule:
    return Rule(id, severity, enforcement, (check.__doc__ or "").strip(), fix, ("*",), check)


RULES: tuple[Rule, ...] = (
    _rule(
        "gpu-placement",
        "high",
        "mandatory",
        gpu_placement,
        "tolerate the pool's taints and select its nodes (a TrainingJob on the pool does both)",
    ),
    _rule(
        "gpu-requests-equal-limits",
        "high",
        "mandatory",
        gpu_requests_equal_limits,
        "set nvidia.com/gpu in limits, equal to requests",
    ),
    _rule(
        "shared-memory",
        "high",
        "mandatory",
        shared_memory,
        "mount an emptyDir with medium: Memory at /dev/shm, sized ~8Gi per GPU (TrainingJob shmSize)",
    ),
    _rule(
        "gang-scheduling",
        "high",
        "mandatory",
        gang_scheduled,
        "Volcano: schedulerName volcano and runPolicy.schedulingPolicy (a training runtime: podGroupPolicy.volcano) "
        "or a PodGroup; Kueue: the queue-name label",
    ),
    _rule(
        "nccl-socket-interface",
        "critical",
        "mandatory",
        nccl_interface,
        "set NCCL_SOCKET_IFNAME to the interface of the fabric the pod attaches (net1 for its first NAD); on GKE "
        "GPUDirect keep eth0 and list the attached GPU NICs in NCCL_GPUDIRECTTCPX_SOCKET_IFNAME / NCCL_FASTRAK_IFNAME",
    ),
    _rule(
        "rdma-devices",
        "high",
        "mandatory",
        rdma_devices,
        "request the RDMA / EFA resource and add IPC_LOCK; drop privileged",
    ),
    _rule(
        "checkpoint-rwx",
        "high",
        "mandatory",
        checkpoint_claims,
        "give claims that every node writes accessModes [ReadWriteMany] (NFS, EFS, FSx, Filestore)",
    ),
    _rule("pinned-images", "medium", "mandatory", images, "use a version tag or digest from an allowed registry"),
    _rule(
        "host-namespaces",
        "high",
        "mandatory",
        host_namespaces,
        "drop hostNetwork / hostIPC; attach the fabric with Multus and size /dev/shm instead",
    ),
    _rule(
        "job-robustness",
        "medium",
        "mandatory",
        robustness,
        "set backoffLimit (TrainingJob backoffLimit; a training runtime's failurePolicy.maxRestarts) and a "
        "restartPolicy on every replica",
    ),
    _rule(
        "nccl-debug-production",
        "low",
        "advisory",
        nccl_debug_in_production,
        "use NCCL_DEBUG=WARN in production; INFO while bringing a fabric up",
    ),
)
