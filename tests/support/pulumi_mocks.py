"""Pulumi mocks that record every registration with its inputs and options (protect, retain, dependencies)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime.mocks import MockMonitor

from components.manifests.fabriccheck import SSH_KEYS


@dataclass
class Registration:
    """One resource the program registered."""

    type: str
    name: str
    urn: str
    inputs: dict[str, Any]
    parent: str
    dependencies: list[str] = field(default_factory=list)
    protect: bool = False
    retain_on_delete: bool = False
    provider: str = ""
    custom: bool = True
    """A custom resource (components, local or remote, have no provider of their own)."""
    ignore_changes: list[str] = field(default_factory=list)
    """Input paths whose later changes `pulumi up` leaves alone."""
    create_timeout: str = ""
    """How long `pulumi up` waits for the resource to be created (customTimeouts.create), if set."""
    aliases: list[Any] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    """Input paths whose change replaces the resource instead of updating it."""
    delete_before_replace: bool = False
    """The aliases sent (alias_pb2.Alias: a URN, or a spec the engine resolves)."""


MOCK_TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3VldWUtc3lzdGVtOmdwdSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
"""A ServiceAccount token as the token controller writes one (a JWT), which must never reach a plain input or output."""
MOCK_TOKEN_B64 = base64.b64encode(MOCK_TOKEN.encode()).decode()

# What the clouds would return for the outputs our components read (camelCase, as the engine has them); a
# function makes them from the resource's inputs.
CLOUD_OUTPUTS: dict[str, Any] = {
    "aws:eks/cluster:Cluster": {
        "endpoint": "https://ABC.gr7.us-east-1.eks.amazonaws.com",
        "certificateAuthority": {"data": "Q0VSVA=="},
        "identities": [{"oidcs": [{"issuer": "https://oidc.eks.us-east-1.amazonaws.com/id/ABC"}]}],
        "vpcConfig": {"clusterSecurityGroupId": "sg-cluster"},
        "arn": "arn:aws:eks:us-east-1:123456789012:cluster/prod",
    },
    "aws:iam/role:Role": {"arn": "arn:aws:iam::123456789012:role/mock"},
    "aws:sqs/queue:Queue": {
        "arn": "arn:aws:sqs:us-east-1:123456789012:mock",
        "url": "https://sqs.us-east-1.amazonaws.com/123456789012/mock",
    },
    "aws:ec2/launchTemplate:LaunchTemplate": {"latestVersion": 1},
    "aws:eks/nodeGroup:NodeGroup": {"resources": [{"autoscalingGroups": [{"name": "eks-mock-asg"}]}]},
    "aws:ec2/placementGroup:PlacementGroup": {"name": "mock-placement-group"},
    "aws:fsx/lustreFileSystem:LustreFileSystem": {
        "dnsName": "fs-mock.fsx.us-east-1.amazonaws.com",
        "mountName": "mockmnt",
    },
    # S3 names a bucket made from a prefix with the prefix and a unique suffix.
    "aws:s3/bucket:Bucket": lambda inputs: {"bucket": f"{inputs.get('bucketPrefix', '')}20260801000000000000000001"},
    # Managed Lustre gives an instance an address in the VPC's private services access range; a read of a named one
    # (no inputs) finds file system `shared`.
    "gcp:lustre/instance:Instance": lambda inputs: {
        "mountPoint": f"10.90.1.4@tcp:/{inputs.get('filesystem', 'shared')}"
    },
    # IAM names a service account by its id and project.
    "gcp:serviceaccount/account:Account": lambda inputs: {
        "email": f"{inputs['accountId']}@{inputs['project']}.iam.gserviceaccount.com",
        "name": f"projects/{inputs['project']}/serviceAccounts/{inputs['accountId']}@{inputs['project']}"
        ".iam.gserviceaccount.com",
    },
    # The token controller fills a service-account-token Secret with the account's token and the cluster's CA
    # (pulumi-kubernetes waits for it: provider/pkg/await/awaiters.go untilCoreV1SecretInitialized).
    "kubernetes:core/v1:Secret": lambda inputs: (
        {"data": {"token": MOCK_TOKEN_B64, "ca.crt": "Q0xVU1RFUi1DQQ==", "namespace": "a3ViZS1zeXN0ZW0="}}
        if inputs.get("type") == "kubernetes.io/service-account-token"
        else {}
    ),
    "gcp:container/cluster:Cluster": {
        "endpoint": "203.0.113.10",
        "masterAuth": {"clusterCaCertificate": "Q0VSVA=="},
    },
}
CLOUD_CALLS: dict[str, dict[str, Any]] = {
    "aws:eks/getCluster:getCluster": {
        "endpoint": "https://ADOPTED.gr7.us-east-1.eks.amazonaws.com",
        "certificateAuthorities": [{"data": "Q0VSVA=="}],
        "identities": [{"oidcs": [{"issuer": "https://oidc.eks.us-east-1.amazonaws.com/id/ADOPTED"}]}],
        "vpcConfig": {"clusterSecurityGroupId": "sg-adopted", "vpcId": "vpc-adopted"},
        "arn": "arn:aws:eks:us-east-1:123456789012:cluster/adopted",
        "name": "adopted",
    },
    "aws:ec2/getSubnet:getSubnet": {"availabilityZone": "us-east-1a", "vpcId": "vpc-existing"},
    "gcp:organizations/getProject:getProject": {"number": "123456789012", "projectId": "example-ml-project"},
    # us-east-1 as one account sees it: names map to ids per account, and use1-az3 takes no EKS subnets.
    "aws:index/getAvailabilityZones:getAvailabilityZones": {
        "names": ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"],
        "zoneIds": ["use1-az1", "use1-az2", "use1-az4", "use1-az6", "use1-az3", "use1-az5"],
        "id": "us-east-1",
    },
}


def _merge(outputs: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """Inputs over outputs, merging nested objects (an input vpcConfig keeps the output's security group)."""
    merged = dict(outputs)
    for key, value in inputs.items():
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merge(merged[key], value) if both else value
    return merged


class RecordingMocks(pulumi.runtime.Mocks):
    """Mocks that echo inputs as state, plus the cloud outputs in CLOUD_OUTPUTS; calls answer from CLOUD_CALLS."""

    def __init__(self) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        self.calls: list[pulumi.runtime.MockCallArgs] = []
        self.stack_outputs: dict[str, dict[str, Any]] = {}
        """The outputs a StackReference to each stack name reads."""
        self.call_results: dict[str, Any] = {}
        """Per invoke token, what it returns (a callable gets the call's args); before CLOUD_CALLS."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[(args.typ, args.name)] = args.inputs
        if args.typ == "pulumi:pulumi:StackReference":
            stack = args.inputs["name"]
            return stack, {"name": stack, "outputs": self.stack_outputs[stack]}
        outputs = CLOUD_OUTPUTS.get(args.typ, {})
        return f"{args.name}-id", _merge(outputs(args.inputs) if callable(outputs) else outputs, args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        self.calls.append(args)
        result = self.call_results.get(args.token)
        if callable(result):
            return result(args.args)
        return dict(result if result is not None else CLOUD_CALLS.get(args.token, {}))


class RecordingMonitor(MockMonitor):
    """A mock monitor that keeps each registration's options."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.recording = mocks
        self.registrations: list[Registration] = []
        self._outputs: dict[str, Any] = {}

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.registrations.append(
                Registration(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    inputs=self.recording.inputs.get((request.type, request.name), {}),
                    parent=request.parent,
                    dependencies=list(request.dependencies),
                    protect=bool(request.protect),
                    retain_on_delete=bool(request.retainOnDelete),
                    provider=request.provider,
                    custom=bool(request.custom) and not request.remote,
                    ignore_changes=list(request.ignoreChanges),
                    create_timeout=request.customTimeouts.create,
                    aliases=list(request.aliases),
                    replace_on_changes=list(request.replaceOnChanges),
                    delete_before_replace=bool(request.deleteBeforeReplace),
                )
            )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:
        self._outputs[request.urn] = request.outputs  # read when asked: the benchmarks run under these mocks
        return super().RegisterResourceOutputs(request)

    def outputs(self, urn: str) -> dict[str, Any]:
        """The outputs the component `urn` registered, as the engine receives them."""
        return json_format.MessageToDict(self._outputs[urn])

    def waits_for(self, resource: Registration, urn: str) -> bool:
        """Whether `resource` waits for `urn`, as the engine and the SDK order them: `urn` is among the dependencies
        of the resource or of one of its ancestors (a child is registered once its parent is, a parent once what it
        depends on is; the engine counts a parent among a resource's dependencies when it orders deletes), and it
        was registered first."""
        by_urn = {r.urn: r for r in self.registrations}
        order = {r.urn: i for i, r in enumerate(self.registrations)}
        current: Registration | None = resource
        while current is not None:
            if urn in current.dependencies:
                return order.get(urn, len(order)) < order[resource.urn]
            current = by_urn.get(current.parent)
        return False

    def of_type(self, type_: str) -> list[Registration]:
        """The registrations of one resource type."""
        return [r for r in self.registrations if r.type == type_]

    def named(self, name: str) -> Registration:
        """The registration with this logical name."""
        found = [r for r in self.registrations if r.name == name]
        assert len(found) == 1, f"{len(found)} resources named {name}: {[r.name for r in self.registrations]}"
        return found[0]


def run(program: Any) -> Any:
    """Run `program()` under the mocks and wait until every registration (and a returned Output) is done."""
    result: list[Any] = []

    @pulumi.runtime.test
    def _wrapper() -> Any:
        result.append(program())
        return result[0] if isinstance(result[0], pulumi.Output) else None

    _wrapper()
    return result[0]


def resolved(output: pulumi.Output[Any]) -> tuple[Any, bool]:
    """The value of an output and whether it is secret (call inside `run`, after the program)."""
    found: list[Any] = []

    @pulumi.runtime.test
    def _wrapper() -> Any:
        return pulumi.Output.all(output, pulumi.Output.from_input(output.is_secret())).apply(found.extend)

    _wrapper()
    return found[0], found[1]


def use_stack(monitor: RecordingMonitor, stack_file: Path, config: dict[str, Any] | None = None) -> None:
    """Run as `pulumi up -s <stack>` of that file would: its stack name, and its config (or `config`)."""
    import json

    import yaml

    name = stack_file.name.removeprefix("Pulumi.").removesuffix(".yaml")
    pulumi.runtime.set_mocks(monitor.recording, project="gpu-training", stack=name, preview=False, monitor=monitor)
    values = config if config is not None else yaml.safe_load(stack_file.read_text())["config"]
    pulumi.runtime.set_all_config({key: json.dumps(value) for key, value in values.items()}, secret_keys=[])


def exported(exports: dict[str, Any]) -> dict[str, Any]:
    """A program's exports with every output resolved (call after `run`)."""
    return {key: resolved(value)[0] if isinstance(value, pulumi.Output) else value for key, value in exports.items()}


SECRET_SIG = "4dabf18193072939515e22adb298388d"
"""How the engine marks a secret value (pulumi.runtime.rpc's special signature)."""
GENERATED = "<made on each run>"
"""What stands for a value the program makes anew on each run (the fabric check's ssh key pair)."""


def built_inputs(registration: Registration) -> dict[str, Any]:
    """A registration's inputs as two builds of one config agree on them: the fabric check's key pair, which
    each run makes anew (and the Secret keeps from its first), masked."""
    inputs = registration.inputs
    data = inputs.get("stringData")
    if registration.type != "kubernetes:core/v1:Secret" or not isinstance(data, dict):
        return inputs
    plain = data.get("value") if SECRET_SIG in data else data
    if not isinstance(plain, dict) or set(plain) != set(SSH_KEYS):
        return inputs
    return {**inputs, "stringData": dict.fromkeys(SSH_KEYS, GENERATED)}
