"""A container's command line as the rules read it: its words, the shell scripts inside it split into words,
and the flags a launcher (torchrun, mpirun, a training script) is given."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from components.rules.review import once

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def shell_at(words: list[str]) -> int | None:
    """The index of the first script a shell runs (`bash -c SCRIPT`, `sh -ec SCRIPT`) among the words, else None."""
    for n, word in enumerate(words[:-2] if len(words) > 2 else []):
        flag = words[n + 1]
        if _basename(word) in SHELLS and flag.startswith("-") and not flag.startswith("--") and "c" in flag:
            return n + 2
    return None


def split(script: str) -> list[str]:
    """A shell script's words (quotes removed; comments and line continuations dropped); never raises."""
    text = re.sub(r"\\\n", " ", script)
    words: list[str] = []
    for line in text.splitlines():
        try:
            words += shlex.split(line, comments=True)
        except ValueError:  # an unclosed quote: the script spans lines
            words += line.split()
        words.append(";")
    return words


@dataclass(frozen=True, slots=True)
class CommandLine:
    """A container's command and args as words; the words of the shell scripts it runs, split."""

    direct: list[str]
    """Words the container runtime passes as they are (no shell expands them): those before a shell's -c."""
    scripts: list[str]
    """Words of the shell scripts the container runs (a shell expands their variables)."""
    known: bool
    """Whether the command is stated (without it, the image's entrypoint runs the args, unknown here)."""

    @property
    def words(self) -> list[str]:
        """Every word, direct and scripted."""
        return [*self.direct, *self.scripts]


@once  # five rules read every container's
def command_line(container: dict[str, Any]) -> CommandLine:
    """The container's command line (shared within a review: callers must not change it)."""
    command, args = container.get("command") or [], container.get("args") or []
    words = [str(w) for w in (*command, *args)]
    at = shell_at(words)
    if at is None:
        return CommandLine(words, [], bool(command))
    scripts = [w for script in words[at:] for w in split(script)]
    return CommandLine(words[: at - 2], scripts, True)


def flag(words: list[str], *names: str) -> Iterator[str]:
    """The values given to a flag (`--name value`, `--name=value`) among the words, in order."""
    for n, word in enumerate(words):
        for name in names:
            if word == name and n + 1 < len(words):
                yield words[n + 1]
            elif word.startswith(f"{name}="):
                yield word.split("=", 1)[1]


SEPARATORS = frozenset({";", "&&", "||", "|", "&"})


def _names(program: str) -> set[str]:
    names = {program}
    if program == "torchrun":
        names |= {"torch.distributed.run", "torch.distributed.launch"}
    elif program == "mpirun":
        names |= {"mpiexec", "orterun", "prterun"}
    return names


def invocations(words: list[str], program: str) -> list[list[str]]:
    """The words of each run of a program (`torchrun`, also `python -m torch.distributed.run`; `mpirun`), from
    its name to the end of its command."""
    names = _names(program)
    ends = tuple(names)  # a word whose base name is one of them ends with it: most words are ruled out in C
    found: list[list[str]] = []
    for n, word in enumerate(words):
        if word.endswith(ends) and _basename(word) in names:
            end = next((m for m in range(n + 1, len(words)) if words[m] in SEPARATORS), len(words))
            found.append(words[n + 1 : end])
    return found
