"""An ML team's jobs on a platform they do not own: pools, scheduler and cluster come from a StackReference."""

import pulumi
import pulumi_kubernetes as k8s

from components import TrainingJob

config = pulumi.Config()
platform = pulumi.StackReference(config.require("platformStack"))
pools = platform.require_output("pools")
scheduler = platform.require_output("scheduler")
cluster = k8s.Provider("platform", kubeconfig=platform.require_output("kubeconfig"))

finetune = TrainingJob(
    "llama-finetune",
    image="registry.example.com/training:v2.0",
    command=["train.py", "--model_name=meta-llama/Llama-3.1-8B", "--output_dir=/checkpoints/llama-finetune"],
    nodes=2,
    resources={"cpu": "90", "memory": "900Gi"},
    volumes=[{"claim": "checkpoints", "mountPath": "/checkpoints"}],
    pool=pools["p5"],
    scheduler=scheduler["type"],
    queue=scheduler["defaultQueue"],
    opts=pulumi.ResourceOptions(provider=cluster),
)

pulumi.export("worldSize", finetune.world_size)
pulumi.export("workload", finetune.workload)
