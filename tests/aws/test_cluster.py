"""EksCluster under Pulumi mocks: the prod stack's cluster, an adopted cluster, existing subnets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import stacks
from tests.support.pulumi_mocks import RecordingMonitor, resolved, run, use_stack

REPO = Path(__file__).resolve().parents[2]
PROD = REPO / "Pulumi.prod.yaml"


def prod_config(provisioner: str | None = None, **cluster: Any) -> dict[str, Any]:
    config = yaml.safe_load(PROD.read_text())["config"]
    config["gpu-training:cluster"] = {**config["gpu-training:cluster"], **cluster}
    if provisioner is not None:
        config["gpu-training:nodePools"][0]["provisioner"] = provisioner
    return config


def deploy(monitor: RecordingMonitor, config: dict[str, Any] | None = None) -> dict[str, Any]:
    use_stack(monitor, PROD, config)
    return run(lambda: stacks.run(stacks.load()))


def test_prod_builds_a_cluster_with_irsa_addons_a_system_group_and_the_p5_pool(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    exports = deploy(pulumi_mocks)
    (cluster,) = pulumi_mocks.of_type("aws:eks/cluster:Cluster")
    assert cluster.inputs["name"] == "train-prod" and cluster.inputs["version"] == "1.35"
    assert cluster.inputs["accessConfig"]["authenticationMode"] == "API"
    assert len(cluster.inputs["vpcConfig"]["subnetIds"]) == 6
    (oidc,) = pulumi_mocks.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    assert oidc.inputs["url"].startswith("https://oidc.eks.us-east-1.amazonaws.com/")
    addons = {r.inputs["addonName"] for r in pulumi_mocks.of_type("aws:eks/addon:Addon")}
    assert addons == {
        "vpc-cni",
        "kube-proxy",
        "coredns",
        "eks-pod-identity-agent",
        "eks-node-monitoring-agent",
        "aws-mountpoint-s3-csi-driver",  # prod's dataset is an s3 volume
    }
    groups = {r.inputs["nodeGroupName"]: r for r in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert set(groups) == {"train-prod-system"}, "Karpenter makes the p5 nodes (minNodes 0)"
    assert len(groups["train-prod-system"].inputs["subnetIds"]) == 3

    (aws_provider,) = pulumi_mocks.of_type("pulumi:providers:aws")
    assert aws_provider.inputs["region"] == "us-east-1"
    assert all(r.provider.startswith(aws_provider.urn) for r in pulumi_mocks.registrations if r.type.startswith("aws:"))
    (kubernetes,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    system = groups["train-prod-system"]
    assert system.urn in kubernetes.dependencies, "in-cluster objects wait for the system nodes"
    assert all(
        r.provider.startswith(kubernetes.urn)
        for r in pulumi_mocks.registrations
        if r.type.startswith("kubernetes:") and r.custom
    )

    value, secret = resolved(exports["kubeconfig"])
    assert secret, "the kubeconfig output is secret"
    assert "get-token" in value and "https://ABC.gr7.us-east-1.eks.amazonaws.com" in value


def test_admins_get_access_entries(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, prod_config("nodegroup", admins=["arn:aws:iam::123456789012:role/platform"]))
    (entry,) = pulumi_mocks.of_type("aws:eks/accessEntry:AccessEntry")
    (policy,) = pulumi_mocks.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert entry.inputs["principalArn"] == policy.inputs["principalArn"] == "arn:aws:iam::123456789012:role/platform"
    assert policy.inputs["policyArn"].endswith("AmazonEKSClusterAdminPolicy")
    assert entry.urn in policy.dependencies


def test_adopting_an_existing_cluster_creates_no_cluster(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(
        pulumi_mocks,
        prod_config(
            "nodegroup",
            adopt=True,
            vpc=None,
            availabilityZones=[],
            subnetIds={"us-east-1a": "subnet-a", "us-east-1b": "subnet-b"},
        ),
    )
    assert not pulumi_mocks.of_type("aws:eks/cluster:Cluster")
    assert not pulumi_mocks.of_type("aws:ec2/vpc:Vpc")
    assert any(c.token == "aws:eks/getCluster:getCluster" for c in pulumi_mocks.recording.calls)
    groups = {r.inputs["nodeGroupName"]: r.inputs for r in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups["train-prod-p5"]["subnetIds"] == ["subnet-a"]
    assert groups["train-prod-p5"]["clusterName"] == "adopted"
    (efa,) = [r for r in pulumi_mocks.of_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-efa")]
    assert efa.inputs["vpcId"] == "vpc-adopted"


def test_existing_subnets_as_a_list_are_placed_by_looking_up_their_zones(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    deploy(
        pulumi_mocks,
        prod_config(
            "nodegroup", vpc=None, availabilityZones=[], vpcId="vpc-existing", subnetIds=["subnet-1", "subnet-2"]
        ),
    )
    groups = {r.inputs["nodeGroupName"]: r.inputs for r in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup")}
    # The mocked lookup puts every subnet in us-east-1a, so the pool takes both; the system group all.
    assert groups["train-prod-p5"]["subnetIds"] == ["subnet-1", "subnet-2"]
    assert groups["train-prod-system"]["subnetIds"] == ["subnet-1", "subnet-2"]
    lookups = [c for c in pulumi_mocks.recording.calls if c.token == "aws:ec2/getSubnet:getSubnet"]
    assert {c.args["id"] for c in lookups} == {"subnet-1", "subnet-2"}


def test_prod_gives_karpenter_its_roles_queue_and_the_pools_placement_group(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks)
    (queue,) = pulumi_mocks.of_type("aws:sqs/queue:Queue")
    assert queue.inputs["name"] == "train-prod-karpenter" and queue.inputs["messageRetentionSeconds"] == 300
    rules = pulumi_mocks.of_type("aws:cloudwatch/eventRule:EventRule")
    kinds = {json.loads(r.inputs["eventPattern"])["detail-type"][0] for r in rules}
    assert "EC2 Spot Instance Interruption Warning" in kinds and "AWS Health Event" in kinds
    assert len(pulumi_mocks.of_type("aws:cloudwatch/eventTarget:EventTarget")) == len(rules)
    roles = {r.name: r for r in pulumi_mocks.of_type("aws:iam/role:Role")}
    assert roles["train-prod-karpenter-node"].inputs["name"] == "train-prod-us-east-1-karpenter-node"
    trust = json.loads(roles["train-prod-karpenter-controller"].inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    (association,) = pulumi_mocks.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == ("kube-system", "karpenter")
    (entry,) = pulumi_mocks.of_type("aws:eks/accessEntry:AccessEntry")
    assert entry.inputs["type"] == "EC2_LINUX"
    (inline,) = [p for p in pulumi_mocks.of_type("aws:iam/rolePolicy:RolePolicy") if "karpenter" in p.name]
    policy = json.loads(inline.inputs["policy"])
    passed = next(st for st in policy["Statement"] if st["Sid"] == "AllowPassingInstanceRole")
    assert passed["Resource"] == "arn:aws:iam::123456789012:role/mock", "only the node role is passed"
    (group,) = pulumi_mocks.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert group.inputs["name"] == "train-prod-p5" and group.inputs["strategy"] == "cluster"
    (efa,) = [r for r in pulumi_mocks.of_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-efa")]
    assert efa.inputs["tags"]["gpu-training/efa-group"] == "train-prod-p5"
    (tag,) = pulumi_mocks.of_type("aws:ec2/tag:Tag")
    assert (tag.inputs["key"], tag.inputs["value"], tag.inputs["resourceId"]) == (
        "karpenter.sh/discovery",
        "train-prod",
        "sg-cluster",
    )
    private = [s for s in pulumi_mocks.of_type("aws:ec2/subnet:Subnet") if "private" in s.name]
    assert all(s.inputs["tags"]["karpenter.sh/discovery"] == "train-prod" for s in private)
    (node_class,) = pulumi_mocks.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert node_class.inputs["spec"]["placementGroupSelector"] == {"name": "train-prod-p5"}
    assert node_class.inputs["spec"]["role"] == "train-prod-us-east-1-karpenter-node"
    assert node_class.inputs["spec"]["instanceStorePolicy"] == "RAID0"
    (karpenter,) = [r for r in pulumi_mocks.of_type("kubernetes:helm.sh/v3:Release") if r.name.endswith("karpenter")]
    assert karpenter.urn in node_class.dependencies or any(
        karpenter.urn in pulumi_mocks.named(d.split("::")[-1]).dependencies for d in node_class.dependencies
    )


def test_a_node_group_pool_keeps_its_group(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, prod_config("nodegroup"))
    groups = {r.inputs["nodeGroupName"]: r for r in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert set(groups) == {"train-prod-system", "train-prod-p5"}
    assert groups["train-prod-p5"].inputs["subnetIds"] == ["train-prod-vpc-private-us-east-1a-id"]
    assert not pulumi_mocks.of_type("aws:sqs/queue:Queue"), "no Karpenter without a pool for it"


def test_a_node_group_that_scales_gets_the_cluster_autoscaler(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    config = prod_config("nodegroup")
    config["gpu-training:nodePools"][0]["minNodes"] = 1
    deploy(pulumi_mocks, config)
    (association,) = pulumi_mocks.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == (
        "kube-system",
        "cluster-autoscaler",
    )
    (inline,) = [p for p in pulumi_mocks.of_type("aws:iam/rolePolicy:RolePolicy") if "autoscaler" in p.name]
    scale = json.loads(inline.inputs["policy"])["Statement"][1]
    assert scale["Action"] == ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
    assert scale["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/train-prod": "owned"}}
    (release,) = [r for r in pulumi_mocks.of_type("kubernetes:helm.sh/v3:Release") if r.name == "cluster-autoscaler"]
    values = release.inputs["values"]
    assert values["autoDiscovery"] == {"clusterName": "train-prod"} and values["awsRegion"] == "us-east-1"
    assert values["image"] == {"tag": "v1.35.2"}, "the autoscaler of the cluster's Kubernetes minor"


def test_node_group_pools_repair_their_nodes_on_the_monitoring_agents_conditions(
    pulumi_mocks: RecordingMonitor, monkeypatch
) -> None:
    monkeypatch.chdir(REPO)
    deploy(pulumi_mocks, prod_config(provisioner="nodegroup"))
    (agent,) = [
        r for r in pulumi_mocks.of_type("aws:eks/addon:Addon") if r.inputs["addonName"] == "eks-node-monitoring-agent"
    ]
    assert agent.inputs["addonVersion"] == "v1.7.0-eksbuild.1"
    groups = {r.inputs["nodeGroupName"]: r for r in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup")}
    gpu = [g for name, g in groups.items() if name != "train-prod-system"]
    assert gpu and all(
        g.inputs["nodeRepairConfig"] == {"enabled": True, "maxParallelNodesRepairedCount": 1} for g in gpu
    )
    assert "nodeRepairConfig" not in groups["train-prod-system"].inputs, "the system group is left as it was"


def test_repair_off_makes_no_agent_and_no_repair_config(pulumi_mocks: RecordingMonitor, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    config = prod_config(provisioner="nodegroup")
    config["gpu-training:health"] = {"repair": {"enabled": False}}
    deploy(pulumi_mocks, config)
    assert "eks-node-monitoring-agent" not in {
        r.inputs["addonName"] for r in pulumi_mocks.of_type("aws:eks/addon:Addon")
    }
    assert all("nodeRepairConfig" not in g.inputs for g in pulumi_mocks.of_type("aws:eks/nodeGroup:NodeGroup"))
