"""Synthetic stacks of any size for the benchmarks: 8 pools, N jobs across launchers and fabrics."""

from __future__ import annotations

from typing import Any

LAUNCHERS = ("pytorch", "mpi", "tensorflow", "indexed")
IMAGE = "registry.example.com/train:v1"


def stack(jobs: int, pools: int = 8, image: str = IMAGE) -> dict[str, Any]:
    """An existing-cluster stack with `pools` 8-GPU pools (RoCE and TCP) and `jobs` TrainingJobs running `image`."""
    pool_specs = [
        {
            "name": f"pool-{i}",
            "gpusPerNode": 8,
            "maxNodes": 16,
            "fabric": "roce" if i % 2 else "tcp",
            "networks": ["roce-network"] if i % 2 else [],
            "nodeSelector": {"gpu-training/pool": f"pool-{i}"},
        }
        for i in range(pools)
    ]
    return {
        "cluster": {"provider": "existing", "name": "bench"},
        "nodePools": pool_specs,
        "network": {
            "networks": [
                {"name": "roce-network", "type": "macvlan", "master": "enp94s0f0", "ipam": {"range": "192.168.10.0/24"}}
            ]
        },
        "scheduler": {"type": "volcano", "queues": [{"name": "research", "gpus": 1024}]},
        "storage": {
            "volumes": [
                {
                    "name": "ckpt",
                    "backend": "nfs",
                    "server": "nfs.example.internal",
                    "share": "/exports/ckpt",
                    "size": "10Ti",
                }
            ]
        },
        "jobs": [
            {
                "name": f"job-{j}",
                "launcher": LAUNCHERS[j % 4],
                "image": image,
                "command": ["train.py", f"--run={j}"],
                "nodes": 1 + j % 4,
                "nodePool": f"pool-{j % pools}",
                "resources": {"cpu": "32", "memory": "512Gi"},
                "volumes": [{"claim": "ckpt", "mountPath": "/checkpoints"}],
            }
            for j in range(jobs)
        ],
    }


def stack_file(jobs: int, pools: int = 8, image: str = IMAGE) -> dict[str, Any]:
    """The same stack as a user keeps it in Pulumi.<stack>.yaml: `config:` with project-prefixed keys."""
    return {"config": {f"gpu-training:{key}": value for key, value in stack(jobs, pools, image).items()}}
