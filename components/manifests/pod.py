"""Pod templates for workers and launchers: GPUs, tolerations, selector, fabric, /dev/shm, volumes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components import nvlink, quantity
from components.allocatable import GPU_RESOURCE
from components.manifests import envsecret, storage
from components.manifests.meta import INSTANCE_LABEL, ROLE_LABEL, volume_name
from components.manifests.plan import JobPlan
from components.manifests.serviceaccount import pod_service_account
from components.models.nodepool import Taint
from components.topology import KUEUE_GROUP
from components.wellknown import POOL_LABEL

SHM_VOLUME = "dshm"
DEEPSPEED_VOLUME = "deepspeed-config"
SCRATCH_VOLUME = "scratch"
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
LAUNCHER_REQUESTS = {"cpu": "1", "memory": "2Gi"}


def tolerations(taints: list[Taint]) -> list[dict[str, str]]:
    """The tolerations that let a pod onto nodes with these taints."""
    out = []
    for taint in taints:
        toleration = {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
        if not taint.value:
            toleration = {"key": taint.key, "operator": "Exists", "effect": taint.effect}
        out.append(toleration)
    return out


def tolerates(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, str]) -> bool:
    """Whether one of the tolerations lets a pod onto a node with `taint` ({key, value, effect}), as the scheduler
    matches them (core/v1 Toleration.ToleratesTaint)."""
    for toleration in tolerations:
        effect = toleration.get("effect") or ""
        if effect and effect != taint["effect"]:
            continue
        key = toleration.get("key") or ""
        if toleration.get("operator") == "Exists":
            if not key or key == taint["key"]:
                return True
        elif key == taint["key"] and str(toleration.get("value") or "") == taint["value"]:
            return True
    return False


def env_list(env: Mapping[str, Any], job: str = "") -> list[dict[str, Any]]:
    """An env map as a container's env list, in order; values from Secrets and ConfigMaps (and `job`'s own Secret
    of Pulumi secrets) as valueFrom."""
    return [envsecret.env_var(name, value, job) for name, value in env.items()]


def worker_resources(plan: JobPlan) -> dict[str, str]:
    """What each GPU worker requests (and is limited to): GPUs, fabric devices, cpu, memory, scratch."""
    resources: dict[str, str | int] = {GPU_RESOURCE: plan.gpus_per_node, **plan.fabric.resources, **plan.requests}
    if plan.spec.scratch is not None:
        # Requested as ephemeral storage, so the scheduler places the pod where the disks have room and
        # the kubelet evicts a pod that writes past it rather than fill the node's disk.
        resources["ephemeral-storage"] = plan.spec.scratch.size
    return quantity.quantities(resources)


def shm_volume(size: str) -> dict[str, Any]:
    """The Memory-backed /dev/shm volume of a worker."""
    return {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": size}}


def job_volumes(plan: JobPlan) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The volumes the job itself declares (claims, DeepSpeed config, scratch) and their mounts."""
    spec = plan.spec
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for mount in spec.mounts:
        name = volume_name(mount.claim)
        entry: dict[str, Any] = {"name": name, "mountPath": mount.mount_path}
        if mount.read_only:
            entry["readOnly"] = True
        if mount.sub_path:
            entry["subPath"] = mount.sub_path
        mounts.append(entry)
        if all(v["name"] != name for v in volumes):
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": mount.claim}})
    if spec.deepspeed is not None:
        mounts.append({"name": DEEPSPEED_VOLUME, "mountPath": spec.deepspeed.mount_path, "readOnly": True})
        volumes.append({"name": DEEPSPEED_VOLUME, "configMap": {"name": deepspeed_configmap_name(plan)}})
    if spec.scratch is not None:
        mounts.append({"name": SCRATCH_VOLUME, "mountPath": spec.scratch.mount_path})
        volumes.append({"name": SCRATCH_VOLUME, "emptyDir": {"sizeLimit": spec.scratch.size}})
    files, file_mounts = envsecret.file_volumes(spec)
    return [*volumes, *files], [*mounts, *file_mounts]


def worker_template(
    plan: JobPlan,
    *,
    role: str,
    container: str,
    command: list[str] | None,
    args: list[str] | None = None,
    restart_policy: str | None = None,
    extra_env: list[dict[str, Any]] | None = None,
    podgroup: str | None = None,
    annotations: dict[str, str] | None = None,
    group: bool = False,
) -> dict[str, Any]:
    """The pod template of a GPU worker of the job on its pool.

    `group`: the job has another GPU pod set (a PyTorchJob's Master), to be placed in the same domain.
    """
    spec = plan.spec
    resources = worker_resources(plan)
    own_volumes, own_mounts = job_volumes(plan)
    mounts: list[dict[str, Any]] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}, *plan.fabric.mounts, *own_mounts]
    volumes: list[dict[str, Any]] = [shm_volume(plan.shm_size), *plan.fabric.volumes, *own_volumes]

    body: dict[str, Any] = {"name": container, "image": spec.image}
    if command is not None:
        body["command"] = command
    if args:
        body["args"] = args
    body["env"] = [*(extra_env or []), *env_list(plan.env, plan.name)]
    if spec.env_from:
        body["envFrom"] = envsecret.env_from(spec)
    body["resources"] = {"limits": dict(resources), "requests": dict(resources)}
    if plan.claims:
        body["resources"]["claims"] = [{"name": c["name"]} for c in plan.claims]
    if plan.fabric.capabilities:
        body["securityContext"] = {"capabilities": {"add": list(plan.fabric.capabilities)}}
    body["volumeMounts"] = mounts

    pod: dict[str, Any] = {}
    if restart_policy:
        pod["restartPolicy"] = restart_policy
    _scheduling(plan, pod)
    pod_service_account(pod, spec.service_account)
    pod["nodeSelector"] = dict(plan.pool.node_selector)
    pod["tolerations"] = tolerations(plan.pool.taints)
    if plan.fabric.sidecars:
        # Native sidecars: started before the worker and stopped after it, so a Job still completes.
        pod["initContainers"] = [dict(s) for s in plan.fabric.sidecars]
    pod["containers"] = [body]
    pod["volumes"] = volumes
    if spec.image_pull_secrets:
        pod["imagePullSecrets"] = envsecret.image_pull_secrets(spec)
    if plan.claims:
        pod["resourceClaims"] = [dict(c) for c in plan.claims]
    if plan.one_domain and plan.compute_domain:
        pod["affinity"] = nvlink.same_domain_affinity({nvlink.DOMAIN_LABEL: plan.compute_domain})

    annotations = {
        **plan.fabric.annotations,
        **storage.pod_annotations(plan.volumes),
        **topology_annotations(plan, group=group),
        **(annotations or {}),
    }
    if podgroup:
        annotations[VOLCANO_GROUP_ANNOTATION] = podgroup
    labels = {INSTANCE_LABEL: plan.name, ROLE_LABEL: role, POOL_LABEL: plan.pool.name}
    if plan.compute_domain:
        labels[nvlink.DOMAIN_LABEL] = plan.compute_domain
    meta: dict[str, Any] = {"labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": pod}


def topology_annotations(plan: JobPlan, *, group: bool = False) -> dict[str, str]:
    """Kueue's topology annotations of a worker pod set; `group` keeps it in one domain with the job's
    other GPU pod set."""
    if plan.scheduler != "kueue" or plan.placement is None:
        return {}
    annotations = plan.placement.kueue_annotations()
    if group:
        annotations[KUEUE_GROUP] = plan.name
    return annotations


def launcher_template(plan: JobPlan, *, container: str, command: list[str], args: list[str]) -> dict[str, Any]:
    """The pod template of a CPU-only launcher (mpirun): the job's environment, no GPUs."""
    pod: dict[str, Any] = {}
    _scheduling(plan, pod)
    pod_service_account(pod, plan.spec.service_account)
    body: dict[str, Any] = {"name": container, "image": plan.spec.image, "command": command, "args": args}
    body["env"] = env_list(plan.env, plan.name)
    if plan.spec.env_from:
        body["envFrom"] = envsecret.env_from(plan.spec)
    body["resources"] = {"requests": quantity.quantities(LAUNCHER_REQUESTS)}
    pod["containers"] = [body]
    if plan.spec.image_pull_secrets:
        pod["imagePullSecrets"] = envsecret.image_pull_secrets(plan.spec)
    return {"metadata": {"labels": {INSTANCE_LABEL: plan.name, ROLE_LABEL: "launcher"}}, "spec": pod}


def deepspeed_configmap_name(plan: JobPlan) -> str:
    """The ConfigMap that carries the job's ds_config.json."""
    return f"{plan.name}-deepspeed"


def _scheduling(plan: JobPlan, pod: dict[str, Any]) -> None:
    if plan.scheduler == "volcano":
        pod["schedulerName"] = "volcano"
    if plan.spec.scheduler.priority_class:
        pod["priorityClassName"] = plan.spec.scheduler.priority_class
