"""Hypothesis strategies for the config spaces: TrainingJob specs and whole stack configs, valid and not."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

NAMES = st.sampled_from(["llama", "bert-large", "gpt-3", "resnet", "t5-xl", "x"])
FABRICS = st.sampled_from(["tcp", "roce", "infiniband"])
QUANTITIES = st.sampled_from(["1", "500m", "16", "32Gi", "64Gi", "512Gi", "1Ti", "8Gi", "100G", "2"])
IMAGES = st.sampled_from(["registry.example.com/train:v1", "nvcr.io/nvidia/pytorch:24.09-py3", "busybox:1.36"])
COMMANDS = st.lists(
    st.sampled_from(["train.py", "python", "--epochs=1", "-m", "module", "--deepspeed", "8"]), min_size=1, max_size=4
)
# Values that are wrong somewhere: wrong types, out of range, malformed names and quantities.
JUNK = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.booleans(),
    st.text(max_size=8),
    st.just("Bad_Name"),
    st.just("64GB"),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@st.composite
def jobs(draw: st.DrawFn, pools: list[str], claims: list[str], networks_ns: str = "training") -> dict[str, Any]:
    """A TrainingJob config: mostly sensible, sometimes out of the pool's bounds."""
    launcher = draw(st.sampled_from(["pytorch", "mpi", "tensorflow", "indexed", "trainjob"]))
    job: dict[str, Any] = {
        "name": draw(NAMES) + draw(st.sampled_from(["", "-a", "-b2"])),
        "namespace": networks_ns,
        "launcher": launcher,
        "image": draw(IMAGES),
        "command": draw(COMMANDS),
        "nodes": draw(st.integers(1, 6)),
    }
    if pools:
        job["nodePool"] = draw(st.sampled_from(pools))
    if draw(st.booleans()):
        job["gpusPerNode"] = draw(st.sampled_from([1, 2, 4, 8, 16]))
    if launcher == "pytorch" and draw(st.booleans()):
        low = draw(st.integers(1, 3))
        job["elastic"] = {
            "minNodes": low,
            "maxNodes": draw(st.integers(low, 6)),
            "maxRestarts": draw(st.integers(0, 5)),
        }
        job["nodes"] = draw(st.integers(low, job["elastic"]["maxNodes"]))
    if draw(st.booleans()):
        job["resources"] = {k: draw(QUANTITIES) for k in draw(st.sets(st.sampled_from(["cpu", "memory"])))}
    if draw(st.booleans()):
        job["shmSize"] = draw(QUANTITIES)
    if draw(st.booleans()):
        job["scratch"] = {"size": draw(QUANTITIES)}
    if claims and draw(st.booleans()):
        job["volumes"] = [
            {"claim": draw(st.sampled_from(claims)), "mountPath": "/checkpoints", "readOnly": draw(st.booleans())}
        ]
    if draw(st.booleans()):
        job["nccl"] = draw(
            st.dictionaries(
                st.sampled_from(["debug", "ibHca", "NCCL_BUFFSIZE", "socketIfname"]),
                st.sampled_from(["INFO", "WARN", "mlx5", "8388608", "eth0", "net1", "ib0"]),
                max_size=2,
            )
        )
    if draw(st.booleans()):
        job["env"] = draw(
            st.dictionaries(
                st.sampled_from(["HF_HOME", "NCCL_DEBUG", "OMP_NUM_THREADS"]),
                st.sampled_from(["/data", "INFO", "4", 8]),
                max_size=2,
            )
        )
    if launcher == "trainjob" and draw(st.booleans()):
        job["runtime"] = draw(st.sampled_from(["torch", "deepspeed", "mpi", "tensorflow"]))
    if draw(st.integers(0, 3)) == 0:
        job["topology"] = {
            "mode": draw(st.sampled_from(["required", "preferred"])),
            "level": draw(st.sampled_from(["block", "subblock", "layer-3", "rack", "host"])),
        }
    if launcher in ("pytorch", "indexed", "trainjob") and draw(st.booleans()):
        job["deepspeed"] = {
            "config": {"train_batch_size": draw(st.integers(1, 512)), "zero_optimization": {"stage": 3}}
        }
    if draw(st.booleans()):
        job["scheduler"] = {"queue": draw(st.sampled_from(["research", "prod"]))}
    return job


@st.composite
def stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A stack config on an existing cluster, an EKS or a GKE cluster, with pools, networks, storage and jobs."""
    provider = draw(st.sampled_from(["existing", "existing", "aws", "gcp"]))
    pools: list[dict[str, Any]] = []
    for index in range(draw(st.integers(1, 3))):
        name = f"pool{index}"
        if provider == "aws":
            pool = {
                "name": name,
                "instanceType": draw(st.sampled_from(["p5.48xlarge", "p4d.24xlarge", "g6.12xlarge", "g5.48xlarge"])),
                "zone": "us-east-1a",
                "maxNodes": draw(st.integers(1, 8)),
            }
            # How the pool scales and what its disks hold, including combinations that are refused.
            pool["minNodes"] = draw(st.integers(0, pool["maxNodes"]))
            if draw(st.booleans()):
                pool["provisioner"] = draw(st.sampled_from(["karpenter", "nodegroup"]))
            if draw(st.booleans()):
                pool["localStorage"] = draw(st.sampled_from(["raid0", "none"]))
            if draw(st.booleans()):
                pool["capacity"] = draw(
                    st.sampled_from(
                        [
                            {"type": "spot"},
                            {"type": "reservation", "reservationId": "cr-0123456789abcdef0"},
                            {
                                "type": "capacity-block",
                                "reservationId": "cr-0fedcba9876543210",
                                "endTime": "2026-12-01T11:30:00Z",
                            },
                        ]
                    )
                )
        elif provider == "gcp":
            pool = {
                "name": name,
                "machineType": draw(
                    st.sampled_from(["a3-highgpu-8g", "a3-megagpu-8g", "a2-ultragpu-4g", "g2-standard-48"])
                ),
                "zone": "us-central1-a",
                "maxNodes": draw(st.integers(1, 8)),
            }
        else:
            fabric = draw(FABRICS)
            pool = {
                "name": name,
                "gpusPerNode": draw(st.sampled_from([1, 4, 8])),
                "maxNodes": draw(st.integers(1, 8)),
                "fabric": fabric,
                "nodeSelector": {"gpu-training/pool": name},
            }
            if fabric != "tcp" and draw(st.booleans()):
                pool["networks"] = ["fabric-net"]
            elif fabric != "tcp" and draw(st.booleans()):
                # One NAD per rail (macvlan on roce, ipoib on infiniband), each on its own subnet.
                pool["rails"] = {
                    "count": draw(st.integers(1, 8)),
                    "interfaces": f"{name}-ens{{n}}",
                    "devices": "mlx5_{i}",
                    "range": draw(st.sampled_from(["10.64.0.0/16", "fd00:64::/48"])),
                    "speedGbps": draw(st.sampled_from([100, 200, 400])),
                }
                pool["trafficClass"] = draw(st.integers(0, 255))
        if provider != "aws" and draw(st.booleans()):
            pool["minNodes"] = draw(st.integers(0, pool["maxNodes"]))
        if draw(st.booleans()):
            # The fabric check, including gates that cannot run (too few nodes kept, settings on one that is off).
            check: dict[str, Any] = {}
            if draw(st.booleans()):
                check["enabled"] = draw(st.booleans())
            if draw(st.booleans()):
                check["nodes"] = draw(st.integers(2, 4))
            if draw(st.booleans()):
                check["minBusBandwidth"] = draw(st.sampled_from([1, 123, 450.5]))
            if draw(st.booleans()):
                check["test"] = draw(st.sampled_from(["all_gather_perf", "alltoall_perf"]))
            if draw(st.booleans()):
                check["sizes"] = draw(st.sampled_from([{"max": "1G"}, {"min": "8", "max": "16G", "factor": 4}]))
            pool["fabricCheck"] = check
        pools.append(pool)
    cluster: dict[str, Any] = {"provider": provider, "name": "fuzz"}
    if provider == "aws":
        cluster |= {
            "region": "us-east-1",
            "availabilityZones": ["us-east-1a", "us-east-1b"],
            "vpc": {"cidr": "10.0.0.0/16"},
        }
    elif provider == "gcp":
        cluster |= {"project": "my-project", "region": "us-central1"}
    scheduler = draw(st.sampled_from(["volcano", "kueue", "none"]))
    backend = {"aws": "fsx-lustre", "gcp": "filestore"}.get(provider, "nfs")
    volume: dict[str, Any] = {"name": "ckpt", "backend": backend, "size": "2Ti"}
    if backend == "nfs":
        volume |= {"server": "nfs.example.internal", "share": "/exports/ckpt"}
    raw: dict[str, Any] = {
        "cluster": cluster,
        "nodePools": pools,
        "network": {
            "networks": [
                {
                    "name": "fabric-net",
                    "type": draw(st.sampled_from(["macvlan", "ib-sriov"])),
                    "master": "ens1",
                    "resourceName": "openshift.io/ib_vf",
                    "ipam": {"type": draw(st.sampled_from(["whereabouts", "host-local"])), "range": "192.168.10.0/24"},
                }
            ]
        },
        "scheduler": {"type": scheduler, "queues": [{"name": "research", "gpus": 32}] if scheduler != "none" else []},
        "trainer": {"enabled": draw(st.booleans())},
        "storage": {"volumes": [volume]},
        "jobs": draw(st.lists(jobs([p["name"] for p in pools], ["ckpt"]), max_size=3, unique_by=lambda j: j["name"])),
    }
    if draw(st.booleans()):
        levels = [{"name": "rack", "nodeLabel": "example.com/rack"}] if provider == "existing" else []
        raw["scheduler"]["topology"] = {"enabled": True, "levels": levels}
    # macvlan needs only master, ib-sriov only resourceName: keep the one the type takes.
    net = raw["network"]["networks"][0]
    net.pop("resourceName" if net["type"] == "macvlan" else "master")
    return raw


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += _paths(child, (*prefix, index))
    return out


@st.composite
def broken_stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A stack config with one value replaced by junk, or one unknown key added, somewhere."""
    raw = draw(stacks())
    path = draw(st.sampled_from(_paths(raw)))
    parent: Any = raw
    for part in path[:-1]:
        parent = parent[part]
    if draw(st.booleans()) or not isinstance(parent, dict):
        parent[path[-1]] = draw(JUNK)
    else:
        parent[draw(st.sampled_from(["unknownKey", "nodeCount", "gpus_per_nodes"]))] = draw(JUNK)
    return raw
