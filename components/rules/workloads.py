"""Rules over the Kubernetes objects a stack or a TrainingJob emits: GPU requests, /dev/shm, gangs, NCCL, RDMA,
images, host namespaces, robustness."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from components import quantity
from components.fabric import EFA_RESOURCE, PRIMARY_INTERFACE
from components.images import DOCKER_HUB, is_host
from components.manifests.gang import KUEUE_QUEUE_LABEL as KUEUE_QUEUE
from components.rules import devices
from components.rules.documents import TEMPLATE_VARIABLE
from components.rules.kinds import REPLICA_KEYS, kind_of
from components.rules.pods import KUEUE_POD_GROUP, VOLCANO_GROUPS, gpu_pods, multi_node, resources, templates
from components.rules.podtemplate import GPU, PodTemplate, count
from components.rules.review import once
from components.rules.rule import Advice, Rule, Settings
from components.rules.subject import Subject
from components.rules.trainjobs import RUNTIME_KINDS, TRAINJOB, runtime_spec

_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
PLACEHOLDER = re.compile(rf"{TEMPLATE_VARIABLE.pattern}|\{{[A-Za-z_][A-Za-z0-9_]*\}}")
"""Template placeholders left unexpanded in an image: a template variable, or a `{TAG}` to fill in."""


def _gpu_templates(subject: Subject, subjects: list[Subject]) -> Iterator[PodTemplate]:
    yield from (t for t in templates(subject.data, subjects) if t.gpus)


def _known_templates(subject: Subject, subjects: list[Subject]) -> Iterator[PodTemplate]:
    """GPU pod templates whose placement, fabric and /dev/shm are known (not a TrainJob's without its runtime)."""
    yield from (t for t in _gpu_templates(subject, subjects) if not t.partial)


def gpu_requests_equal_limits(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """GPU requests equal GPU limits."""
    for t in templates(subject.data, subjects):
        for c in t.spec.get("containers", []):
            resources = c.get("resources") or {}
            limit, request = (resources.get("limits") or {}).get(GPU), (resources.get("requests") or {}).get(GPU)
            limited, requested = count(limit, None), count(request, None)
            if limited is not None and requested is not None and limited != requested:
                yield f"{t.role}/{c.get('name')}: nvidia.com/gpu request {request} differs from its limit {limit}"
            elif request is not None and limit is None:
                yield f"{t.role}/{c.get('name')}: nvidia.com/gpu is requested but not limited"


def shared_memory(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """Multi-node jobs whose pods hold several GPUs give NCCL a /dev/shm larger than the container runtime's:
    a Memory-backed emptyDir of a sane size, the host's /dev/shm (hostPath), or the host's IPC namespace."""
    if not multi_node(subject.data, subjects):
        return
    minimum = quantity.parse(settings.min_shm)
    for t in _known_templates(subject, subjects):
        if t.spec.get("hostIPC") is True:
            continue  # the pod shares the host's IPC namespace, and with it the host's /dev/shm
        volumes = {v.get("name"): v for v in t.spec.get("volumes", [])}
        for c in t.spec.get("containers", []):
            where = f"{t.role}/{c.get('name')}"
            mount = next(
                (m for m in c.get("volumeMounts", []) if str(m.get("mountPath", "")).rstrip("/") == "/dev/shm"), None
            )
            volume = volumes.get(mount.get("name")) if mount else None
            if volume is None:
                if t.gpus > 1:
                    yield (
                        f"{where}: mounts nothing at /dev/shm, so its {t.gpus} GPUs get the container runtime's 64 MiB "
                        "(containerd, CRI-O), too small for NCCL's segments between them"
                    )
                else:
                    yield Advice(
                        f"{where}: mounts nothing at /dev/shm, so it gets the container runtime's 64 MiB, too small "
                        "for DataLoader workers"
                    )
                continue
            source = volume.get("emptyDir")
            if isinstance(source, dict) and source.get("medium") == "Memory":
                limit = source.get("sizeLimit")
                if limit is not None and _smaller(limit, minimum):
                    yield f"{where}: /dev/shm is {limit}, below {settings.min_shm}"
            elif isinstance(source, dict):
                yield Advice(f"{where}: /dev/shm is a disk-backed emptyDir; medium: Memory keeps it in RAM")


def _smaller(limit: Any, minimum: float) -> bool:
    try:
        return quantity.parse(str(limit)) < minimum
    except ValueError:
        return False


def _declared_gang(subject: Subject, subjects: list[Subject]) -> Iterator[str]:
    """A gang the manifest declares smaller than its GPU pods: part of the job starts, and its ranks wait for
    the rest holding their GPUs, the deadlock a gang exists to prevent."""
    data, spec = subject.data, subject.data.get("spec") if isinstance(subject.data.get("spec"), dict) else {}
    kind = kind_of(data)
    if kind is None:
        return
    if kind.group == "kubeflow.org":
        policy = (
            (spec.get("runPolicy") or {}).get("schedulingPolicy") if isinstance(spec.get("runPolicy"), dict) else None
        )
        declared, field = (
            count((policy or {}).get("minAvailable") if isinstance(policy, dict) else None, None),
            ("runPolicy.schedulingPolicy.minAvailable"),
        )
        if "elasticPolicy" in spec:
            return  # an elastic job starts at its minimum on purpose
    elif kind.group == "batch.volcano.sh":
        tasks = spec.get("tasks") if isinstance(spec.get("tasks"), list) else []
        if any(isinstance(t, dict) and t.get("dependsOn") for t in tasks):
            return  # tasks that start in stages (dependsOn) are no one gang of every pod
        declared, field = count(spec.get("minAvailable"), None), "minAvailable"
    elif subject.kind == "PodGroup" and str(data.get("apiVersion", "")).startswith("scheduling.volcano.sh/"):
        name = (data.get("metadata") or {}).get("name")
        namespace = (data.get("metadata") or {}).get("namespace")
        members = [
            t.replicas
            for s in subjects
            if s is not subject and (s.data.get("metadata") or {}).get("namespace") == namespace
            for t in templates(s.data, subjects)
            if t.gpus and any(t.annotations.get(a) == name for a in VOLCANO_GROUPS)
        ]
        declared, field, pods = count(spec.get("minMember"), None), "minMember", sum(members)
        if declared is not None and members and declared < pods:
            yield f"minMember {declared} is smaller than the {pods} GPU pods that join the group"
        return
    else:
        return
    pods = gpu_pods(data, subjects)
    if declared is not None and pods and declared < pods:
        yield f"{field} {declared} is smaller than the job's {pods} GPU pods, so part of the job can start alone"


def gang_scheduled(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """Multi-node jobs are gang-scheduled when a gang scheduler is installed, and a gang they declare holds
    every GPU pod."""
    yield from _declared_gang(subject, subjects)
    if settings.gang_scheduler == "none" or not multi_node(subject.data, subjects):
        return
    data = subject.data
    kind = kind_of(data)
    labels = (data.get("metadata") or {}).get("labels") or {}
    if settings.gang_scheduler == "kueue":
        # Kueue admits the TrainJob, by its own label; its runtime is no workload of Kueue's. Bare Pods are one
        # workload by the pod-group label.
        if subject.kind == "Pod":
            if KUEUE_QUEUE not in labels or KUEUE_POD_GROUP not in labels:
                yield (
                    f"the job's Pods lack the {KUEUE_QUEUE} and {KUEUE_POD_GROUP} labels, so Kueue does not admit "
                    "them as one"
                )
        elif subject.kind not in RUNTIME_KINDS and KUEUE_QUEUE not in labels:
            yield f"a multi-node job without the {KUEUE_QUEUE} label is not admitted as a whole by Kueue"
        return
    if kind is not None and kind.gang:
        return  # Volcano's own Job, or an operator that makes the PodGroup and sets the scheduler itself
    if subject.kind in (TRAINJOB, *RUNTIME_KINDS):
        # Trainer makes the PodGroup when the runtime's podGroupPolicy names Volcano.
        policy = ((runtime_spec(data, subjects) or {}).get("podGroupPolicy") or {}).get("volcano")
    else:
        policy = None
    for t in templates(data, subjects):
        if t.partial or not t.gpus:
            continue
        grouped = policy is not None or any(a in t.annotations for a in VOLCANO_GROUPS)
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
    """Pods that turn RDMA on (NCCL_IB_DISABLE=0, FI_PROVIDER=efa) request its device resource."""
    known, complete = devices.known(subjects)
    for t in templates(subject.data, subjects):
        if t.partial:
            continue  # the device and IPC_LOCK may come from the runtime
        for c in t.spec.get("containers", []):
            requested = resources(c)
            if GPU not in requested:
                continue  # an MPI launcher: it forwards the variables and runs no NCCL itself
            where, env = f"{t.role}/{c.get('name')}", t.env(c)
            context = c.get("securityContext") or {}
            if env.get("FI_PROVIDER") == "efa" and EFA_RESOURCE not in requested and not t.spec.get("resourceClaims"):
                yield f"{where}: sets FI_PROVIDER=efa but requests no {EFA_RESOURCE}, so libfabric finds no EFA device"
            if env.get("NCCL_IB_DISABLE") != "0":
                continue
            if devices.requests_device(requested, known, complete) is False:
                yield f"{where}: turns InfiniBand verbs on (NCCL_IB_DISABLE=0) but requests no RDMA device resource"
            capabilities = context.get("capabilities") if isinstance(context.get("capabilities"), dict) else {}
            # A privileged container has every capability; privileged-containers says what is wrong with that.
            if "IPC_LOCK" not in (capabilities.get("add") or []) and not context.get("privileged"):
                yield Advice(f"{where}: uses RDMA without IPC_LOCK; memory registration fails where memlock is limited")


@once
def _claims(subjects: list[Subject]) -> dict[tuple[Any, Any], dict[str, Any]]:
    """The PersistentVolumeClaims among the subjects, by namespace and name."""
    return {
        (s.data["metadata"].get("namespace"), s.data["metadata"]["name"]): s.data
        for s in subjects
        if s.kind == "PersistentVolumeClaim"
    }


def checkpoint_claims(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """Volumes a multi-node job writes to (checkpoints) are ReadWriteMany claims."""
    if not multi_node(subject.data, subjects):
        return
    namespace = (subject.data.get("metadata") or {}).get("namespace")
    claims = _claims(subjects)
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
    return first if "/" in image and is_host(first) else DOCKER_HUB


def images(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """Images are whole references (no unexpanded placeholder), from allowed registries, and pinned (a tag that
    is not latest, or a digest)."""
    for t in templates(subject.data, subjects):
        for c in t.containers:
            if t.partial and "image" not in c:
                continue  # the runtime's image, unknown here
            where, image = f"{t.role}/{c.get('name')}", str(c.get("image", ""))
            placeholder = PLACEHOLDER.search(image)
            if placeholder:
                yield (
                    f"{where}: image {image} holds the unexpanded placeholder {placeholder.group()}; the kubelet "
                    "cannot pull it"
                )
                continue
            name = image.rsplit("/", 1)[-1]
            if not _DIGEST.search(image) and (":" not in name or name.endswith(":latest")):
                message = f"{where}: image {image} is not pinned to a tag or digest"
                yield message if settings.require_pinned_images else Advice(message)
            allowed = settings.allowed_registries
            if allowed and _registry(image) not in allowed:
                yield f"{where}: image {image} is not from an allowed registry ({', '.join(allowed)})"


def host_namespaces(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """No hostNetwork or hostIPC unless allowed, outside the node agents' namespaces; on GKE, GPU pods may use the
    host network (GPUDirect-TCPX and TCPXO reach the GPU NICs through it on clusters without multi-networking)."""
    meta = subject.data.get("metadata") if isinstance(subject.data.get("metadata"), dict) else {}
    if settings.allow_host_network or meta.get("namespace") in settings.privileged_namespaces:
        return
    for t in templates(subject.data, subjects):
        for key in ("hostNetwork", "hostIPC"):
            if t.spec.get(key) is True and not (key == "hostNetwork" and settings.cluster == "gke" and t.gpus):
                yield f"{t.role} pods use {key}"


def privileged(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """No container runs privileged outside the namespaces exempted for node agents: a privileged container is
    root on its node, and the baseline Pod Security Standard forbids it."""
    meta = subject.data.get("metadata") if isinstance(subject.data.get("metadata"), dict) else {}
    if meta.get("namespace") in settings.privileged_namespaces:
        return
    for t in templates(subject.data, subjects):
        for c in t.containers:
            context = c.get("securityContext") or {}
            if context.get("privileged") is True:
                yield f"{t.role}/{c.get('name')}: runs privileged, with root on its node"


def robustness(subject: Subject, subjects: list[Subject], __: Settings) -> Iterator[str]:
    """Training jobs bound their retries: an operator's job restarting its pods states a backoffLimit, a training
    runtime a failurePolicy.maxRestarts."""
    data = subject.data
    kind = kind_of(data)
    if kind is None or not any(t.gpus for t in templates(data)):
        return
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    if subject.kind in RUNTIME_KINDS:
        # A TrainJob restarts as its runtime's JobSet says: the runtime owns it.
        jobset = (spec.get("template") or {}).get("spec") or {}
        if (jobset.get("failurePolicy") or {}).get("maxRestarts") is None:
            yield "no failurePolicy.maxRestarts: the first failure of any node fails the whole TrainJob"
        return
    if kind.group != "kubeflow.org" or kind.restart_default is None:
        return  # a batch/v1 Job retries 6 times by default; Volcano 3 times (maxRetry)
    run_policy = spec.get("runPolicy") if isinstance(spec.get("runPolicy"), dict) else {}
    if run_policy.get("backoffLimit") is not None:
        return
    replicas = next((spec[k] for k in REPLICA_KEYS if isinstance(spec.get(k), dict)), {})
    restarting = sorted(
        str(role)
        for role, replica in replicas.items()
        if isinstance(replica, dict)
        and (replica.get("restartPolicy") or kind.restart_default) in ("OnFailure", "Always", "ExitCode")
    )
    if restarting:
        yield (
            f"no runPolicy.backoffLimit while {', '.join(restarting)} restart their pods: {kind.controller} "
            "restarts a crash loop without end, holding the GPUs"
        )


def nccl_debug_in_production(subject: Subject, subjects: list[Subject], settings: Settings) -> Iterator[str]:
    """NCCL_DEBUG=INFO in a production stack (verbose logs on every rank)."""
    if not settings.production:
        return
    for t in templates(subject.data, subjects):
        for c in t.spec.get("containers", []):
            if t.env(c).get("NCCL_DEBUG", "").upper() in ("INFO", "TRACE"):
                yield f"{t.role}/{c.get('name')}: NCCL_DEBUG={t.env(c)['NCCL_DEBUG']} in production"


def _rule(id: str, severity: Any, enforcement: Any, check: Any, fix: str, *, gpu_only: bool = True) -> Rule:
    return Rule(id, severity, enforcement, (check.__doc__ or "").strip(), fix, ("*",), check, gpu_only=gpu_only)


RULES: tuple[Rule, ...] = (
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
        "Volcano: a Training/MPI Operator job or a Volcano Job is a gang as it stands; a training runtime needs "
        "podGroupPolicy.volcano, other kinds schedulerName volcano and a PodGroup; Kueue: the queue-name label; "
        "a declared minAvailable / minMember counts every GPU pod",
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
        f"request the fabric's device resource ({EFA_RESOURCE}, the RDMA shared device plugin's, or the NAD's "
        "SR-IOV resource) with IPC_LOCK, unprivileged",
    ),
    _rule(
        "checkpoint-rwx",
        "high",
        "mandatory",
        checkpoint_claims,
        "give claims that every node writes accessModes [ReadWriteMany] (NFS, EFS, FSx, Filestore)",
    ),
    _rule(
        "pinned-images",
        "medium",
        "mandatory",
        images,
        "expand the image's placeholders; use a version tag or digest from an allowed registry",
        gpu_only=False,
    ),
    _rule(
        "host-namespaces",
        "high",
        "advisory",
        host_namespaces,
        "drop hostNetwork / hostIPC: attach the fabric with Multus (GKE: multi-networking, "
        "networking.gke.io/interfaces) and size /dev/shm instead",
        gpu_only=False,
    ),
    _rule(
        "privileged-containers",
        "high",
        "mandatory",
        privileged,
        "add the capabilities the container needs (IPC_LOCK for RDMA, NET_ADMIN for a GPUDirect daemon) and "
        "request its devices instead; a node agent that needs the host belongs in a namespace of "
        "privileged-containers.exemptNamespaces",
        gpu_only=False,
    ),
    _rule(
        "job-robustness",
        "medium",
        "advisory",
        robustness,
        "set runPolicy.backoffLimit (TrainingJob backoffLimit; a training runtime's failurePolicy.maxRestarts)",
    ),
    _rule(
        "nccl-debug-production",
        "low",
        "advisory",
        nccl_debug_in_production,
        "use NCCL_DEBUG=WARN in production; INFO while bringing a fabric up",
    ),
)
