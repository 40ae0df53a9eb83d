"""A kubeconfig for an EKS cluster that gets its token from `aws eks get-token`."""

from __future__ import annotations

import yaml


def kubeconfig(name: str, endpoint: str, ca_data: str, region: str) -> str:
    """The kubeconfig YAML of an EKS cluster; credentials come from the caller's AWS identity."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [
                {
                    "name": name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": [
                                "eks",
                                "get-token",
                                "--cluster-name",
                                name,
                                "--region",
                                region,
                                "--output",
                                "json",
                            ],
                            "interactiveMode": "Never",
                        }
                    },
                }
            ],
        },
        sort_keys=False,
    )
