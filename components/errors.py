"""Errors a user can cause, each naming the config path, what is wrong and what would be right."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem in a config: where it is and what to do about it."""

    path: str
    message: str
    source: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = (
            f"{self.source}:{self.line}: " if self.source and self.line else (f"{self.source}: " if self.source else "")
        )
        return f"{where}{self.path}: {self.message}" if self.path else f"{where}{self.message}"


class ConfigError(ValueError):
    """A configuration mistake; its message lists every issue found, one per line."""

    def __init__(self, issues: Iterable[Issue] | Issue | str, path: str = "") -> None:
        if isinstance(issues, str):
            issues = [Issue(path, issues)]
        elif isinstance(issues, Issue):
            issues = [issues]
        self.issues: tuple[Issue, ...] = tuple(issues)
        super().__init__("\n".join(str(i) for i in self.issues))

    def located(self, source: str, lines: Mapping[str, int]) -> ConfigError:
        """The same issues, each annotated with the file and the line of its path when known."""
        return ConfigError(Issue(i.path, i.message, source, _line_of(i.path, lines)) for i in self.issues)


def _line_of(path: str, lines: Mapping[str, int]) -> int | None:
    """The line of the longest known prefix of a config path (of the whole config, "", when none is known)."""
    probe = path
    while probe:
        if probe in lines:
            return lines[probe]
        cut = max(probe.rfind("."), probe.rfind("["))
        probe = probe[:cut] if cut > 0 else ""
    return lines.get("")


def join_path(*parts: str | int) -> str:
    """A config path such as `nodePools[1].maxNodes` from its parts."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out = f"{out}.{part}" if out else part
    return out
