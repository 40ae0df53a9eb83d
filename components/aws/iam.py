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
