"""ServiceAccounts the stack declares, and where a job's pods name theirs."""

from __future__ import annotations

from typing import Any

from components import identity
from components.manifests.meta import metadata
from components.models import ClusterSpec
from components.models.identity import ServiceAccountSpec


def service_account(account: ServiceAccountSpec, cluster: ClusterSpec) -> dict[str, Any]:
    """The ServiceAccount of a declared service account, with its annotations (on GKE, its Google service account)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(account.name, account.namespace, annotations=identity.annotations(account, cluster)),
    }


def service_accounts(accounts: list[ServiceAccountSpec], cluster: ClusterSpec) -> list[dict[str, Any]]:
    """Every declared ServiceAccount."""
    return [service_account(a, cluster) for a in accounts]


def pod_service_account(pod: dict[str, Any], name: str | None) -> None:
    """Run the pod spec as the job's service account, when it names one."""
    if name:
        pod["serviceAccountName"] = name
