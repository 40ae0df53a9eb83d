"""Whether the variables a container's env and command line refer to are expanded: Kubernetes expands only
`$(VAR)`, in env values, command and args; `$VAR` and `${VAR}` reach the program as they are written, unless a
shell (`sh -c`) runs them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from components.rules.commands import command_line
from components.rules.pods import templates
from components.rules.rule import Rule, Settings, Subject

SHELL_REFERENCE = re.compile(r"(?<![$\\])\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
"""`$VAR` or `${VAR}`, not `$(VAR)` (Kubernetes's own) nor `$$VAR` (its escape)."""


def env_references(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """Env values, command and args refer to variables as Kubernetes expands them, `$(VAR)`; a shell's `$VAR`
    stays literal where no shell runs."""
    for t in templates(subject.data, subjects):
        for c in t.containers:
            where = f"{t.role}/{c.get('name')}"
            for name, value in t.env(c).items():
                found = SHELL_REFERENCE.search(value)
                if found:
                    variable = found.group(1).strip("{}")
                    yield (
                        f"{where}: env {name}={value} reaches the program literally (Kubernetes expands only "
                        f"$({variable}))"
                    )
            line = command_line(c)
            if not line.known:
                continue  # the image's entrypoint may be a shell that expands its args
            for word in line.direct:
                found = SHELL_REFERENCE.search(word)
                if found:
                    variable = found.group(1).strip("{}")
                    yield (
                        f"{where}: `{word}` in the command reaches the program literally; no shell runs it "
                        f"(write $({variable}), or run the command with sh -c)"
                    )
                    break


RULES: tuple[Rule, ...] = (
    Rule(
        "env-references",
        "high",
        "mandatory",
        (env_references.__doc__ or "").strip(),
        "write $(VAR) where Kubernetes should expand a variable (it must be defined earlier in env), or run the "
        "command through sh -c",
        ("*",),
        env_references,
    ),
)
