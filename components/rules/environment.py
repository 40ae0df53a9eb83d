"""Whether the variables a container's env and command line refer to are expanded: Kubernetes expands only
`$(VAR)`, in env values, command and args; `$VAR` and `${VAR}` reach the program as they are written, unless a
shell (`sh -c`) runs them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from components.rules.commands import command_line
from components.rules.pods import templates
from components.rules.rule import Rule, Settings
from components.rules.subject import Subject

SHELL_REFERENCE = re.compile(r"(?<![$\\])\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
"""`$VAR` or `${VAR}`, not `$(VAR)` (Kubernetes's own) nor `$$VAR` (its escape)."""


def shell_variable(text: str) -> str | None:
    """The first variable a text refers to as a shell does (`$VAR`, `${VAR}`), by name; None when none."""
    found = SHELL_REFERENCE.search(text)
    return found.group(1).strip("{}") if found else None


def env_references(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """Env values, command and args refer to variables as Kubernetes expands them, `$(VAR)`; a shell's `$VAR`
    stays literal where no shell runs."""
    for t in templates(subject.data, subjects):
        for c in t.containers:
            where = f"{t.role}/{c.get('name')}"
            for name, value in t.env(c).items():
                if variable := shell_variable(value):
                    literal = f"{where}: env {name}={value} reaches the program literally"
                    yield f"{literal} (Kubernetes expands only $({variable}))"
            line = command_line(c)
            # Without a command, the image's entrypoint may be a shell that expands its args.
            word = next((w for w in line.direct if shell_variable(w)), None) if line.known else None
            if word is not None:
                yield (
                    f"{where}: `{word}` in the command reaches the program literally; no shell runs it "
                    f"(write $({shell_variable(word)}), or run the command with sh -c)"
                )


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
        gpu_only=False,
    ),
)
