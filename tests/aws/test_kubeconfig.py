"""The EKS kubeconfig."""

from __future__ import annotations

import yaml

from components.aws.kubeconfig import kubeconfig


def test_kubeconfig_gets_tokens_from_aws_eks_get_token() -> None:
    config = yaml.safe_load(kubeconfig("train-prod", "https://x.eks.amazonaws.com", "Q0VSVA==", "us-east-1"))
    assert config["clusters"][0]["cluster"] == {
        "server": "https://x.eks.amazonaws.com",
        "certificate-authority-data": "Q0VSVA==",
    }
    assert config["current-context"] == "train-prod"
    user = config["users"][0]["user"]["exec"]
    assert user["command"] == "aws"
    assert user["args"] == [
        "eks",
        "get-token",
        "--cluster-name",
        "train-prod",
        "--region",
        "us-east-1",
        "--output",
        "json",
    ]
