"""Variables in env values and command lines: Kubernetes expands only $(VAR); a shell's $VAR needs a shell."""

from __future__ import annotations

from typing import Any

from components import rules
from components.rules.rule import Settings
from components.rules.subjects import from_objects


def pod(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "main", "image": "train:v1", **container}]},
    }


def messages(obj: dict[str, Any]) -> list[str]:
    return [f.message for f in rules.run(from_objects([obj]), Settings()) if f.rule == "env-references"]


def test_a_shell_variable_in_an_env_value_is_literal() -> None:
    env = [{"name": "PATH", "value": "$PATH:/opt/bin"}, {"name": "OK", "value": "$(POD_IP):29500"}]
    assert messages(pod(env=env)) == [
        "pod/main: env PATH=$PATH:/opt/bin reaches the program literally (Kubernetes expands only $(PATH))"
    ]
    assert messages(pod(env=[{"name": "ESCAPED", "value": "$$HOME"}])) == []


def test_a_command_is_expanded_only_by_the_shell_that_runs_it() -> None:
    assert messages(pod(command=["torchrun", "--nnodes", "$NNODES", "train.py"])) == [
        "pod/main: `$NNODES` in the command reaches the program literally; no shell runs it (write $(NNODES), or "
        "run the command with sh -c)"
    ]
    assert messages(pod(command=["/bin/bash", "-c"], args=["torchrun --nnodes $NNODES train.py"])) == []
    assert messages(pod(command=["sh", "-ec", "exec python train.py --rank ${RANK}"])) == []
    assert messages(pod(args=["--data", "$DATA"])) == [], "the image's entrypoint may be a shell"
