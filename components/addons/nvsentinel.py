"""NVIDIA NVSentinel: finds GPU and NIC faults at run time, cordons the node and evicts its training pods.

The stack's agent on existing clusters (components/repair.py chooses). Keys and defaults are NVSentinel's
(distros/kubernetes/nvsentinel values-full.yaml; docs.nvidia.com/nvsentinel configuration/node-drainer).
"""

from __future__ import annotations

from typing import Any

from components import repair
from components.addons import gpu_operator
from components.addons.install import HelmRelease
from components.stack import Stack
from components.versions import NVSENTINEL
from components.wellknown import NVSENTINEL_NAMESPACE as NAMESPACE

NAME = "nvsentinel"
EVICTION = "Immediate"
"""How node-drainer moves a training pod off a faulty node: through the Eviction API, so the pod gets the
DisruptionTarget condition that Job pod failure policies, JobSet and the Training Operator read as a disruption,
not a failure of the job. AllowCompletion would wait for a training pod that never finishes on its own, and
DeleteAfterTimeout force-deletes (no DisruptionTarget)."""
EVICTION_GRACE_SECONDS = "60"
"""The grace period of those evictions (node-drainer evictionTimeoutInSeconds, a string in its values; NVSentinel's
default): the time a worker has to write its last checkpoint after SIGTERM."""
DCGM_SERVICE = f"nvidia-dcgm.{gpu_operator.NAMESPACE}.svc"
"""The GPU Operator's standalone DCGM (dcgm.enabled), which NVSentinel's GPU health monitor connects to."""
DCGM_PORT = 5555


def release(stack: Stack) -> HelmRelease | None:
    """NVSentinel with fault quarantine and the node drainer on, evicting the stack's training namespaces'
    pods; fault remediation (a reboot through its janitor) only with `health.repair.reboot`."""
    if not repair.nvsentinel(stack.config):
        return None
    reboot = stack.config.health.repair.reboot
    values: dict[str, Any] = {
        "global": {
            "gpuHealthMonitor": {"enabled": True},
            "syslogHealthMonitor": {"enabled": True},
            "faultQuarantine": {"enabled": True},
            "nodeDrainer": {"enabled": True},
            # fault-quarantine and node-drainer read health events from the datastore.
            "mongodbStore": {"enabled": True},
            "faultRemediation": {"enabled": reboot},
            "janitor": {"enabled": reboot},
            # Its node agents run on the GPU nodes, whatever their taints (NVSentinel's own recipes do the same).
            "tolerations": [{"operator": "Exists"}],
        },
        "gpu-health-monitor": {
            "dcgm": {
                "dcgmK8sServiceEnabled": True,
                "service": {"endpoint": DCGM_SERVICE, "port": DCGM_PORT},
            }
        },
        # The labeler marks a node's driver installed only when it sees the GPU Operator's driver pod; where the
        # node image brings the driver (EKS AMI, GKE COS, hosts with their own), it must assume it, or the GPU
        # monitors never schedule (AICR CheckNVSentinelDriverLabelDetectable, NVIDIA/aicr#2175).
        "labeler": {"assumeDriverInstalled": not stack.config.runs_gpu_driver},
        "node-drainer": {
            "evictionTimeoutInSeconds": EVICTION_GRACE_SECONDS,
            "userNamespaces": [
                *({"name": namespace, "mode": EVICTION} for namespace in stack.namespaces),
                # Everything else keeps NVSentinel's default.
                {"name": "*", "mode": "AllowCompletion"},
            ],
        },
    }
    if reboot:
        # The generic provider reboots through a privileged Job on the node: no cloud credentials needed.
        values["janitor"] = {"csp": {"provider": "generic"}}
    return HelmRelease(NAME, NVSENTINEL, NAMESPACE, values, needs=(gpu_operator.NAME,))
