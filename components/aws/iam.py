"""IAM facts for EKS: who may assume each role, and the AWS managed policies it needs."""

from __future__ import annotations

import json
from dataclasses import dataclass

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


def partition_of(region: str) -> str:
    """The ARN partition of a region: aws, aws-cn or aws-us-gov."""
    if region.startswith("cn-"):
        return "aws-cn"
    return "aws-us-gov" if region.startswith("us-gov-") else "aws"


def pod_identity_trust_policy() -> str:
    """A trust policy letting EKS Pod Identity hand the role to the service account it is associated with."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "pods.eks.amazonaws.com"},
                    "Action": ["sts:AssumeRole", "sts:TagSession"],
                }
            ],
        }
    )


def event_queue_policy(queue_arn: str) -> str:
    """A queue policy letting EventBridge (and SQS itself) deliver events to the queue, over TLS only."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "EventBridgeDelivers",
                    "Effect": "Allow",
                    "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                    "Action": "sqs:SendMessage",
                    "Resource": queue_arn,
                },
                {
                    "Sid": "DenyHTTP",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "sqs:*",
                    "Resource": queue_arn,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                },
            ],
        }
    )


def karpenter_controller_policy(cluster: str, region: str, queue_arn: str, node_role_arn: str) -> str:
    """What Karpenter's controller may do, scoped as Karpenter's own CloudFormation template scopes it
    (aws/karpenter-provider-aws v1.14.1, website getting-started cloudformation.yaml):
    it launches, tags and terminates only instances and launch templates tagged for this cluster and
    one of its NodePools, passes only the node role, and reads only its own queue."""
    partition = partition_of(region)
    ec2 = f"arn:{partition}:ec2:{region}"
    owned = {f"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned", "aws:RequestTag/eks:eks-cluster-name": cluster}
    tagged = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}
    nodepool_request = {"aws:RequestTag/karpenter.sh/nodepool": "*"}
    nodepool_resource = {"aws:ResourceTag/karpenter.sh/nodepool": "*"}
    profiles = f"arn:{partition}:iam::*:instance-profile/*"
    profile_resource = {
        f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned",
        "aws:ResourceTag/topology.kubernetes.io/region": region,
    }
    profile_request = {**owned, "aws:RequestTag/topology.kubernetes.io/region": region}
    nodeclass_resource = {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    nodeclass_request = {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    launched = [
        f"{ec2}:*:{kind}/*"
        for kind in ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")
    ]
    statements = [
        {
            "Sid": "AllowScopedEC2InstanceAccessActions",
            "Effect": "Allow",
            "Resource": [
                f"{ec2}::image/*",
                f"{ec2}::snapshot/*",
                f"{ec2}:*:security-group/*",
                f"{ec2}:*:subnet/*",
                f"{ec2}:*:capacity-reservation/*",
                f"{ec2}:*:placement-group/*",
            ],
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
        },
        {
            "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
            "Effect": "Allow",
            "Resource": f"{ec2}:*:launch-template/*",
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            "Condition": {"StringEquals": tagged, "StringLike": nodepool_resource},
        },
        {
            "Sid": "AllowScopedEC2InstanceActionsWithTags",
            "Effect": "Allow",
            "Resource": launched,
            "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
            "Condition": {"StringEquals": owned, "StringLike": nodepool_request},
        },
        {
            "Sid": "AllowScopedResourceCreationTagging",
            "Effect": "Allow",
            "Resource": launched,
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": {**owned, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
                "StringLike": nodepool_request,
            },
        },
        {
            "Sid": "AllowScopedResourceTagging",
            "Effect": "Allow",
            "Resource": f"{ec2}:*:instance/*",
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": tagged,
                "StringLike": nodepool_resource,
                "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster},
                "ForAllValues:StringEquals": {
                    "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                },
            },
        },
        {
            "Sid": "AllowScopedDeletion",
            "Effect": "Allow",
            "Resource": [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
            "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            "Condition": {"StringEquals": tagged, "StringLike": nodepool_resource},
        },
        {
            "Sid": "AllowRegionalReadActions",
            "Effect": "Allow",
            "Resource": "*",
            "Action": [
                "ec2:DescribeCapacityReservations",
                "ec2:DescribeImages",
                "ec2:DescribeInstances",
                "ec2:DescribeInstanceStatus",
                "ec2:DescribeInstanceTypeOfferings",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplates",
                "ec2:DescribePlacementGroups",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeSpotPriceHistory",
                "ec2:DescribeSubnets",
            ],
            "Condition": {"StringEquals": {"aws:RequestedRegion": region}},
        },
        {
            "Sid": "AllowSSMReadActions",
            "Effect": "Allow",
            "Resource": f"arn:{partition}:ssm:{region}::parameter/aws/service/*",
            "Action": "ssm:GetParameter",
        },
        {"Sid": "AllowPricingReadActions", "Effect": "Allow", "Resource": "*", "Action": "pricing:GetProducts"},
        {
            "Sid": "AllowInterruptionQueueActions",
            "Effect": "Allow",
            "Resource": queue_arn,
            "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
        },
        {
            "Sid": "AllowPassingInstanceRole",
            "Effect": "Allow",
            "Resource": node_role_arn,
            "Action": "iam:PassRole",
            "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
        },
        {
            "Sid": "AllowScopedInstanceProfileCreationActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": "iam:CreateInstanceProfile",
            "Condition": {"StringEquals": profile_request, "StringLike": nodeclass_request},
        },
        {
            "Sid": "AllowScopedInstanceProfileTagActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": "iam:TagInstanceProfile",
            "Condition": {
                "StringEquals": {**profile_resource, **profile_request},
                "StringLike": {**nodeclass_resource, **nodeclass_request},
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": [
                "iam:AddRoleToInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:DeleteInstanceProfile",
            ],
            "Condition": {"StringEquals": profile_resource, "StringLike": nodeclass_resource},
        },
        {
            "Sid": "AllowInstanceProfileReadActions",
            "Effect": "Allow",
            "Resource": "*",
            "Action": ["iam:GetInstanceProfile", "iam:ListInstanceProfiles"],
        },
        {
            "Sid": "AllowAPIServerEndpointDiscovery",
            "Effect": "Allow",
            "Resource": f"arn:{partition}:eks:{region}:*:cluster/{cluster}",
            "Action": "eks:DescribeCluster",
        },
    ]
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


def cluster_autoscaler_policy(cluster: str) -> str:
    """What the Cluster Autoscaler may do (kubernetes/autoscaler cloudprovider/aws README, the full
    features policy): read groups, instance types and node groups anywhere, and change the size only
    of the Auto Scaling groups EKS tags as this cluster's node groups."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DiscoverGroups",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:DescribeAutoScalingGroups",
                        "autoscaling:DescribeAutoScalingInstances",
                        "autoscaling:DescribeLaunchConfigurations",
                        "autoscaling:DescribeScalingActivities",
                        "ec2:DescribeImages",
                        "ec2:DescribeInstanceTypes",
                        "ec2:DescribeLaunchTemplateVersions",
                        "ec2:GetInstanceTypesFromInstanceRequirements",
                        "eks:DescribeNodegroup",
                    ],
                    "Resource": "*",
                },
                {
                    "Sid": "ScaleThisClustersGroups",
                    "Effect": "Allow",
                    "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
                    "Resource": "*",
                    "Condition": {"StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster}": "owned"}},
                },
            ],
        }
    )


@dataclass(frozen=True, slots=True)
class BucketGrant:
    """What one mounted bucket lets the Mountpoint CSI driver do: read, create files, delete them."""

    bucket: str
    """The bucket's name."""
    prefix: str | None = None
    """The folder the volume mounts, when not the whole bucket."""
    write: bool = False
    """Create (and overwrite) objects: s3:PutObject and s3:AbortMultipartUpload."""
    delete: bool = False
    """Delete objects: s3:DeleteObject."""


def mountpoint_policy(grants: list[BucketGrant], region: str) -> str:
    """The least the Mountpoint for Amazon S3 CSI driver needs on the stack's buckets (mountpoint-s3 1.22
    doc/CONFIGURATION.md, "IAM permissions"): s3:ListBucket on each bucket (within its prefix, by the s3:prefix
    condition key), s3:GetObject on its objects, and writes and deletes only where its mount makes them."""
    partition = partition_of(region)
    statements: list[dict[str, object]] = []
    for n, grant in enumerate(grants):
        bucket = f"arn:{partition}:s3:::{grant.bucket}"
        folder = f"{grant.prefix.rstrip('/')}/" if grant.prefix else ""
        listing: dict[str, object] = {"Sid": f"List{n}", "Effect": "Allow", "Action": "s3:ListBucket"}
        listing["Resource"] = bucket
        if folder:
            listing["Condition"] = {"StringLike": {"s3:prefix": [f"{folder}*"]}}
        actions = ["s3:GetObject"]
        actions += ["s3:PutObject", "s3:AbortMultipartUpload"] if grant.write else []
        actions += ["s3:DeleteObject"] if grant.delete else []
        objects = {"Sid": f"Objects{n}", "Effect": "Allow", "Action": actions, "Resource": f"{bucket}/{folder}*"}
        statements += [listing, objects]
    return json.dumps({"Version": "2012-10-17", "Statement": statements})
