"""A 2-node PyTorchJob written by hand, as a team without TrainingJob might: its worker is privileged, it has
no /dev/shm beyond the container runtime's 64 MiB, and it requests no EFA device on a Karpenter pool of
p5.48xlarge nodes (32 EFA devices each), so NCCL would run over TCP sockets. The policy pack must block it.

The cluster is never reached: `pulumi preview` only, against a kubeconfig whose server does not answer.
"""

import pulumi
import pulumi_kubernetes as k8s

UNREACHABLE = """\
apiVersion: v1
kind: Config
clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: nobody, user: {token: none}}]
contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]
current-context: nowhere
"""

provider = k8s.Provider("nowhere", kubeconfig=UNREACHABLE)
opts = pulumi.ResourceOptions(provider=provider)

k8s.apiextensions.CustomResource(
    "p5-class",
    api_version="karpenter.k8s.aws/v1",
    kind="EC2NodeClass",
    metadata={"name": "p5"},
    spec={"networkInterfaces": [{"networkCardIndex": c, "interfaceType": "efa-only"} for c in range(32)]},
    opts=opts,
)
k8s.apiextensions.CustomResource(
    "p5-pool",
    api_version="karpenter.sh/v1",
    kind="NodePool",
    metadata={"name": "p5"},
    spec={
        "template": {
            "metadata": {"labels": {"team/pool": "p5"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "p5"},
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            },
        }
    },
    opts=opts,
)


def replica(replicas: int) -> dict:
    return {
        "replicas": replicas,
        "restartPolicy": "OnFailure",
        "template": {
            "spec": {
                "nodeSelector": {"team/pool": "p5"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [
                    {
                        "name": "pytorch",
                        "image": "registry.example.com/llm@sha256:" + "0" * 64,
                        "command": ["torchrun", "train.py"],
                        "securityContext": {"privileged": True},
                        "resources": {"limits": {"nvidia.com/gpu": 8}, "requests": {"nvidia.com/gpu": 8}},
                    }
                ],
            }
        },
    }


k8s.apiextensions.CustomResource(
    "llm",
    api_version="kubeflow.org/v1",
    kind="PyTorchJob",
    metadata={"name": "llm", "namespace": "training"},
    spec={"pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(1)}},
    opts=opts,
)
