"""The objects of a pool's fabric check: its scripts, a headless Service, the Indexed Job that runs NCCL
tests across the pool's nodes, and (made at deploy time) the Secret with its ssh key pair.

The gate is a batch/v1 Job because that is the workload pulumi-kubernetes awaits to completion and
fails on, quoting the failed pod's termination message, where the verdict goes. Pod 0 runs mpirun
over ssh to every pod (itself included), like an MPIJob launcher that is also a node; the MPI Operator
is not needed, and its MPIJob could only be awaited by a condition that times out on failure.

On a pool that scales from zero the same Job and PodGroup wait in a ConfigMap, and a CronJob of ours
(fabric-watch.sh, kubectl as its own service account) creates them once the pool has the nodes, then records
the verdict in the check's result ConfigMap and an event.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from components import nvlink
from components.fabriccheck import SCRIPTS_DIR, SSH_PORT, FabricCheck
from components.images import mirror_objects, rewrite
from components.manifests import gang
from components.manifests.indexedjob import headless_service, index_env
from components.manifests.meta import job_labels, metadata
from components.manifests.pod import env_list, worker_template
from components.manifests.ports import container_port
from components.models.nodepool import nccl_bytes
from components.nodecheck import KUBECTL_IMAGE, RESULT_LABEL

CONTAINER = "nccl-tests"
CHECK_LABEL = "gpu-training/fabric-check"
FINGERPRINT_ANNOTATION = "gpu-training/fabric-check-inputs"
# pulumi-kubernetes replaces a Job that failed to complete on the next `pulumi up`: a failed gate runs
# again once the fabric is fixed, instead of standing as failed.
REPLACE_UNREADY = {"pulumi.com/replaceUnready": "true"}
SCRIPTS = ("fabric-check.sh", "nccl-verdict.sh", "gib-env.sh")
WATCH_SCRIPT = "fabric-watch.sh"
WATCH_SCHEDULE = "*/5 * * * *"
"""How often the scale-up watcher looks: a pool's first nodes wait at most this long for their fabric's test."""
TEMPLATE_DIR = "/etc/fabric-check/template"
TEMPLATE_KEY = "job.yaml"
SSH_DIR = "/etc/fabric-check/ssh"
SSH_KEYS = ("id_ed25519", "id_ed25519.pub")


def script(name: str) -> str:
    """The text of one of the gate's shell scripts."""
    return resources.files("components.scripts").joinpath(name).read_text()


def scripts_name(check: FabricCheck) -> str:
    """The ConfigMap with the gate's scripts."""
    return f"{check.name}-scripts"


def ssh_secret_name(check: FabricCheck) -> str:
    """The Secret with the gate's ssh key pair."""
    return f"{check.name}-ssh"


def objects(check: FabricCheck) -> list[dict[str, Any]]:
    """The check's objects in apply order; its ssh Secret comes from `ssh_secret` at deploy. At deploy time the
    Job comes last; on scale-up the watcher does (a CronJob), and the Job waits in its template."""
    if check.when == "scale-up":
        return [configmap(check), service(check), template(check), *watcher(check)]
    return [configmap(check), service(check), *run(check)]


def run(check: FabricCheck) -> list[dict[str, Any]]:
    """What runs the test: its ComputeDomain (rack-scale NVLink), the gang's PodGroup (Volcano) and the Job, its
    images through the pool's mirror."""
    plan = check.plan
    out = [nvlink.compute_domain(plan.compute_domain, plan.namespace, _labels(check))] if plan.compute_domain else []
    if plan.scheduler == "volcano":
        out.append(gang.podgroup(plan, check.name, check.nodes))
    return mirror_objects(check.pool.registry_mirror, [*out, job(check)])


def watcher_name(check: FabricCheck) -> str:
    """The scale-up watcher's CronJob and service account."""
    return f"{check.name}-watch"


def template(check: FabricCheck) -> dict[str, Any]:
    """scale-up: the ConfigMap holding the Job (and its PodGroup) that the watcher creates."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(f"{check.name}-template", check.namespace, labels=_labels(check)),
        "data": {TEMPLATE_KEY: yaml.safe_dump_all(run(check), sort_keys=False)},
    }


def watcher(check: FabricCheck) -> list[dict[str, Any]]:
    """scale-up: the watcher's identity, its rights (the check's Job, PodGroup, pods, result and events in its
    namespace; the nodes, to count them) and the CronJob that runs fabric-watch.sh every few minutes."""
    name, ns, labels = watcher_name(check), check.namespace, _labels(check)
    cluster_role = f"gpu-training-{ns}-{name}"
    rules = [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "create", "delete"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "patch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    ]
    if check.plan.scheduler == "volcano":
        rules.append(
            {"apiGroups": ["scheduling.volcano.sh"], "resources": ["podgroups"], "verbs": ["create", "delete"]}
        )
    if check.plan.compute_domain:
        rules.append(
            {"apiGroups": ["resource.nvidia.com"], "resources": ["computedomains"], "verbs": ["create", "delete"]}
        )
    account = {"kind": "ServiceAccount", "name": name, "namespace": ns}
    env = {
        "NAMESPACE": ns,
        "JOB": check.name,
        "NODES": str(check.nodes),
        "NODE_SELECTOR": ",".join(f"{k}={v}" for k, v in watched_nodes(check).items()),
        "FINGERPRINT": check.fingerprint(),
        "RESULT": check.result_name,
        "TEMPLATE": f"{TEMPLATE_DIR}/{TEMPLATE_KEY}",
    }
    pod = {
        "serviceAccountName": name,
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "watch",
                "image": rewrite(check.pool.registry_mirror, check.pool.kubectl_image or KUBECTL_IMAGE),
                "command": ["sh", f"{SCRIPTS_DIR}/{WATCH_SCRIPT}"],
                "env": env_list(env),
                "volumeMounts": [
                    {"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True},
                    {"name": "template", "mountPath": TEMPLATE_DIR, "readOnly": True},
                ],
            }
        ],
        "volumes": [
            {"name": "scripts", "configMap": {"name": scripts_name(check), "defaultMode": 0o555}},
            {"name": "template", "configMap": {"name": f"{check.name}-template"}},
        ],
    }
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(name, ns, labels=labels)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": metadata(name, ns, labels=labels),
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": metadata(name, ns, labels=labels),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [account],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": metadata(cluster_role, labels=labels),
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": metadata(cluster_role, labels=labels),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role},
            "subjects": [account],
        },
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": metadata(name, ns, labels=labels),
            "spec": {
                "schedule": WATCH_SCHEDULE,
                "concurrencyPolicy": "Forbid",
                "successfulJobsHistoryLimit": 1,
                "failedJobsHistoryLimit": 1,
                "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels}, "spec": pod}}},
            },
        },
    ]


def watched_nodes(check: FabricCheck) -> dict[str, str]:
    """The labels of the pool's nodes the check may run on: every node of the pool, or its checked ones where the
    pool has a node check."""
    pool = check.pool
    passed = {RESULT_LABEL: "passed"} if pool.startup_taints else {}
    return {**pool.node_selector, **passed}


def configmap(check: FabricCheck) -> dict[str, Any]:
    """The ConfigMap with fabric-check.sh (each pod's part) and nccl-verdict.sh (the judge)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(scripts_name(check), check.namespace, labels=_labels(check)),
        "data": {name: script(name) for name in (*SCRIPTS, *((WATCH_SCRIPT,) if check.when == "scale-up" else ()))},
    }


def ssh_secret(check: FabricCheck, private_key: str, public_key: str) -> dict[str, Any]:
    """The Secret with the gate's ssh key pair (OpenSSH format), which every pod trusts."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(ssh_secret_name(check), check.namespace, labels=_labels(check)),
        "type": "Opaque",
        "stringData": {SSH_KEYS[0]: private_key, SSH_KEYS[1]: public_key},
    }


def service(check: FabricCheck) -> dict[str, Any]:
    """The headless Service that names pod i `<job>-<i>.<job>`, on the gate's sshd port."""
    return headless_service(check.name, check.namespace, job=check.name, labels=_labels(check), port=("ssh", SSH_PORT))


def test_args(check: FabricCheck) -> list[str]:
    """The nccl-tests flags: the sizes, one GPU per rank, results checked (so #wrong counts)."""
    sizes = check.sizes
    assert sizes.max is not None
    return ["-b", sizes.min, "-e", sizes.max, "-f", str(sizes.factor), "-g", "1", "-c", "1", "-w", "5", "-n", "20"]


def environment(check: FabricCheck) -> dict[str, str]:
    """What fabric-check.sh and nccl-verdict.sh read, beside the fabric's own environment."""
    plan = check.plan
    assert check.sizes.max is not None
    return {
        "NODES": str(plan.nodes),
        "GPUS": str(plan.gpus_per_node),
        "HOST_PREFIX": check.name,
        "SERVICE": check.name,
        "SSH_PORT": str(SSH_PORT),
        "MPIRUN": check.image.mpirun,
        "TEST": plan.spec.command[0],
        "TEST_ARGS": " ".join(test_args(check)),
        "MPI_ARGS": " ".join(check.image.mpi_args),
        "FORWARD": " ".join([*plan.env, "LD_LIBRARY_PATH", "PATH"]),
        "SETUP": check.image.setup,
        "CHECK": f"pool {check.pool.name}",
        "FLOOR_GBS": f"{check.floor_gbs:g}",
        "MAX_BYTES": str(nccl_bytes(check.sizes.max)),
        "RANKS": str(plan.world_size),
        "NETWORKS": ",".join(check.networks),
        "MIN_NCCL": check.min_nccl or "",
        "NVLS": "1" if check.nvls else "",
        "LOGS": check.logs,
    }


def job(check: FabricCheck) -> dict[str, Any]:
    """The Indexed Job: one pod per node with all its GPUs and the pool's whole fabric; pod 0 decides."""
    plan = check.plan
    extra_env = [index_env(), *env_list(environment(check))]
    template = worker_template(
        plan,
        role="fabric-check",
        container=CONTAINER,
        command=["sh", f"{SCRIPTS_DIR}/{SCRIPTS[0]}"],
        restart_policy="Never",
        extra_env=extra_env,
        podgroup=check.name if plan.scheduler == "volcano" else None,
        annotations={FINGERPRINT_ANNOTATION: check.fingerprint()},
    )
    pod = template["spec"]
    pod["subdomain"] = check.name
    body = pod["containers"][0]
    body["ports"] = [container_port("ssh", SSH_PORT)]
    # The verdict is the termination message; without one (a crash), the log's tail stands in.
    body["terminationMessagePolicy"] = "FallbackToLogsOnError"
    body["volumeMounts"] += [
        {"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True},
        {"name": "ssh", "mountPath": SSH_DIR, "readOnly": True},
    ]
    pod["volumes"] += [
        {"name": "scripts", "configMap": {"name": scripts_name(check), "defaultMode": 0o555}},
        {"name": "ssh", "secret": {"secretName": ssh_secret_name(check), "defaultMode": 0o400}},
    ]
    template["metadata"]["labels"][CHECK_LABEL] = check.pool.name
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(
            check.name,
            check.namespace,
            labels={**_labels(check), **gang.queue_labels(plan)},
            annotations=REPLACE_UNREADY,
        ),
        "spec": {
            "completionMode": "Indexed",
            "completions": plan.nodes,
            "parallelism": plan.nodes,
            # Any failed pod fails the gate at once; pod 0 carries the verdict.
            "backoffLimit": 0,
            "activeDeadlineSeconds": check.timeout_minutes * 60,
            "template": template,
        },
    }


def _labels(check: FabricCheck) -> dict[str, str]:
    return {**job_labels(check.name), CHECK_LABEL: check.pool.name}
