"""GkeWorkloadIdentities: each service account the stack declares with `gcp`, linked to the Google service account
its pods act as through Workload Identity Federation for GKE (components/identity.py has the sources).

Google's page offers two ways: IAM grants straight to the Kubernetes service account's principal, or a Kubernetes
service account linked to an IAM service account. The stack links: a Google service account works with every
Google Cloud API (some do not take the principal identifiers yet, Google's "supported products and limitations"),
an existing one may already hold grants in other projects, and the link is an annotation on the ServiceAccount, so
`render` shows offline which identity the pods take. The bucket grants of gcs volumes stay principal-set grants to
the volume's namespace (components/gcp/storage.py): those are about who mounts a claim, not who a job is.
"""

from __future__ import annotations

import pulumi
from pulumi_gcp import projects, serviceaccount

from components.identity import WORKLOAD_IDENTITY_USER, google_link, resource_name, service_account_key
from components.models import GcpClusterSpec
from components.models.identity import ServiceAccountSpec

TOKEN = "gpu-training:index:GkeWorkloadIdentities"


class GkeWorkloadIdentities(pulumi.ComponentResource):
    """Per service account with `gcp`: a Google service account the stack makes with its project roles (or the
    user's own), and roles/iam.workloadIdentityUser on it for the Kubernetes service account."""

    emails: dict[str, str]
    """Each service account's Google service account, by ServiceAccount/namespace/name."""
    bindings: dict[str, serviceaccount.IAMMember]
    """Each link's workloadIdentityUser grant, by ServiceAccount/namespace/name: its ServiceAccount waits for it."""

    def __init__(
        self,
        name: str,
        accounts: list[ServiceAccountSpec],
        cluster: GcpClusterSpec,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """The Google service accounts, grants and links of the `accounts` that set `gcp`, in the cluster's
        project; `opts` should wait for the cluster, whose creation makes the workload pool the links name."""
        super().__init__(TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.emails = {}
        self.bindings = {}
        for account in accounts:
            link = google_link(account, cluster)
            if link is None or account.gcp is None:
                continue
            stem = resource_name(name, account)
            granted: list[pulumi.Resource] = []
            target: pulumi.Input[str] = f"projects/{link.project}/serviceAccounts/{link.email}"
            if link.account_id is not None:
                made = serviceaccount.Account(
                    stem,
                    account_id=link.account_id,
                    project=cluster.project,
                    display_name=f"{cluster.name} {account.namespace}/{account.name}",
                    opts=child,
                )
                granted = [
                    projects.IAMMember(
                        f"{stem}-{role.replace('/', '-')}",
                        project=cluster.project,
                        role=role,
                        member=made.email.apply(lambda email: f"serviceAccount:{email}"),
                        opts=child,
                    )
                    for role in account.gcp.roles
                ]
                target = made.name
            key = service_account_key(account)
            self.emails[key] = link.email
            # After its roles: a pod that starts once the link exists already has them.
            self.bindings[key] = serviceaccount.IAMMember(
                f"{stem}-workload-identity-user",
                service_account_id=target,
                role=WORKLOAD_IDENTITY_USER,
                member=link.member,
                opts=pulumi.ResourceOptions(parent=self, depends_on=granted),
            )
        self.register_outputs({"emails": self.emails})

    @property
    def waits(self) -> dict[str, list[pulumi.Resource]]:
        """What each ServiceAccount waits for, by ServiceAccount/namespace/name."""
        return {key: [binding] for key, binding in self.bindings.items()}
