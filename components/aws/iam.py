"""IAM facts for EKS: who may assume each role, and the AWS managed policies it needs."""

from __future__ import annotations

import json

CLUSTER_POLICIES = ("arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",)
NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
)
CLUSTER_ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def assume_role_policy(service: str) -> str:
    """A trust policy letting an AWS service (eks.amazonaws.com, ec2.amazonaws.com) assume the role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
        }
    )


def policy_name(arn: str) -> str:
    """The short name of a managed policy, for stable resource names."""
    return arn.rsplit("/", 1)[-1]


EFS_CSI_POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEFSCSIDriverPolicy"


def irsa_trust_policy(oidc_provider_arn: str, issuer: str, namespace: str, service_account: str) -> str:
    """A trust policy letting one Kubernetes service account assume the role through the cluster's OIDC provider."""
    host = issuer.removeprefix("https://")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": oidc_provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                            f"{host}:aud": "sts.amazonaws.com",
                        }
                    },
                }
            ],
        }
    )
