"""A kubeconfig for a GKE cluster that authenticates through the gke-gcloud-auth-plugin."""

from __future__ import annotations

import yaml

AUTH_PLUGIN = "gke-gcloud-auth-plugin"
INSTALL_HINT = (
    "Install gke-gcloud-auth-plugin for use with kubectl by following "
    "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin"
)


def kubeconfig(name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig YAML for the cluster at `endpoint`, its context and user named `name`."""
    server = endpoint if endpoint.startswith("https://") else f"https://{endpoint}"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": ca_certificate}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
        "preferences": {},
        "users": [
            {
                "name": name,
                "user": {
                    # The plugin mints short-lived tokens from the caller's gcloud credentials, so the
                    # kubeconfig holds no credential of its own; GKE has no static client certificates.
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": AUTH_PLUGIN,
                        "installHint": INSTALL_HINT,
                        "provideClusterInfo": True,
                    }
                },
            }
        ],
    }
    return yaml.safe_dump(document, sort_keys=False)
