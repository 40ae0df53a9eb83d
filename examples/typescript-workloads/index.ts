// An ML team's job on a platform it does not own: the pool, the scheduler and the cluster come from the
// platform stack's exports through a StackReference, so nothing about the GPUs or the fabric is typed here.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as gpu from "@gpu-training/gpu-training";

const config = new pulumi.Config();
const platform = new pulumi.StackReference(config.require("platformStack"));
const pools = platform.requireOutput("pools");
const scheduler = platform.requireOutput("scheduler");
const cluster = new k8s.Provider("platform", { kubeconfig: platform.requireOutput("kubeconfig") });

const finetune = new gpu.TrainingJob(
    "llama-finetune",
    {
        image: "registry.example.com/training:v2.0",
        command: ["train.py", "--model_name=meta-llama/Llama-3.1-8B", "--output_dir=/checkpoints/llama-finetune"],
        nodes: 2,
        resources: { cpu: "90", memory: "900Gi" },
        volumes: [{ claim: "checkpoints", mountPath: "/checkpoints" }],
        nccl: { debug: "WARN" },
        pool: pools.apply((p) => p["p5"]),
        schedulerType: scheduler.apply((s) => s["type"]),
        defaultQueue: scheduler.apply((s) => s["defaultQueue"]),
    },
    { providers: { kubernetes: cluster } },
);

export const worldSize = finetune.worldSize;
export const workload = finetune.workload;
