"""Loading stack config: camelCase keys, file and line in errors, one clear message per mistake."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import load_stack_file, parse_job, parse_stack
from components.errors import ConfigError
from components.resolution import resolve, resolve_file

BASE: dict[str, Any] = {
    "cluster": {"provider": "existing", "name": "train-dev"},
    "nodePools": [
        {
            "name": "h100",
            "gpusPerNode": 8,
            "maxNodes": 4,
            "fabric": "roce",
            "networks": ["roce-network"],
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        }
    ],
    "network": {
        "networks": [
            {
                "name": "roce-network",
                "namespace": "training",
                "type": "macvlan",
                "master": "enp94s0f0",
                "ipam": {"range": "192.168.10.0/24"},
            }
        ]
    },
    "scheduler": {"type": "volcano", "queues": [{"name": "research", "gpus": 32}]},
    "storage": {
        "volumes": [
            {
                "name": "training-checkpoints",
                "backend": "nfs",
                "server": "nfs.example.internal",
                "share": "/exports/checkpoints",
                "size": "2Ti",
            }
        ]
    },
    "jobs": [
        {
            "name": "llama-finetune",
            "launcher": "pytorch",
            "image": "registry.example.com/training:v2.0",
            "command": ["train.py"],
            "nodes": 2,
            "nodePool": "h100",
            "volumes": [{"claim": "training-checkpoints", "mountPath": "/checkpoints"}],
        }
    ],
}


AWS_CLUSTER: dict[str, Any] = {
    "provider": "aws",
    "name": "prod",
    "region": "us-east-1",
    "vpc": {},
    "availabilityZones": ["us-east-1a", "us-east-1b"],
}


def stack(**changes: Any) -> dict[str, Any]:
    """The base stack with changes applied at dotted paths (`jobs.0.nodes=9`)."""
    data = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node: Any = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return data


def error_of(raw: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        resolve(parse_stack(raw))
    return caught.value


def test_the_base_stack_is_valid() -> None:
    resolved = resolve(parse_stack(BASE))
    assert [p.name for p in resolved.jobs] == ["llama-finetune"]
    assert resolved.namespaces == ("training", "gpu-node-check"), "the jobs', then the node check's"


def test_snake_case_keys_are_accepted_too() -> None:
    raw = stack(nodePools=[{**BASE["nodePools"][0]}])
    raw["node_pools"] = raw.pop("nodePools")
    raw["node_pools"][0]["max_nodes"] = raw["node_pools"][0].pop("maxNodes")
    assert resolve(parse_stack(raw)).pools["h100"].max_nodes == 4


@pytest.mark.parametrize(
    ("changes", "path", "message"),
    [
        (
            {"jobs__0__nodePool": "a100"},
            "jobs[0].nodePool",
            "pool 'a100' is not declared in nodePools; did you mean 'h100'? declared: h100",
        ),
        ({"jobs__0__gpusPerNode": 16}, "jobs[0].gpusPerNode", "16 GPUs per node, but pool 'h100' has 8"),
        ({"jobs__0__nodes": 9}, "jobs[0].nodes", "9 nodes, but pool 'h100' has at most 4"),
        (
            {"jobs__0__launcher": "mpi", "jobs__0__elastic": {"minNodes": 1, "maxNodes": 2}},
            "jobs[0].elastic",
            "elastic training needs the pytorch launcher, not 'mpi'",
        ),
        ({"nodePools__0__minNodes": 5}, "nodePools[0].minNodes", "minNodes (5) is greater than maxNodes (4)"),
        (
            {"jobs__0__elastic": {"minNodes": 3, "maxNodes": 2}},
            "jobs[0].elastic.minNodes",
            "minNodes (3) is greater than maxNodes (2)",
        ),
        ({"jobs__0__name": "Llama_Finetune"}, "jobs[0].name", "'Llama_Finetune' is not a DNS-1035 label"),
        ({"jobs__0__name": "9lives"}, "jobs[0].name", "starting with a letter"),
        ({"nodePools__0__name": "H100"}, "nodePools[0].name", "is not a DNS-1123 label"),
        ({"jobs__0__shmSize": "64GB"}, "jobs[0].shmSize", "'64GB' is not a Kubernetes quantity"),
        ({"jobs__0__resources": {"memory": "lots"}}, "jobs[0].resources.memory", "is not a Kubernetes quantity"),
        ({"jobs__0__nodeCount": 2}, "jobs[0].nodeCount", "unknown key 'nodeCount'"),
        (
            {"nodePools__0__networks": ["ib-network"]},
            "nodePools[0].networks[0]",
            "network 'ib-network' is not declared",
        ),
        (
            {"trainingOperator": {"enabled": False}},
            "jobs[0].launcher",
            "the pytorch launcher needs the Training Operator, which is disabled: set trainingOperator.enabled: true",
        ),
        (
            {"trainingOperator": {"mpi": False}, "jobs__0__launcher": "mpi"},
            "jobs[0].launcher",
            "needs the MPI Operator, which is disabled: set trainingOperator.mpi: true",
        ),
        ({"jobs__0__scheduler": {"queue": "prod"}}, "jobs[0].scheduler.queue", "queue 'prod' is not declared"),
        (
            {"jobs__0__volumes": [{"claim": "datasets", "mountPath": "/data"}]},
            "jobs[0].volumes[0].claim",
            "claim 'datasets' is not declared in storage.volumes of namespace 'training'",
        ),
        (
            {"jobs__0__launcher": "jax"},
            "jobs[0].launcher",
            "must be one of 'pytorch', 'mpi', 'tensorflow', 'indexed' or 'trainjob'",
        ),
        (
            {"cluster": {"provider": "azure", "name": "x"}},
            "cluster.provider",
            "must be one of 'aws', 'gcp', 'existing'",
        ),
        (
            {"jobs__0__command": ["torchrun", "train.py"]},
            "jobs[0].command",
            "the pytorch launcher runs torchrun itself",
        ),
        (
            {"jobs__0__nccl": {"socketIfname": "ib0"}},
            "jobs[0].nccl.socketIfname",
            "'ib0' is not an interface of this pod (eth0, net1)",
        ),
        (
            {"jobs__0__nccl": {"socketIfname": "eth0"}},
            "jobs[0].nccl.socketIfname",
            "'eth0' keeps NCCL's bootstrap on eth0 while the pod attaches net1: name one of those, or leave it unset",
        ),
        (
            {"jobs__0__resources": {"memory": "32Gi"}, "jobs__0__shmSize": "64Gi"},
            "jobs[0].shmSize",
            "64Gi of /dev/shm does not fit in the worker's memory (32Gi)",
        ),
        (
            {"nodePools__0__nodeSelector": {}, "gpuOperator": {"enabled": False}},
            "nodePools[0].nodeSelector",
            "is required on an existing cluster with several pools (or without the GPU Operator)",
        ),
        (
            {"storage__volumes__0__accessMode": "ReadOnlyMany"},
            "jobs[0].volumes[0].readOnly",
            "claim 'training-checkpoints' is ReadOnlyMany: mount it with readOnly: true",
        ),
        (
            {"jobs__0__launcher": "trainjob", "trainer": {"enabled": False}},
            "jobs[0].launcher",
            "the trainjob launcher needs Kubeflow Trainer v2, which is disabled: set trainer.enabled: true",
        ),
        (
            {"jobs__0__runtime": "deepspeed"},
            "jobs[0].runtime",
            "runtime picks a Trainer v2 runtime: set launcher: trainjob (not 'pytorch')",
        ),
        (
            {"scheduler__topology": {"enabled": True}},
            "scheduler.topology.levels",
            "an existing cluster's topology is its own: declare its levels",
        ),
        (
            {
                "scheduler__topology": {
                    "enabled": True,
                    "levels": [{"name": "n", "nodeLabel": "kubernetes.io/hostname"}],
                }
            },
            "scheduler.topology.levels[0]",
            "'host' (kubernetes.io/hostname) is the finest level, added by itself",
        ),
        (
            {"scheduler": {"type": "none"}, "jobs__0__topology": {"level": "rack"}},
            "jobs[0].topology",
            "pool 'h100' has no network topology to place by",
        ),
        (
            {
                "scheduler__topology": {"enabled": True, "levels": [{"name": "rack", "nodeLabel": "example.com/rack"}]},
                "jobs__0__topology": {"level": "rack"},
            },
            "jobs[0].topology",
            "the pytorch launcher's operator makes without one: use launcher trainjob or indexed",
        ),
    ],
)
def test_each_mistake_gives_one_clear_error(changes: dict[str, Any], path: str, message: str) -> None:
    error = error_of(stack(**changes))
    assert len(error.issues) == 1, str(error)
    assert error.issues[0].path == path
    assert message in error.issues[0].message


def test_unknown_top_level_key_suggests_the_right_one() -> None:
    raw = stack()
    raw["nodePool"] = raw.pop("nodePools")
    error = error_of(raw)
    assert "nodePool: unknown key 'nodePool'; did you mean 'nodePools'?" in str(error)


def test_efa_on_an_instance_without_efa() -> None:
    raw = {
        "cluster": AWS_CLUSTER,
        "nodePools": [
            {"name": "g5", "instanceType": "g5.xlarge", "maxNodes": 2, "zone": "us-east-1a", "fabric": "efa"}
        ],
    }
    error = error_of(raw)
    assert [i.path for i in error.issues] == ["nodePools[0].fabric"]
    assert "g5.xlarge has no EFA; use an EFA instance type" in error.issues[0].message
    assert "p5.48xlarge" in error.issues[0].message


def test_gpus_per_node_contradicting_the_catalog() -> None:
    raw = {
        "cluster": AWS_CLUSTER,
        "nodePools": [
            {"name": "p5", "instanceType": "p5.48xlarge", "gpusPerNode": 4, "maxNodes": 2, "zone": "us-east-1a"}
        ],
    }
    error = error_of(raw)
    assert (
        str(error) == "nodePools[0].gpusPerNode: p5.48xlarge has 8 GPUs per node, not 4; drop gpusPerNode to derive it"
    )


def test_several_mistakes_are_all_reported() -> None:
    error = error_of(stack(jobs__0__nodes=9, nodePools__0__name="H100"))
    assert len(error.issues) >= 1
    assert any(i.path == "nodePools[0].name" for i in error.issues)


def test_missing_required_field_says_what_it_is() -> None:
    raw = stack()
    del raw["jobs"][0]["image"]
    error = error_of(raw)
    assert str(error) == "jobs[0].image: is required: Container image"


def test_errors_name_the_file_and_line(tmp_path: Path) -> None:
    raw = stack(jobs__0__nodes=9)
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": {f"gpu-training:{k}": v for k, v in raw.items()}}, sort_keys=False))
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    issue = caught.value.issues[0]
    line = path.read_text().splitlines()[issue.line - 1] if issue.line else ""
    assert issue.source == str(path)
    assert "nodes: 9" in line
    assert str(caught.value).startswith(f"{path}:{issue.line}: jobs[0].nodes:")


def test_a_missing_top_level_key_is_located_at_the_config_line(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("# a stack without its cluster\nconfig:\n  gpu-training:jobs: []\n")
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    assert str(caught.value).startswith(f"{path}:2: cluster: is required")


def test_yaml_syntax_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text("config:\n  gpu-training:cluster:\n    provider: existing\n    name: [oops\n")
    with pytest.raises(ConfigError) as caught:
        load_stack_file(path)
    assert str(caught.value).startswith(f"{path}:")
    assert "YAML syntax error" in str(caught.value)
    assert caught.value.issues[0].line in (4, 5)


def test_a_missing_stack_file_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no such stack file.*--config"):
        load_stack_file(tmp_path / "Pulumi.nope.yaml")


def test_keys_of_other_namespaces_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    doc = {"config": {"aws:region": "us-east-1", **{f"gpu-training:{k}": v for k, v in BASE.items()}}}
    path.write_text(yaml.safe_dump(doc))
    assert load_stack_file(path).cluster.name == "train-dev"


def test_secure_values_are_read_as_placeholders(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    cluster = {"provider": "existing", "name": "x", "kubeconfig": {"secure": "v1:abc"}}
    path.write_text(yaml.safe_dump({"config": {"gpu-training:cluster": cluster}}))
    assert load_stack_file(path).cluster.kubeconfig == "[secret]"


def test_jobs_can_live_in_their_own_files(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "finetune.yaml").write_text(yaml.safe_dump(BASE["jobs"][0]))
    raw = stack(jobs=["jobs/finetune.yaml"])
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": {f"gpu-training:{k}": v for k, v in raw.items()}}))
    assert [j.name for j in resolve(load_stack_file(path)).config.jobs] == ["llama-finetune"]


def test_a_missing_job_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"jobs\[0\]: no such job file: jobs/nope.yaml"):
        parse_stack(stack(jobs=["jobs/nope.yaml"]), base_dir=tmp_path)


@pytest.mark.parametrize("name", ["jobs/\x00.yaml", "x" * 5000])
def test_a_job_file_name_no_file_system_takes_is_a_missing_file(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match=r"jobs\[0\]: no such job file"):
        parse_stack(stack(jobs=[name]), base_dir=tmp_path)


def test_parse_job_prefixes_the_path() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_job({"name": "x", "image": "i", "command": ["a"], "nodes": 0}, path="jobs[3]")
    assert caught.value.issues[0].path == "jobs[3].nodes"
    assert "must be greater than or equal to 1 (got 0)" in caught.value.issues[0].message


MINIMAL_AWS = Path(__file__).resolve().parents[1] / "examples" / "minimal" / "Pulumi.aws.yaml"


def _stack_file_error(tmp_path: Path, text: str) -> ConfigError:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_stack_file(path)
    return caught.value


def test_a_misspelt_namespace_is_named_with_the_key_it_meant(tmp_path: Path) -> None:
    text = MINIMAL_AWS.read_text().replace("gpu-training:cluster", "gpu-trainng:cluster")
    (issue,) = _stack_file_error(tmp_path, text).issues
    assert issue.path == "config.gpu-trainng:cluster" and issue.line == 9
    assert "did you mean 'gpu-training:cluster'?" in issue.message and "gpu-training:<key>" in issue.message


def test_keys_outside_config_are_found_and_the_fix_given(tmp_path: Path) -> None:
    body = [line for line in MINIMAL_AWS.read_text().splitlines() if line.startswith("  gpu-training:")]
    text = "\n".join(line.removeprefix("  ") for line in body) + "\n"
    (issue,) = _stack_file_error(tmp_path, text).issues
    assert issue.path == "config" and issue.line == 1
    assert "found at the top level: gpu-training:cluster, gpu-training:nodePools" in issue.message
    assert "under a `config:` line" in issue.message


def test_a_config_of_other_namespaces_only_lists_what_it_found(tmp_path: Path) -> None:
    (issue,) = _stack_file_error(tmp_path, "config:\n  aws:region: us-east-1\n").issues
    assert issue.path == "cluster" and "(found: aws:region)" in issue.message
    assert "gpu-training:cluster" in issue.message


def test_bare_keys_are_the_projects_as_pulumi_reads_them(tmp_path: Path) -> None:
    """Pulumi reads `cluster:` in a stack file as `<project>:cluster`, and the project is gpu-training."""
    text = MINIMAL_AWS.read_text().replace("gpu-training:cluster", "cluster")
    path = tmp_path / "Pulumi.bare.yaml"
    path.write_text(text)
    assert load_stack_file(path).cluster.name == "train"
    (issue,) = _stack_file_error(tmp_path, text + "  gpu-training:cluster: {provider: existing, name: x}\n").issues
    assert issue.path == "cluster" and "stated twice, as 'cluster' and 'gpu-training:cluster'" in issue.message


def test_other_namespaces_near_the_stacks_are_not_taken_for_typos(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.ok.yaml"
    path.write_text(MINIMAL_AWS.read_text() + "  gpu-training-policy:production: true\n  training:x: 1\n")
    assert load_stack_file(path).cluster.name == "train"
